"""Policy tables of the interpreter: which dunders, names and attributes are
allowed, the operator tables, control-flow signals, and small predicates.
Data only; the interpreter and its handlers import it, it imports none of them."""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable, ItemsView, KeysView, ValuesView
from typing import Any

from memagent.sandbox._modules import REGEX_DENIED, REGEX_METHODS, SEQUENCE_MATCHER_SETTERS
from memagent.sandbox._objects import Internal, SandboxClass
from memagent.sandbox.limits import FinalAnswer, SandboxAbort

_MISSING = object()
MAX_DEFINITIONS = 256


class _Break(BaseException):
    pass


class _Continue(BaseException):
    pass


class _Return(BaseException):
    def __init__(self, value: Any) -> None:
        self.value = value


_CONTROL = (SandboxAbort, FinalAnswer, _Break, _Continue, _Return)


class Flow:
    """What a compiled statement returns to leave its block: `BREAK`,
    `CONTINUE`, or a `return` with its value. Any other return value of a
    statement closure (an expression statement's value) means "go on", so
    callers test `type(r) is Flow`. Loops and calls take flow this way, without
    raising an exception per `return` or `continue`; the exception classes
    above remain for flow that escapes to where it is not allowed."""

    __slots__ = ("kind", "value")

    def __init__(self, kind: int, value: Any = None) -> None:
        self.kind = kind
        self.value = value

    def escape(self) -> BaseException:
        """The exception for this flow outside a loop or function."""
        if self.kind == RETURN:
            return _Return(self.value)
        return _Break() if self.kind == 0 else _Continue()


RETURN = 2
BREAK = Flow(0)
CONTINUE = Flow(1)

BINOPS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
    ast.BitAnd: operator.and_,
    ast.MatMult: operator.matmul,
}
INPLACE: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.iadd,
    ast.Sub: operator.isub,
    ast.Mult: operator.imul,
    ast.Div: operator.itruediv,
    ast.FloorDiv: operator.ifloordiv,
    ast.Mod: operator.imod,
    ast.Pow: operator.ipow,
    ast.LShift: operator.ilshift,
    ast.RShift: operator.irshift,
    ast.BitOr: operator.ior,
    ast.BitXor: operator.ixor,
    ast.BitAnd: operator.iand,
    ast.MatMult: operator.imatmul,
}
BIN_DUNDER: dict[type[ast.operator], str] = {
    ast.Add: "add",
    ast.Sub: "sub",
    ast.Mult: "mul",
    ast.Div: "truediv",
    ast.FloorDiv: "floordiv",
    ast.Mod: "mod",
}
CMPOPS: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
}
CMP_DUNDER: dict[type[ast.cmpop], tuple[str, str]] = {
    ast.Eq: ("__eq__", "__eq__"),
    ast.NotEq: ("__ne__", "__ne__"),
    ast.Lt: ("__lt__", "__gt__"),
    ast.LtE: ("__le__", "__ge__"),
    ast.Gt: ("__gt__", "__lt__"),
    ast.GtE: ("__ge__", "__le__"),
}

# Dunder methods a model class may define; the interpreter calls them itself.
ALLOWED_DUNDERS = frozenset(
    {
        "__init__",
        "__repr__",
        "__str__",
        "__eq__",
        "__ne__",
        "__lt__",
        "__le__",
        "__gt__",
        "__ge__",
        "__len__",
        "__bool__",
        "__getitem__",
        "__setitem__",
        "__delitem__",
        "__contains__",
        "__iter__",
        "__next__",
        "__call__",
        "__enter__",
        "__exit__",
        "__add__",
        "__radd__",
        "__sub__",
        "__rsub__",
        "__mul__",
        "__rmul__",
        "__truediv__",
        "__rtruediv__",
        "__floordiv__",
        "__rfloordiv__",
        "__mod__",
        "__rmod__",
        "__neg__",
        "__pos__",
        "__abs__",
    }
)

# Public attributes that lead to frames, code objects or globals.
_DENIED_ATTR_PREFIXES = ("gi_", "cr_", "ag_", "f_", "tb_", "co_", "func_", "im_")
_DENIED_ATTRS = frozenset({"mro"})
# Methods that get a checked stand-in (see `_builtins.risky_method`), also when
# reached unbound through their type (`str.join(sep, …)`).
_RISKY_NAMES = frozenset(
    {
        "ljust",
        "rjust",
        "center",
        "zfill",
        "replace",
        "expandtabs",
        "translate",
        "join",
        "extend",
        "update",
        "extendleft",
        "format",
        "format_map",
        "to_bytes",
        *REGEX_DENIED,
        *REGEX_METHODS,
        *SEQUENCE_MATCHER_SETTERS,
    }
)

_NESTABLE = (list, tuple, dict)
_LISTLIKE = (list, tuple, set, frozenset, KeysView, ValuesView, ItemsView)
_NAMEDTUPLE_API = frozenset({"_asdict", "_replace", "_fields", "_make", "_field_defaults"})
_BUILTIN_CALLABLE = type(len)
_BIG = 65536
_SIMPLE = frozenset({int, float, str, bool, bytes, type(None), list, tuple, dict, set, frozenset})
# Built-in types whose public methods need no checks beyond `_RISKY_NAMES`.
_UNWRAPPED = frozenset({float, bool, type(None), range, complex})
_FAST_TYPES = frozenset({list, dict, str, set, tuple, int, float, bytes, frozenset, bool})
_CONCRETE = (list, tuple, str, bytes, bytearray, dict, set, frozenset)
_SIZED_STR = (str, bytes, bytearray)
_SIZED_COLL = (list, tuple, dict, set, frozenset)
_FMT_SPEC = re.compile(r"^(?:.?[<>=^])?[+\- ]?z?#?0?(\d*)[,_]?(?:\.(\d+))?[a-zA-Z%]?$", re.S)
_PCT_SPEC = re.compile(r"%(\([^)]*\))?[#0\- +]*(\*|\d+)?(?:\.(\*|\d+))?[hlL]?([a-zA-Z%])")
_FIELD_ATTR = re.compile(r"\.([^.\[]*)")


def _plain_iterator(t: type) -> bool:
    """An iterator type with no public methods of its own (enumerate, map, zip,
    itertools objects, generators): a `Metered` can stand in for it. Iterators
    with an API (regex scanners) are kept as they are."""
    known = _PLAIN_ITERATORS.get(t)
    if known is None:
        known = hasattr(t, "__next__") and all(
            n.startswith("_") or n in _GENERATOR_API for n in dir(t)
        )
        _PLAIN_ITERATORS[t] = known
    return known


_PLAIN_ITERATORS: dict[type, bool] = {}

_GENERATOR_API = frozenset({"send", "throw", "close"})


def is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__") and len(name) > 4


class _Super(Internal):
    __slots__ = ("_owner", "_self")

    def __init__(self, owner: SandboxClass, self_obj: Any) -> None:
        self._owner = owner
        self._self = self_obj
