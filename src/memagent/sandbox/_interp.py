"""The evaluator: walks the AST of the code itself, so every name lookup,
attribute access, call and loop passes through here and is counted.

Model code is never compiled to CPython bytecode. Denials raise `SecurityError`
and exhausted limits `LimitExceeded`; both end the run and no `except` or
`finally` of the code can intercept them.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import math
import operator
import random
import re
import string
import sys
import time
from collections.abc import Callable, ItemsView, Iterator, KeysView, ValuesView
from types import FunctionType, ModuleType
from typing import Any

from memagent.sandbox._builtins import make_builtins, risky_method
from memagent.sandbox._objects import (
    BoundMethod,
    Checked,
    HostCall,
    Internal,
    Metered,
    ModuleProxy,
    SandboxClass,
    SandboxException,
    SandboxFunction,
    SandboxInstance,
    Tool,
)
from memagent.sandbox._scope import FuncInfo, Scope, analyse_function
from memagent.sandbox.limits import (
    FinalAnswer,
    LimitExceeded,
    Limits,
    SandboxAbort,
    SecurityError,
)

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
        "subf",
        "subfn",
        "expandf",
        "scanner",
        *(
            "match",
            "search",
            "fullmatch",
            "findall",
            "finditer",
            "sub",
            "subn",
            "split",
            "splititer",
            "set_seqs",
            "set_seq1",
            "set_seq2",
        ),
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


class Interpreter:
    """One stateful namespace plus the per-run budget."""

    def __init__(
        self,
        limits: Limits,
        tools: dict[str, Callable[..., Any]],
        modules: Callable[[Interpreter, str], ModuleProxy | None],
    ) -> None:
        self.limits = limits
        self._max_ops = limits.max_operations
        self.type_calls: dict[type, Callable[..., Any]] = {}
        self.rng = random.Random()
        self.globals: dict[str, Any] = {}
        self.global_scope = Scope(self.globals, None)
        self.builtins, self.denied_names, self.nowrap = make_builtins(self)
        self.protected = frozenset({"final_answer", "FINAL", "FINAL_VAR"})
        self._bindable: set[str] = set()
        for name, fn in tools.items():
            self.add_tool(name, fn)
        self._modules = modules
        self._module_cache: dict[str, ModuleProxy] = {}
        self._func_info: dict[int, tuple[ast.AST, FuncInfo]] = {}
        self.output: list[str] = []
        self.output_len = 0
        self.output_truncated = False
        self.ops = 0
        self.allocated = 0
        self.iter_nesting = 0
        self.deadline = 0.0
        self.depth = 0
        self.line = 0
        self.handling: list[BaseException] = []
        self.definitions: list[tuple[str, str]] = []
        self._source = ""
        self._stmt: dict[type[ast.AST], Callable[[Any, Scope], None]] = {
            ast.Expr: self._s_expr,
            ast.Assign: self._s_assign,
            ast.AugAssign: self._s_augassign,
            ast.AnnAssign: self._s_annassign,
            ast.If: self._s_if,
            ast.For: self._s_for,
            ast.While: self._s_while,
            ast.Break: self._s_break,
            ast.Continue: self._s_continue,
            ast.Pass: self._s_pass,
            ast.Return: self._s_return,
            ast.FunctionDef: self._s_def,
            ast.ClassDef: self._s_class,
            ast.Try: self._s_try,
            ast.Raise: self._s_raise,
            ast.With: self._s_with,
            ast.Import: self._s_import,
            ast.ImportFrom: self._s_importfrom,
            ast.Delete: self._s_delete,
            ast.Assert: self._s_assert,
            ast.Global: self._s_pass,
            ast.Nonlocal: self._s_pass,
        }
        self._expr: dict[type[ast.AST], Callable[[Any, Scope], Any]] = {
            ast.Constant: self._e_constant,
            ast.Name: self._e_name,
            ast.BinOp: self._e_binop,
            ast.UnaryOp: self._e_unaryop,
            ast.BoolOp: self._e_boolop,
            ast.Compare: self._e_compare,
            ast.Call: self._e_call,
            ast.Attribute: self._e_attribute,
            ast.Subscript: self._e_subscript,
            ast.Slice: self._e_slice,
            ast.List: self._e_list,
            ast.Tuple: self._e_tuple,
            ast.Set: self._e_set,
            ast.Dict: self._e_dict,
            ast.ListComp: self._e_listcomp,
            ast.SetComp: self._e_setcomp,
            ast.DictComp: self._e_dictcomp,
            ast.GeneratorExp: self._e_genexp,
            ast.IfExp: self._e_ifexp,
            ast.Lambda: self._e_lambda,
            ast.JoinedStr: self._e_joinedstr,
            ast.FormattedValue: self._e_formatted,
            ast.NamedExpr: self._e_namedexpr,
            ast.Yield: self._e_yield,
            ast.YieldFrom: self._e_yieldfrom,
            ast.Starred: self._e_starred_bare,
        }

    def add_tool(self, name: str, fn: Callable[..., Any]) -> None:
        if not isinstance(name, str) or not name.isidentifier() or name.startswith("_"):
            raise ValueError(f"invalid tool name {name!r}")
        if name in self.protected:
            raise ValueError(f"a tool named {name!r} is already loaded")
        if name in self.globals:
            raise ValueError(f"the session already has a variable named {name!r}")
        if not callable(fn):
            raise ValueError(f"tool {name!r} is not callable")
        self.builtins[name] = Tool(name, fn)
        self.protected = self.protected | {name}
        self._bindable.discard(name)

    # ------------------------------------------------------------------ budget

    def start_run(self, source: str) -> None:
        self.ops = 0
        self.deadline = time.monotonic() + self.limits.timeout_s
        self.depth = 0
        self.line = 0
        self.output = []
        self.output_len = 0
        self.output_truncated = False
        self.handling = []
        self.allocated = 0
        self.iter_nesting = 0
        self._source = source

    def set_source(self, source: str) -> None:
        """The text the next parsed tree came from (definitions are recorded from it)."""
        self._source = source

    def tick(self) -> None:
        self.ops += 1
        if self.ops > self.limits.max_operations:
            raise LimitExceeded(f"operation limit of {self.limits.max_operations} reached")
        if not self.ops & 1023 and time.monotonic() > self.deadline:
            raise LimitExceeded(f"time limit of {self.limits.timeout_s:g}s reached")

    def remaining_time(self) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise LimitExceeded(f"time limit of {self.limits.timeout_s:g}s reached")
        return left

    def check_size(self, value: Any) -> Any:
        """Check a value the run just made against the size limits, charge it to
        the run's memory budget (whatever its size), and wrap a host iterator so
        whatever pulls from it is metered."""
        t = type(value)
        if t is int:
            bits = value.bit_length()
            if bits > self.limits.max_int_bits:
                raise LimitExceeded(f"int of more than {self.limits.max_int_bits} bits")
            self.account(28 + bits // 8)
        elif t is str or t is bytes or t is bytearray:
            n = len(value)
            if n > self.limits.max_str_len:
                raise LimitExceeded(f"string of more than {self.limits.max_str_len} characters")
            self.account(49 + n)
        elif isinstance(value, _SIZED_COLL):
            n = len(value)
            if n > self.limits.max_collection_len:
                raise LimitExceeded(
                    f"collection of more than {self.limits.max_collection_len} items"
                )
            self.account(56 + n * 8)
        elif t in _UNWRAPPED or isinstance(value, Internal):
            pass
        elif _plain_iterator(t):
            return Metered(self, value)
        return value

    def account(self, size: int) -> None:
        """Charge a large allocation to the run's cumulative budget."""
        self.allocated += size
        if self.allocated > self.limits.max_total_alloc:
            raise LimitExceeded(
                f"memory budget of {self.limits.max_total_alloc} bytes for one run exhausted"
            )

    def need_len(self, n: int, kind: str = "str") -> None:
        if kind == "str":
            if n > self.limits.max_str_len:
                raise LimitExceeded(f"string of {n} characters exceeds {self.limits.max_str_len}")
        elif n > self.limits.max_collection_len:
            raise LimitExceeded(f"collection of {n} items exceeds {self.limits.max_collection_len}")

    def need_bits(self, bits: int | float) -> None:
        if bits > self.limits.max_int_bits:
            raise LimitExceeded(f"int of about {int(bits)} bits exceeds {self.limits.max_int_bits}")

    def text_budget(self, obj: Any) -> None:
        """Refuse to render `obj` as text when its repr would exceed the string limit
        (shared references make `str([big] * n)` enormous from a small object)."""
        self.text_size(obj)

    def account_deep(self, obj: Any) -> None:
        """Charge everything reachable from a freshly built `obj` (`json.loads`) to
        the run's memory budget: nested objects cost as much as top-level ones."""
        size = 0
        stack = [obj]
        nodes = 0
        while stack:
            item = stack.pop()
            t = type(item)
            nodes += 1
            if t is str or t is bytes:
                size += 49 + len(item)
            elif t is dict:
                size += 64 + 100 * len(item)
                stack.extend(item.keys())
                stack.extend(item.values())
            elif t is list or t is tuple:
                size += 56 + 8 * len(item)
                stack.extend(item)
            elif t is int:
                size += 28 + item.bit_length() // 8
            else:
                size += 24
            if not nodes & 1023:
                self.tick()
                self.account(size)
                size = 0
        self.account(size)

    def text_size(self, obj: Any, item_extra: int = 0, escape: bool = False) -> int:
        """About how many characters the text of `obj` has (its repr, or with
        `item_extra` more per element and `escape` for JSON's \\uXXXX escapes);
        past the string limit, the run ends before anything is rendered."""
        limit = self.limits.max_str_len
        total = 0
        stack = [obj]
        seen_containers = 0
        while stack:
            item = stack.pop()
            t = type(item)
            if t is str:
                n = len(item)
                if escape and not (item.isascii() and item.isprintable()):
                    n *= 6
                total += n + 2 + item_extra
            elif t is bytes or t is bytearray:
                total += 4 * len(item) + 3
            elif t is int:
                bits = item.bit_length()
                total += bits // 3 + 2 + item_extra
                if bits > 14_000:
                    str(item)  # past the int-to-str digit limit: CPython's ValueError, here
            elif isinstance(item, dict):
                total += 2 + (4 + 2 * item_extra) * len(item)
                stack.extend(item.keys())
                stack.extend(item.values())
                seen_containers += 1
            elif isinstance(item, _LISTLIKE) or type(item).__name__ == "deque":
                total += 2 + (2 + item_extra) * len(item)
                stack.extend(item)
                seen_containers += 1
            elif isinstance(item, functools.partial):
                total += 40
                stack.append(item.func)
                stack.extend(item.args)
                stack.extend(item.keywords.values())
                seen_containers += 1
            elif isinstance(item, slice):
                stack.extend((item.start, item.stop, item.step))
            elif isinstance(item, BaseException):
                total += 40
                stack.extend(item.args)
                seen_containers += 1
            else:
                total += 40 + item_extra
            if total > limit:
                raise LimitExceeded(f"text of more than {limit} characters")
            if seen_containers & 1023 == 1023:
                self.tick()
        return total

    # ------------------------------------------------------------------ entry

    def exec_module(self, tree: ast.Module) -> Any:
        """Run a parsed module; returns the value of a final expression statement."""
        body = tree.body
        result = None
        scope = self.global_scope
        for i, stmt in enumerate(body):
            self.line = stmt.lineno
            if i == len(body) - 1 and isinstance(stmt, ast.Expr):
                self.tick()
                result = self.ev(stmt.value, scope)
            else:
                self.exec_stmt(stmt, scope)
                if isinstance(stmt, (ast.FunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)):
                    self._record_definition(stmt)
        return result

    def _record_definition(self, stmt: ast.stmt) -> None:
        src = ast.get_source_segment(self._source, stmt, padded=False)
        if src is None:
            return
        if isinstance(stmt, (ast.FunctionDef, ast.ClassDef)):
            lines = [ast.get_source_segment(self._source, d) or "" for d in stmt.decorator_list]
            src = "".join(f"@{d}\n" for d in lines) + src
            names = [stmt.name]
        else:
            assert isinstance(stmt, (ast.Import, ast.ImportFrom))
            names = [(a.asname or a.name).split(".")[0] for a in stmt.names]
        key = ",".join(names)
        kept = [(k, s) for k, s in self.definitions if k != key]
        if len(kept) >= MAX_DEFINITIONS:
            raise LimitExceeded(f"a session keeps at most {MAX_DEFINITIONS} top-level definitions")
        self.definitions = kept
        self.definitions.append((key, src))

    def exec_block(self, body: list[ast.stmt], scope: Scope) -> None:
        for stmt in body:
            self.exec_stmt(stmt, scope)

    def exec_stmt(self, stmt: ast.stmt, scope: Scope) -> None:
        self.line = stmt.lineno
        self.ops = ops = self.ops + 1
        if ops >= self._max_ops or not ops & 1023:
            self.ops -= 1
            self.tick()
        try:
            handler = self._stmt[stmt.__class__]
        except KeyError:
            raise SyntaxError(
                f"{type(stmt).__name__} statements are not supported in the sandbox"
            ) from None
        handler(stmt, scope)

    def ev(self, node: ast.expr, scope: Scope) -> Any:
        self.ops = ops = self.ops + 1
        if ops >= self._max_ops or not ops & 1023:
            self.ops -= 1
            self.tick()
        cls = node.__class__
        if cls is ast.Name:
            return self.load(node.id, scope)  # type: ignore[attr-defined]
        if cls is ast.Constant:
            return node.value  # type: ignore[attr-defined]
        try:
            handler = self._expr[cls]
        except KeyError:
            raise SyntaxError(
                f"{cls.__name__} expressions are not supported in the sandbox"
            ) from None
        return handler(node, scope)

    # ------------------------------------------------------------------ names

    def load(self, name: str, scope: Scope) -> Any:
        s: Scope | None = scope
        while s is not None:
            value = s.vars.get(name, _MISSING)
            if value is not _MISSING:
                return value
            if name in s.local_names:
                raise UnboundLocalError(
                    f"cannot access local variable '{name}' where it is not associated with a value"
                )
            if name in s.globals_:
                s = self.global_scope
                continue
            s = s.parent
        value = self.builtins.get(name, _MISSING)
        if value is not _MISSING:
            return value
        if is_dunder(name):
            raise SecurityError(f"access to '{name}' is not allowed")
        if name in self.denied_names:
            raise SecurityError(f"'{name}' is not available in the sandbox")
        raise NameError(f"name '{name}' is not defined")

    def check_bind(self, name: str) -> None:
        if name in self._bindable:
            return
        if is_dunder(name):
            raise SecurityError(f"binding the name '{name}' is not allowed")
        if name in self.protected:
            raise SecurityError(f"'{name}' is a tool and cannot be rebound")
        self._bindable.add(name)

    def store(self, name: str, value: Any, scope: Scope) -> None:
        self.check_bind(name)
        if scope.is_comp:
            scope.vars[name] = value
            return
        if name in scope.globals_:
            self.globals[name] = value
        elif name in scope.nonlocals:
            s = scope.parent
            while s is not None and s is not self.global_scope:
                if name in s.vars or name in s.local_names:
                    s.vars[name] = value
                    return
                s = s.parent
            raise SyntaxError(f"no binding for nonlocal '{name}' found")
        else:
            scope.vars[name] = value

    def delete_name(self, name: str, scope: Scope) -> None:
        self.check_bind(name)
        target = self.globals if name in scope.globals_ else scope.vars
        if name not in target:
            raise NameError(f"name '{name}' is not defined")
        del target[name]

    # ------------------------------------------------------------------ attributes

    def getattr(self, obj: Any, name: str) -> Any:
        if type(obj) in _FAST_TYPES and name[:1] != "_" and name not in _RISKY_NAMES:
            return getattr(obj, name)
        if not isinstance(name, str):
            raise TypeError("attribute name must be string")
        if isinstance(obj, Internal):
            return self._internal_getattr(obj, name)
        if isinstance(obj, SandboxException) and obj._sandbox_cls is not None:
            if is_dunder(name):
                raise SecurityError(f"access to dunder attribute '{name}' is not allowed")
            if name in obj._sandbox_attrs:
                return obj._sandbox_attrs[name]
            found, value = obj._sandbox_cls.lookup(name)
            if found:
                return self._bind(value, obj, obj._sandbox_cls)
            if name == "args":
                return obj.args
            raise AttributeError(f"'{obj._sandbox_cls._name}' object has no attribute '{name}'")
        if name in _NAMEDTUPLE_API and (
            isinstance(obj, tuple) or (isinstance(obj, type) and issubclass(obj, tuple))
        ):
            return getattr(obj, name)
        if name.startswith("_"):
            what = "dunder" if is_dunder(name) else "private"
            raise SecurityError(f"access to {what} attribute '{name}' is not allowed")
        if name in _DENIED_ATTRS or name.startswith(_DENIED_ATTR_PREFIXES):
            raise SecurityError(f"access to attribute '{name}' is not allowed")
        if isinstance(obj, ModuleType):
            raise SecurityError("access to modules is not allowed")
        special = risky_method(self, obj, name)
        if special is not None:
            return special
        if isinstance(obj, type) and name in _RISKY_NAMES:
            return self._unbound_checked(obj, name)
        value = getattr(obj, name)
        if isinstance(value, ModuleType):
            raise SecurityError(f"attribute '{name}' leads to a module; not allowed")
        if isinstance(value, type) and issubclass(value, type):
            raise SecurityError(f"attribute '{name}' leads to a metaclass; not allowed")
        return value

    def _unbound_checked(self, cls: type, name: str) -> Checked:
        getattr(cls, name)  # AttributeError as usual when the type has no such method

        def unbound(self_obj: Any, *args: Any, **kwargs: Any) -> Any:
            if not isinstance(self_obj, cls):
                raise TypeError(f"descriptor '{name}' requires a '{cls.__name__}' object")
            return self.call(self.getattr(self_obj, name), args, kwargs)

        return Checked(f"{cls.__name__}.{name}", unbound, None)

    @staticmethod
    def _classmethod(value: classmethod[Any, Any, Any], cls: SandboxClass) -> BoundMethod:
        func = value.__func__
        if not isinstance(func, SandboxFunction):
            raise TypeError("classmethod must wrap a function defined in the sandbox")
        return BoundMethod(func, cls)

    def _bind(self, value: Any, obj: Any, cls: SandboxClass) -> Any:
        if isinstance(value, SandboxFunction):
            return BoundMethod(value, obj)
        if isinstance(value, staticmethod):
            return value.__func__
        if isinstance(value, classmethod):
            return self._classmethod(value, cls)
        if isinstance(value, property):
            if value.fget is None:
                raise AttributeError("unreadable property")
            return self.call(value.fget, (obj,), {})
        return value

    def _internal_getattr(self, obj: Internal, name: str) -> Any:
        if isinstance(obj, _Super):
            if is_dunder(name) and name not in ALLOWED_DUNDERS:
                raise SecurityError(f"access to dunder attribute '{name}' is not allowed")
            for base in obj._owner._bases:
                found, value = base.lookup(name)
                if found:
                    return self._bind(value, obj._self, base)
            if name == "__init__":
                self_obj = obj._self

                def base_init(*args: Any) -> None:
                    if isinstance(self_obj, BaseException):
                        self_obj.args = args

                return Tool("__init__", base_init)
            raise AttributeError(f"'super' object has no attribute '{name}'")
        if is_dunder(name):
            raise SecurityError(f"access to dunder attribute '{name}' is not allowed")
        if isinstance(obj, SandboxInstance):
            if name in obj._attrs:
                return obj._attrs[name]
            found, value = obj._cls.lookup(name)
            if found:
                return self._bind(value, obj, obj._cls)
            raise AttributeError(f"'{obj._cls._name}' object has no attribute '{name}'")
        if isinstance(obj, SandboxClass):
            found, value = obj.lookup(name)
            if found:
                if isinstance(value, staticmethod):
                    return value.__func__
                if isinstance(value, classmethod):
                    return self._classmethod(value, obj)
                return value
            raise AttributeError(f"type object '{obj._name}' has no attribute '{name}'")
        if isinstance(obj, ModuleProxy):
            if name.startswith("_") or name not in obj._members:
                raise SecurityError(
                    f"module '{obj._name}' has no attribute '{name}' available in the sandbox"
                )
            return obj._members[name]
        raise SecurityError(f"attributes of {obj!r} are not accessible")

    def setattr(self, obj: Any, name: str, value: Any) -> None:
        if not isinstance(name, str):
            raise TypeError("attribute name must be string")
        if is_dunder(name):
            raise SecurityError(f"setting dunder attribute '{name}' is not allowed")
        if isinstance(obj, (SandboxInstance, SandboxClass)):
            obj._attrs[name] = value
        elif isinstance(obj, SandboxException) and obj._sandbox_cls is not None:
            obj._sandbox_attrs[name] = value
        else:
            raise SecurityError(f"cannot set attributes on {type(obj).__name__} objects")

    def delattr(self, obj: Any, name: str) -> None:
        if is_dunder(name):
            raise SecurityError(f"deleting dunder attribute '{name}' is not allowed")
        store: dict[str, Any] | None = None
        if isinstance(obj, (SandboxInstance, SandboxClass)):
            store = obj._attrs
        elif isinstance(obj, SandboxException) and obj._sandbox_cls is not None:
            store = obj._sandbox_attrs
        if store is None:
            raise SecurityError(f"cannot delete attributes of {type(obj).__name__} objects")
        if name not in store:
            raise AttributeError(name)
        del store[name]

    # ------------------------------------------------------------------ model dunders

    def dunder(self, obj: Any, name: str) -> Any:
        """The model-defined method `name` of `obj`, bound, or None."""
        if isinstance(obj, SandboxInstance):
            found, value = obj._cls.lookup(name)
            if found and isinstance(value, SandboxFunction):
                return BoundMethod(value, obj)
        return None

    def to_str(self, obj: Any) -> str:
        if isinstance(obj, SandboxInstance):
            m = self.dunder(obj, "__str__") or self.dunder(obj, "__repr__")
            if m is not None:
                out = self.call(m, (), {})
                if not isinstance(out, str):
                    raise TypeError("__str__ returned non-string")
                return out
            return repr(obj)
        t = type(obj)
        if t is str:
            return obj
        if t is float or t is bool or (t is int and obj.bit_length() < 4096):
            return str(obj)
        self.text_budget(obj)
        return str(obj)

    def to_repr(self, obj: Any) -> str:
        if isinstance(obj, SandboxInstance):
            m = self.dunder(obj, "__repr__")
            if m is not None:
                out = self.call(m, (), {})
                if not isinstance(out, str):
                    raise TypeError("__repr__ returned non-string")
                return out
            return repr(obj)
        self.text_budget(obj)
        return repr(obj)

    def truth(self, value: Any) -> bool:
        if isinstance(value, SandboxInstance):
            m = self.dunder(value, "__bool__")
            if m is not None:
                return bool(self.call(m, (), {}))
            m = self.dunder(value, "__len__")
            if m is not None:
                return bool(self.call(m, (), {}))
            return True
        return bool(value)

    def iterate(self, obj: Any) -> Iterator[Any]:
        if isinstance(obj, SandboxInstance):
            m = self.dunder(obj, "__iter__")
            if m is None:
                m2 = self.dunder(obj, "__getitem__")
                if m2 is None:
                    raise TypeError(f"'{obj._cls._name}' object is not iterable")
                return self._getitem_iter(m2)
            it = self.call(m, (), {})
            if isinstance(it, SandboxInstance):
                return self._model_iter(it)
            return iter(it)
        return iter(obj)

    def _model_iter(self, it: SandboxInstance) -> Iterator[Any]:
        nxt = self.dunder(it, "__next__")
        if nxt is None:
            raise TypeError("iter() returned non-iterator")
        while True:
            try:
                yield self.call(nxt, (), {})
            except StopIteration:
                return

    def _getitem_iter(self, getitem: Any) -> Iterator[Any]:
        i = 0
        while True:
            try:
                yield self.call(getitem, (i,), {})
            except IndexError:
                return
            i += 1

    def metered(self, obj: Any) -> Iterator[Any]:
        if isinstance(obj, Metered):
            return obj
        return Metered(self, self.iterate(obj))

    # ------------------------------------------------------------------ operators

    def binop(self, op: type[ast.operator], a: Any, b: Any, inplace: bool = False) -> Any:
        ta, tb = type(a), type(b)
        if ta is int and tb is int:
            if op is ast.Pow:
                if b > 0 and abs(a) > 1:
                    self.need_bits(b * math.log2(abs(a)))
            elif op is ast.LShift:
                if b > 0:
                    self.need_bits(a.bit_length() + b)
            elif op is ast.Mult:
                self.need_bits(a.bit_length() + b.bit_length())
            return BINOPS[op](a, b)
        if ta is float or tb is float:
            return BINOPS[op](a, b)
        if ta is str and tb is str and op is ast.Add:
            self.need_len(len(a) + len(b))
            return self.check_size(a + b)
        if isinstance(a, SandboxInstance) or isinstance(b, SandboxInstance):
            name = BIN_DUNDER.get(op)
            if name is not None:
                m = self.dunder(a, f"__{name}__")
                if m is not None:
                    return self.call(m, (b,), {})
                m = self.dunder(b, f"__r{name}__")
                if m is not None:
                    return self.call(m, (a,), {})
            raise TypeError(
                f"unsupported operand type(s) for {op.__name__}: "
                f"'{self.type_name(a)}' and '{self.type_name(b)}'"
            )
        if op is ast.Mult:
            self._check_repeat(a, b)
            self._check_repeat(b, a)
        elif op is ast.Add:
            if isinstance(a, _SIZED_STR) and isinstance(b, _SIZED_STR):
                self.need_len(len(a) + len(b))
            elif isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
                self.need_len(len(a) + len(b), "coll")
        elif op is ast.Mod and isinstance(a, (str, bytes)):
            return self.check_size(self.percent_format(a, b))
        elif op is ast.Pow and isinstance(a, int) and isinstance(b, int):
            if b > 0 and abs(a) > 1:
                self.need_bits(b * math.log2(abs(a)))
        elif op is ast.LShift and isinstance(a, int) and isinstance(b, int) and b > 0:
            self.need_bits(a.bit_length() + b)
        fn = INPLACE[op] if inplace else BINOPS[op]
        return self.check_size(fn(a, b))

    def _check_repeat(self, seq: Any, n: Any) -> None:
        if (
            isinstance(n, int)
            and not isinstance(seq, (int, float, complex))
            and hasattr(seq, "__len__")
        ):
            if isinstance(seq, SandboxInstance):
                return
            total = len(seq) * n
            self.need_len(total, "str" if isinstance(seq, _SIZED_STR) else "coll")
        elif isinstance(n, int) and isinstance(seq, int):
            self.need_bits(seq.bit_length() + n.bit_length())

    def check_format_spec(self, spec: str) -> None:
        if not spec:
            return
        m = _FMT_SPEC.match(spec)
        if m is None:
            return  # datetime-style specs: output length follows the spec's own length
        for group in m.groups():
            if group and int(group) > self.limits.max_str_len:
                raise LimitExceeded(f"format width {group} exceeds {self.limits.max_str_len}")

    def percent_format(self, fmt: str | bytes, args: Any) -> Any:
        text = fmt.decode("latin-1") if isinstance(fmt, bytes) else fmt
        for m in _PCT_SPEC.finditer(text):
            key, width, prec, _conv = m.groups()
            if key and ("__" in key or key[1:2] == "_"):
                raise SecurityError(f"format key {key} is not allowed")
            for g in (width, prec):
                if g == "*":
                    raise SecurityError("'*' width in % formatting is not supported")
                if g and int(g) > self.limits.max_str_len:
                    raise LimitExceeded(f"format width {g} exceeds {self.limits.max_str_len}")
        if isinstance(args, SandboxInstance):
            args = (self.to_str(args),)
        self.text_budget(args)
        return fmt % args

    def deep_items(self, obj: Any, budget: int) -> int:
        """Items reachable in a container (shared references counted each time),
        stopping once `budget` is passed: the worst-case cost of comparing it."""
        total = 0
        stack = [obj]
        while stack and total <= budget:
            item = stack.pop()
            if isinstance(item, (list, tuple)):
                total += len(item)
                stack.extend(x for x in item if isinstance(x, _NESTABLE))
            elif isinstance(item, dict):
                total += len(item)
                stack.extend(v for v in item.values() if isinstance(v, _NESTABLE))
            else:
                total += 1
        return total

    def charge_compare(self, a: Any, b: Any, times: int = 1) -> None:
        """Charge the operation budget for comparing two containers in C, before
        doing it (comparing `[x] * n` with an equal copy costs n * len(x))."""
        budget = self.limits.max_operations - self.ops
        cost = min(self.deep_items(a, budget), self.deep_items(b, budget)) * times
        if cost > 256:
            self.ops += cost
            if self.ops > self.limits.max_operations:
                raise LimitExceeded(
                    f"operation limit of {self.limits.max_operations} reached (comparison)"
                )

    def compare(self, op: type[ast.cmpop], a: Any, b: Any) -> Any:
        if (
            isinstance(a, _NESTABLE)
            and isinstance(b, _NESTABLE)
            and op in CMPOPS
            and op is not ast.Is
            and op is not ast.IsNot
        ):
            self.charge_compare(a, b)
        if op is ast.In or op is ast.NotIn:
            found = self.contains(b, a)
            return found if op is ast.In else not found
        if (isinstance(a, SandboxInstance) or isinstance(b, SandboxInstance)) and op in CMP_DUNDER:
            name, reflected = CMP_DUNDER[op]
            m = self.dunder(a, name)
            if m is not None:
                return self.call(m, (b,), {})
            m = self.dunder(b, reflected)
            if m is not None:
                return self.call(m, (a,), {})
            if op is ast.NotEq:
                m = self.dunder(a, "__eq__")
                if m is not None:
                    return not self.truth(self.call(m, (b,), {}))
        return CMPOPS[op](a, b)

    def contains(self, container: Any, item: Any) -> bool:
        if isinstance(item, _NESTABLE) and isinstance(container, (list, tuple)) and container:
            self.charge_compare(item, item, len(container))
        if isinstance(item, SandboxInstance) and isinstance(container, (list, tuple)):
            return any(x is item or self.truth(self.compare(ast.Eq, x, item)) for x in container)
        if isinstance(container, (list, tuple, str, bytes, bytearray, dict, set, frozenset)):
            return item in container
        if isinstance(container, range) and type(item) is int:
            return item in container
        if isinstance(container, SandboxInstance):
            m = self.dunder(container, "__contains__")
            if m is not None:
                return self.truth(self.call(m, (item,), {}))
        if isinstance(container, dict):
            return item in container
        for x in self.metered(container):
            if x is item or self.truth(self.compare(ast.Eq, x, item)):
                return True
        return False

    @staticmethod
    def type_name(obj: Any) -> str:
        if isinstance(obj, SandboxInstance):
            return obj._cls._name
        return type(obj).__name__

    # ------------------------------------------------------------------ calls

    def call(self, func: Any, args: tuple[Any, ...] | list[Any], kwargs: dict[str, Any]) -> Any:
        t = type(func)
        if t is _BUILTIN_CALLABLE or t is FunctionType:
            # host builtins / bound methods of values, and the interpreter's own builtins
            if id(func) not in self.nowrap:
                if args:
                    args = [a if type(a) in _SIMPLE else self._wrap_arg(a) for a in args]
                if kwargs:
                    kwargs = self._wrap_kwargs(kwargs)
            return self.check_size(func(*args, **kwargs))
        if t is SandboxFunction:
            return self.call_function(func, None, args, kwargs)
        if t is BoundMethod:
            return self.call_function(func._func, func._self, args, kwargs)
        if t is SandboxClass:
            return self.instantiate(func, args, kwargs)
        if t is SandboxInstance:
            m = self.dunder(func, "__call__")
            if m is None:
                raise TypeError(f"'{func._cls._name}' object is not callable")
            return self.call(m, args, kwargs)
        if t is HostCall:
            return func(*args, **kwargs)
        if t is type:
            if func is type or issubclass(func, type):
                raise SecurityError("creating types is not allowed")
            special = self.type_calls.get(func)
            if special is not None:
                args = [a if type(a) in _SIMPLE else self._wrap_arg(a) for a in args]
                if kwargs:
                    kwargs = self._wrap_kwargs(kwargs)
                return self.check_size(special(*args, **kwargs))
        elif isinstance(func, type) and issubclass(func, type):
            raise SecurityError("creating types is not allowed")
        if not callable(func):
            raise TypeError(f"'{type(func).__name__}' object is not callable")
        # types and module functions: containers may carry iterables they consume
        args = [self._wrap_nested(a) if type(a) in _NESTABLE else self._wrap_arg(a) for a in args]
        if kwargs:
            kwargs = {
                k: self._wrap_nested(v) if type(v) in _NESTABLE else self._wrap_arg(v)
                for k, v in kwargs.items()
            }
        return self.check_size(func(*args, **kwargs))

    def _wrap_kwargs(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        return {k: v if type(v) in _SIMPLE else self._wrap_arg(v) for k, v in kwargs.items()}

    def _wrap_nested(self, a: Any) -> Any:
        """A list/tuple/dict argument whose items include an iterable or a callable
        host code could run unmetered: a copy with those items wrapped."""
        values = a.values() if type(a) is dict else a
        if len(values) > 4096:
            self.tick()
        if set(map(type, values)) <= _SIMPLE:
            return a
        wrap = self._wrap_arg
        if type(a) is dict:
            return {k: wrap(v) for k, v in a.items()}
        return type(a)(wrap(v) for v in a)

    def _wrap_arg(self, a: Any) -> Any:
        t = type(a)
        if t in _CONCRETE or t is int or t is float or t is bool or a is None:
            return a
        if t is range:
            return Metered(self, a) if len(a) > 10_000 else a
        if t is Metered or t is HostCall or t is SandboxFunction or t is BoundMethod:
            return a
        if isinstance(a, Internal):
            if isinstance(a, SandboxInstance) and self.dunder(a, "__iter__") is not None:
                return Metered(self, self.iterate(a))
            if t is SandboxClass or t is ModuleProxy or t is SandboxInstance:
                return a
            return HostCall(self, a) if callable(a) else a
        if hasattr(t, "__next__"):
            return Metered(self, a)
        if callable(a) and not (isinstance(a, type) and issubclass(a, BaseException)):
            return HostCall(self, a)
        return a

    def func_info(self, node: ast.FunctionDef | ast.Lambda) -> FuncInfo:
        cached = self._func_info.get(id(node))
        if cached is not None and cached[0] is node:
            return cached[1]
        info = analyse_function(node)
        self._func_info[id(node)] = (node, info)
        return info

    def call_function(
        self,
        func: SandboxFunction,
        self_obj: Any,
        args: tuple[Any, ...] | list[Any],
        kwargs: dict[str, Any],
    ) -> Any:
        if self.depth >= self.limits.max_recursion:
            raise LimitExceeded(f"recursion depth of {self.limits.max_recursion} reached")
        self.tick()
        node = func._node
        info = self.func_info(node)
        scope = Scope({}, func._scope, info.local_names, info.globals_, info.nonlocals)
        if self_obj is not None:
            args = (self_obj, *args)
        self._bind_args(func, scope.vars, args, kwargs)
        first = node.args.posonlyargs + node.args.args
        scope.self_obj = scope.vars.get(first[0].arg) if first else None
        scope.owner = func._owner
        self.depth += 1
        try:
            if isinstance(node, ast.Lambda):
                return self.ev(node.body, scope)
            if func._is_generator:
                scope.sink = []
                with contextlib.suppress(_Return):
                    self.exec_block(node.body, scope)
                return Metered(self, iter(scope.sink))
            try:
                self.exec_block(node.body, scope)
            except _Return as r:
                return r.value
            return None
        finally:
            self.depth -= 1

    def _bind_args(
        self, func: SandboxFunction, out: dict[str, Any], args: Any, kwargs: dict[str, Any]
    ) -> None:
        a = func._node.args
        name = func._name
        positional = [p.arg for p in (*a.posonlyargs, *a.args)]
        if len(args) > len(positional) and a.vararg is None:
            raise TypeError(
                f"{name}() takes {len(positional)} positional arguments but {len(args)} were given"
            )
        for pname, value in zip(positional, args, strict=False):
            out[pname] = value
        if a.vararg is not None:
            out[a.vararg.arg] = tuple(args[len(positional) :])
        extra: dict[str, Any] = {}
        posonly = {p.arg for p in a.posonlyargs}
        kwonly = [p.arg for p in a.kwonlyargs]
        for key, value in kwargs.items():
            if key in out and key in positional[: len(args)]:
                raise TypeError(f"{name}() got multiple values for argument '{key}'")
            if (key in positional and key not in posonly) or key in kwonly:
                out[key] = value
            elif a.kwarg is not None:
                extra[key] = value
            else:
                raise TypeError(f"{name}() got an unexpected keyword argument '{key}'")
        defaults = func._defaults
        first_default = len(positional) - len(defaults)
        for i, pname in enumerate(positional):
            if pname not in out:
                if i >= first_default:
                    out[pname] = defaults[i - first_default]
                else:
                    raise TypeError(f"{name}() missing required positional argument: '{pname}'")
        for pname, default in zip(kwonly, func._kw_defaults, strict=True):
            if pname not in out:
                if default is _MISSING:
                    raise TypeError(f"{name}() missing required keyword-only argument: '{pname}'")
                out[pname] = default
        if a.kwarg is not None:
            out[a.kwarg.arg] = extra

    def instantiate(self, cls: SandboxClass, args: Any, kwargs: dict[str, Any]) -> Any:
        self.tick()
        obj: Any
        obj = cls._exc_type(*args) if cls._exc_type is not None else SandboxInstance(cls)
        found, init = cls.lookup("__init__")
        if found and isinstance(init, SandboxFunction):
            result = self.call_function(init, obj, args, kwargs)
            if result is not None:
                raise TypeError("__init__() should return None")
        elif (args or kwargs) and cls._exc_type is None:
            raise TypeError(f"{cls._name}() takes no arguments")
        return obj

    def make_function(self, node: ast.FunctionDef | ast.Lambda, scope: Scope) -> SandboxFunction:
        a = node.args
        for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg):
            if arg is not None:
                self.check_bind(arg.arg)
        defaults = [self.ev(d, scope) for d in a.defaults]
        kw_defaults = [_MISSING if d is None else self.ev(d, scope) for d in a.kw_defaults]
        info = self.func_info(node)
        parent = scope.parent if scope.is_class and scope.parent is not None else scope
        return SandboxFunction(
            self, node, parent, defaults, kw_defaults, info.local_names, info.is_generator
        )

    # ------------------------------------------------------------------ assignment

    def assign(self, target: ast.expr, value: Any, scope: Scope) -> None:
        t = type(target)
        if t is ast.Name:
            self.store(target.id, value, scope)  # type: ignore[attr-defined]
        elif t is ast.Tuple or t is ast.List:
            self._unpack(target.elts, value, scope)  # type: ignore[attr-defined]
        elif t is ast.Subscript:
            obj = self.ev(target.value, scope)  # type: ignore[attr-defined]
            key = self.ev(target.slice, scope)  # type: ignore[attr-defined]
            self.setitem(obj, key, value)
        elif t is ast.Attribute:
            obj = self.ev(target.value, scope)  # type: ignore[attr-defined]
            self.setattr(obj, target.attr, value)  # type: ignore[attr-defined]
        elif t is ast.Starred:
            raise SyntaxError("starred assignment target must be in a list or tuple")
        else:
            raise SyntaxError(f"cannot assign to {t.__name__}")

    def _unpack(self, elts: list[ast.expr], value: Any, scope: Scope) -> None:
        star = [i for i, e in enumerate(elts) if isinstance(e, ast.Starred)]
        if len(star) > 1:
            raise SyntaxError("multiple starred expressions in assignment")
        if not star:
            it = self.iterate(value)
            items = []
            for x in it:
                self.tick()
                items.append(x)
                if len(items) > len(elts):
                    raise ValueError(f"too many values to unpack (expected {len(elts)})")
            if len(items) < len(elts):
                raise ValueError(
                    f"not enough values to unpack (expected {len(elts)}, got {len(items)})"
                )
            for e, x in zip(elts, items, strict=True):
                self.assign(e, x, scope)
            return
        items = self.collect(value)
        s = star[0]
        after = len(elts) - s - 1
        if len(items) < len(elts) - 1:
            raise ValueError(
                f"not enough values to unpack (expected at least {len(elts) - 1}, got {len(items)})"
            )
        for e, x in zip(elts[:s], items[:s], strict=True):
            self.assign(e, x, scope)
        starred = elts[s]
        assert isinstance(starred, ast.Starred)
        self.assign(starred.value, items[s : len(items) - after], scope)
        for e, x in zip(elts[s + 1 :], items[len(items) - after :], strict=True):
            self.assign(e, x, scope)

    def collect(self, value: Any) -> list[Any]:
        """Materialise an iterable into a list, metered and size-checked."""
        if isinstance(value, (list, tuple, str, bytes, dict, set, frozenset)):
            return list(value)
        out: list[Any] = []
        limit = self.limits.max_collection_len
        for x in self.iterate(value):
            self.tick()
            out.append(x)
            if len(out) > limit:
                raise LimitExceeded(f"collection of more than {limit} items")
        return out

    def getitem(self, obj: Any, key: Any) -> Any:
        if type(obj) in _FAST_TYPES:
            return obj[key]
        if isinstance(obj, SandboxInstance):
            m = self.dunder(obj, "__getitem__")
            if m is None:
                raise TypeError(f"'{obj._cls._name}' object is not subscriptable")
            return self.call(m, (key,), {})
        if isinstance(obj, (Internal, type)) and not isinstance(obj, SandboxClass):
            if obj in (list, dict, tuple, set, frozenset):
                return obj[key]
            raise SecurityError(f"subscripting {type(obj).__name__} is not allowed")
        return obj[key]

    def setitem(self, obj: Any, key: Any, value: Any) -> None:
        if isinstance(obj, SandboxInstance):
            m = self.dunder(obj, "__setitem__")
            if m is None:
                raise TypeError(f"'{obj._cls._name}' object does not support item assignment")
            self.call(m, (key, value), {})
            return
        if isinstance(obj, (Internal, type)):
            raise SecurityError(f"item assignment on {type(obj).__name__} is not allowed")
        if isinstance(key, slice) and isinstance(obj, (list, bytearray)):
            value = self.collect(value) if isinstance(obj, list) else value
            self.need_len(len(obj) + len(value), "coll")
        obj[key] = value

    # ------------------------------------------------------------------ statements

    def _s_expr(self, node: ast.Expr, scope: Scope) -> None:
        self.ev(node.value, scope)

    def _s_assign(self, node: ast.Assign, scope: Scope) -> None:
        value = self.ev(node.value, scope)
        for target in node.targets:
            self.assign(target, value, scope)

    def _s_annassign(self, node: ast.AnnAssign, scope: Scope) -> None:
        if node.value is not None:
            self.assign(node.target, self.ev(node.value, scope), scope)

    def _s_augassign(self, node: ast.AugAssign, scope: Scope) -> None:
        target = node.target
        op = type(node.op)
        if isinstance(target, ast.Name):
            current = self.load(target.id, scope)
            self.store(target.id, self.binop(op, current, self.ev(node.value, scope), True), scope)
        elif isinstance(target, ast.Subscript):
            obj = self.ev(target.value, scope)
            key = self.ev(target.slice, scope)
            current = self.getitem(obj, key)
            self.setitem(obj, key, self.binop(op, current, self.ev(node.value, scope), True))
        elif isinstance(target, ast.Attribute):
            obj = self.ev(target.value, scope)
            current = self.getattr(obj, target.attr)
            self.setattr(
                obj, target.attr, self.binop(op, current, self.ev(node.value, scope), True)
            )
        else:
            raise SyntaxError("illegal expression for augmented assignment")

    def _s_if(self, node: ast.If, scope: Scope) -> None:
        if self.truth(self.ev(node.test, scope)):
            self.exec_block(node.body, scope)
        else:
            self.exec_block(node.orelse, scope)

    def _s_for(self, node: ast.For, scope: Scope) -> None:
        iterable = self.ev(node.iter, scope)
        target = node.target
        body = node.body
        simple = target.id if isinstance(target, ast.Name) else None
        if simple is not None:
            self.check_bind(simple)
            if scope.globals_ or scope.nonlocals or scope.is_comp:
                simple = None
        exec_stmt = self.exec_stmt
        max_ops = self._max_ops
        variables = scope.vars
        for item in self.iterate(iterable):
            self.ops = ops = self.ops + 1
            if ops >= max_ops or not ops & 1023:
                self.ops -= 1
                self.tick()
            if simple is not None:
                variables[simple] = item
            else:
                self.assign(target, item, scope)
            try:
                for stmt in body:
                    exec_stmt(stmt, scope)
            except _Break:
                return
            except _Continue:
                continue
        self.exec_block(node.orelse, scope)

    def _s_while(self, node: ast.While, scope: Scope) -> None:
        while self.truth(self.ev(node.test, scope)):
            try:
                for stmt in node.body:
                    self.exec_stmt(stmt, scope)
            except _Break:
                return
            except _Continue:
                continue
        self.exec_block(node.orelse, scope)

    def _s_break(self, node: ast.Break, scope: Scope) -> None:
        raise _Break

    def _s_continue(self, node: ast.Continue, scope: Scope) -> None:
        raise _Continue

    def _s_pass(self, node: ast.stmt, scope: Scope) -> None:
        return None

    def _s_return(self, node: ast.Return, scope: Scope) -> None:
        raise _Return(None if node.value is None else self.ev(node.value, scope))

    def _s_def(self, node: ast.FunctionDef, scope: Scope) -> None:
        if scope.is_class:
            if is_dunder(node.name) and node.name not in ALLOWED_DUNDERS:
                raise SecurityError(f"defining {node.name} is not supported in the sandbox")
        else:
            self.check_bind(node.name)
        decorators = [self.ev(d, scope) for d in node.decorator_list]
        value: Any = self.make_function(node, scope)
        for deco in reversed(decorators):
            value = self.call(deco, (value,), {})
        if scope.is_class:
            scope.vars[node.name] = value
        else:
            self.store(node.name, value, scope)

    def _s_class(self, node: ast.ClassDef, scope: Scope) -> None:
        self.check_bind(node.name)
        if node.keywords:
            raise SecurityError("class keywords (metaclass=…) are not allowed")
        bases: list[SandboxClass] = []
        exc_base: type[BaseException] | None = None
        for b in node.bases:
            base = self.ev(b, scope)
            if isinstance(base, SandboxClass):
                bases.append(base)
                if base._exc_type is not None:
                    exc_base = base._exc_type
            elif base is object:
                continue
            elif isinstance(base, type) and issubclass(base, Exception):
                exc_base = base
            else:
                raise SecurityError(
                    "a sandbox class may derive only from object, exceptions or sandbox classes"
                )
        body_scope = Scope({}, scope, is_class=True)
        self.exec_block(node.body, body_scope)
        attrs = body_scope.vars
        decorators = [self.ev(d, scope) for d in node.decorator_list]
        exc_type: type[BaseException] | None = None
        cls = SandboxClass(self, node.name, tuple(bases), attrs, None)
        if exc_base is not None:
            pybases = (
                (exc_base,)
                if issubclass(exc_base, SandboxException)
                else (SandboxException, exc_base)
            )
            exc_type = type(node.name, pybases, {"_sandbox_cls": cls})
            cls._exc_type = exc_type
        for value in attrs.values():
            fn = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
            if isinstance(fn, SandboxFunction):
                fn._owner = cls
        result: Any = cls
        for deco in reversed(decorators):
            result = self.call(deco, (result,), {})
        self.store(node.name, result, scope)

    def _s_try(self, node: ast.Try, scope: Scope) -> None:
        try:
            self.exec_block(node.body, scope)
        except (SandboxAbort, FinalAnswer):
            raise
        except (_Break, _Continue, _Return):
            self.exec_block(node.finalbody, scope)
            raise
        except Exception as exc:
            if not hasattr(exc, "_sandbox_line"):
                self._mark_line(exc)
            for handler in node.handlers:
                if handler.type is not None:
                    types = self.ev(handler.type, scope)
                    if not self._exc_matches(exc, types):
                        continue
                if handler.name:
                    self.store(handler.name, exc, scope)
                self.handling.append(exc)
                try:
                    self.exec_block(handler.body, scope)
                except (SandboxAbort, FinalAnswer):
                    raise
                except BaseException:
                    self.exec_block(node.finalbody, scope)
                    raise
                finally:
                    self.handling.pop()
                break
            else:
                self.exec_block(node.finalbody, scope)
                raise
        else:
            try:
                self.exec_block(node.orelse, scope)
            except (SandboxAbort, FinalAnswer):
                raise
            except BaseException:
                self.exec_block(node.finalbody, scope)
                raise
        self.exec_block(node.finalbody, scope)

    def _mark_line(self, exc: BaseException) -> None:
        with contextlib.suppress(AttributeError, TypeError):
            exc._sandbox_line = self.line  # type: ignore[attr-defined]

    def _exc_matches(self, exc: BaseException, types: Any) -> bool:
        if not isinstance(types, tuple):
            types = (types,)
        for t in types:
            if isinstance(t, SandboxClass):
                if t._exc_type is not None and isinstance(exc, t._exc_type):
                    return True
            elif isinstance(t, type) and issubclass(t, BaseException):
                if isinstance(exc, t):
                    return True
            else:
                raise TypeError(
                    "catching classes that do not inherit from BaseException is not allowed"
                )
        return False

    def _s_raise(self, node: ast.Raise, scope: Scope) -> None:
        if node.exc is None:
            if not self.handling:
                raise RuntimeError("No active exception to reraise")
            raise self.handling[-1]
        exc = self._make_exc(self.ev(node.exc, scope))
        if node.cause is not None:
            cause = self.ev(node.cause, scope)
            exc.__cause__ = None if cause is None else self._make_exc(cause)
        raise exc

    def _make_exc(self, value: Any) -> BaseException:
        if isinstance(value, SandboxClass):
            value = self.instantiate(value, (), {})
        elif isinstance(value, type) and issubclass(value, BaseException):
            value = value()
        if not isinstance(value, Exception) or isinstance(value, _CONTROL):
            raise TypeError("exceptions must derive from BaseException")
        return value

    def _s_with(self, node: ast.With, scope: Scope) -> None:
        self._with_items(node.items, node.body, scope)

    def _with_items(self, items: list[ast.withitem], body: list[ast.stmt], scope: Scope) -> None:
        if not items:
            self.exec_block(body, scope)
            return
        item = items[0]
        ctx = self.ev(item.context_expr, scope)
        enter = self.dunder(ctx, "__enter__")
        exit_ = self.dunder(ctx, "__exit__")
        if enter is None or exit_ is None:
            raise TypeError(
                f"'{self.type_name(ctx)}' object does not support the context manager protocol"
            )
        value = self.call(enter, (), {})
        if item.optional_vars is not None:
            self.assign(item.optional_vars, value, scope)
        try:
            self._with_items(items[1:], body, scope)
        except _CONTROL:
            raise
        except Exception as exc:
            if not self.truth(self.call(exit_, (type(exc), exc, None), {})):
                raise
        else:
            self.call(exit_, (None, None, None), {})

    def import_module(self, name: str) -> ModuleProxy:
        cached = self._module_cache.get(name)
        if cached is not None:
            return cached
        proxy = self._modules(self, name)
        if proxy is None:
            raise SecurityError(f"import of '{name}' is not allowed")
        self._module_cache[name] = proxy
        return proxy

    def _s_import(self, node: ast.Import, scope: Scope) -> None:
        for alias in node.names:
            if "." in alias.name:
                raise SecurityError(f"import of '{alias.name}' is not allowed")
            self.store(alias.asname or alias.name, self.import_module(alias.name), scope)

    def _s_importfrom(self, node: ast.ImportFrom, scope: Scope) -> None:
        if node.level or not node.module or "." in node.module:
            raise SecurityError(f"import from '{node.module or '.'}' is not allowed")
        module = self.import_module(node.module)
        for alias in node.names:
            if alias.name == "*":
                raise SecurityError("'from … import *' is not supported in the sandbox")
            self.store(
                alias.asname or alias.name, self._internal_getattr(module, alias.name), scope
            )

    def _s_delete(self, node: ast.Delete, scope: Scope) -> None:
        for target in node.targets:
            if isinstance(target, ast.Name):
                self.delete_name(target.id, scope)
            elif isinstance(target, ast.Subscript):
                obj = self.ev(target.value, scope)
                key = self.ev(target.slice, scope)
                if isinstance(obj, SandboxInstance):
                    m = self.dunder(obj, "__delitem__")
                    if m is None:
                        raise TypeError(f"'{obj._cls._name}' object does not support item deletion")
                    self.call(m, (key,), {})
                elif isinstance(obj, (Internal, type)):
                    raise SecurityError("item deletion is not allowed here")
                else:
                    del obj[key]
            elif isinstance(target, ast.Attribute):
                self.delattr(self.ev(target.value, scope), target.attr)
            elif isinstance(target, (ast.Tuple, ast.List)):
                self._s_delete(ast.Delete(targets=list(target.elts)), scope)
            else:
                raise SyntaxError("cannot delete this expression")

    def _s_assert(self, node: ast.Assert, scope: Scope) -> None:
        if not self.truth(self.ev(node.test, scope)):
            if node.msg is None:
                raise AssertionError
            raise AssertionError(self.ev(node.msg, scope))

    # ------------------------------------------------------------------ expressions

    def _e_constant(self, node: ast.Constant, scope: Scope) -> Any:
        return node.value

    def _e_name(self, node: ast.Name, scope: Scope) -> Any:
        return self.load(node.id, scope)

    def _e_binop(self, node: ast.BinOp, scope: Scope) -> Any:
        return self.binop(type(node.op), self.ev(node.left, scope), self.ev(node.right, scope))

    def _e_unaryop(self, node: ast.UnaryOp, scope: Scope) -> Any:
        value = self.ev(node.operand, scope)
        op = type(node.op)
        if op is ast.Not:
            return not self.truth(value)
        if isinstance(value, SandboxInstance):
            name = {ast.USub: "__neg__", ast.UAdd: "__pos__"}.get(op)
            m = self.dunder(value, name) if name else None
            if m is None:
                raise TypeError(f"bad operand type for unary operator: '{value._cls._name}'")
            return self.call(m, (), {})
        if op is ast.USub:
            return -value
        if op is ast.UAdd:
            return +value
        return ~value

    def _e_boolop(self, node: ast.BoolOp, scope: Scope) -> Any:
        value: Any = None
        if isinstance(node.op, ast.And):
            for v in node.values:
                value = self.ev(v, scope)
                if not self.truth(value):
                    return value
            return value
        for v in node.values:
            value = self.ev(v, scope)
            if self.truth(value):
                return value
        return value

    def _e_compare(self, node: ast.Compare, scope: Scope) -> Any:
        left = self.ev(node.left, scope)
        result: Any = True
        for op, comp in zip(node.ops, node.comparators, strict=True):
            right = self.ev(comp, scope)
            result = self.compare(type(op), left, right)
            if not self.truth(result):
                return result
            left = right
        return result

    def _e_call(self, node: ast.Call, scope: Scope) -> Any:
        func_node = node.func
        if isinstance(func_node, ast.Name) and func_node.id == "super" and not node.args:
            return self._super(scope)
        func = self.ev(func_node, scope)
        simple = node.__dict__.get("_sb_simple")
        if simple is None:
            simple = not node.keywords and not any(type(a) is ast.Starred for a in node.args)
            node._sb_simple = simple  # type: ignore[attr-defined]
        if simple:
            ev = self.ev
            return self.call(func, [ev(a, scope) for a in node.args], {})
        args: list[Any] = []
        for a in node.args:
            if isinstance(a, ast.Starred):
                args.extend(self.collect(self.ev(a.value, scope)))
                self.need_len(len(args), "coll")
            else:
                args.append(self.ev(a, scope))
        kwargs: dict[str, Any] = {}
        for kw in node.keywords:
            if kw.arg is None:
                mapping = self.ev(kw.value, scope)
                if not isinstance(mapping, dict):
                    raise TypeError("argument after ** must be a mapping")
                for k, v in mapping.items():
                    if not isinstance(k, str):
                        raise TypeError("keywords must be strings")
                    if k in kwargs:
                        raise TypeError(f"got multiple values for keyword argument '{k}'")
                    kwargs[k] = v
            else:
                kwargs[kw.arg] = self.ev(kw.value, scope)
        return self.call(func, args, kwargs)

    def _super(self, scope: Scope) -> Any:
        s: Scope | None = scope
        while s is not None and s.owner is None:
            s = s.parent
        if s is None:
            raise RuntimeError("super(): no arguments")
        return _Super(s.owner, s.self_obj)

    def _e_attribute(self, node: ast.Attribute, scope: Scope) -> Any:
        return self.getattr(self.ev(node.value, scope), node.attr)

    def _e_subscript(self, node: ast.Subscript, scope: Scope) -> Any:
        return self.getitem(self.ev(node.value, scope), self.ev(node.slice, scope))

    def _e_slice(self, node: ast.Slice, scope: Scope) -> Any:
        return slice(
            None if node.lower is None else self.ev(node.lower, scope),
            None if node.upper is None else self.ev(node.upper, scope),
            None if node.step is None else self.ev(node.step, scope),
        )

    def _elements(self, elts: list[ast.expr], scope: Scope) -> list[Any]:
        out: list[Any] = []
        for e in elts:
            if isinstance(e, ast.Starred):
                out.extend(self.collect(self.ev(e.value, scope)))
                self.need_len(len(out), "coll")
            else:
                out.append(self.ev(e, scope))
        return out

    def _e_list(self, node: ast.List, scope: Scope) -> Any:
        out = self._elements(node.elts, scope)
        self.account(56 + 8 * len(out))
        return out

    def _e_tuple(self, node: ast.Tuple, scope: Scope) -> Any:
        return tuple(self._elements(node.elts, scope))

    def _e_set(self, node: ast.Set, scope: Scope) -> Any:
        return set(self._elements(node.elts, scope))

    def _e_dict(self, node: ast.Dict, scope: Scope) -> Any:
        out: dict[Any, Any] = {}
        for k, v in zip(node.keys, node.values, strict=True):
            if k is None:
                mapping = self.ev(v, scope)
                if not isinstance(mapping, dict):
                    raise TypeError(f"'{self.type_name(mapping)}' object is not a mapping")
                self.need_len(len(out) + len(mapping), "coll")
                out.update(mapping)
            else:
                key = self.ev(k, scope)
                out[key] = self.ev(v, scope)
        return out

    def _comp(
        self, generators: list[ast.comprehension], scope: Scope, emit: Callable[[Scope], None]
    ) -> None:
        gen = generators[0]
        rest = generators[1:]
        for item in self.iterate(self.ev(gen.iter, scope)):
            self.tick()
            self.assign(gen.target, item, scope)
            if all(self.truth(self.ev(cond, scope)) for cond in gen.ifs):
                if rest:
                    self._comp(rest, scope, emit)
                else:
                    emit(scope)

    def _comp_scope(self, scope: Scope) -> Scope:
        return Scope({}, scope, is_comp=True)

    def _e_listcomp(self, node: ast.ListComp, scope: Scope) -> Any:
        out: list[Any] = []
        limit = self.limits.max_collection_len

        def emit(s: Scope) -> None:
            out.append(self.ev(node.elt, s))
            if len(out) > limit:
                raise LimitExceeded(f"collection of more than {limit} items")

        self._comp(node.generators, self._comp_scope(scope), emit)
        self.account(64 + 8 * len(out))
        return out

    def _e_setcomp(self, node: ast.SetComp, scope: Scope) -> Any:
        out: set[Any] = set()
        limit = self.limits.max_collection_len

        def emit(s: Scope) -> None:
            out.add(self.ev(node.elt, s))
            if len(out) > limit:
                raise LimitExceeded(f"collection of more than {limit} items")

        self._comp(node.generators, self._comp_scope(scope), emit)
        self.account(64 + 8 * len(out))
        return out

    def _e_dictcomp(self, node: ast.DictComp, scope: Scope) -> Any:
        out: dict[Any, Any] = {}
        limit = self.limits.max_collection_len

        def emit(s: Scope) -> None:
            key = self.ev(node.key, s)
            out[key] = self.ev(node.value, s)
            if len(out) > limit:
                raise LimitExceeded(f"collection of more than {limit} items")

        self._comp(node.generators, self._comp_scope(scope), emit)
        self.account(64 + 8 * len(out))
        return out

    def _e_genexp(self, node: ast.GeneratorExp, scope: Scope) -> Any:
        first_iter = self.ev(node.generators[0].iter, scope)
        cscope = self._comp_scope(scope)
        return Metered(self, self._genexp(node, node.generators, cscope, first_iter))

    def _genexp(
        self, node: ast.GeneratorExp, generators: list[ast.comprehension], scope: Scope, first: Any
    ) -> Iterator[Any]:
        gen = generators[0]
        iterable = first if first is not _MISSING else self.ev(gen.iter, scope)
        for item in self.iterate(iterable):
            self.assign(gen.target, item, scope)
            if all(self.truth(self.ev(cond, scope)) for cond in gen.ifs):
                if len(generators) > 1:
                    yield from self._genexp(node, generators[1:], scope, _MISSING)
                else:
                    yield self.ev(node.elt, scope)

    def _e_ifexp(self, node: ast.IfExp, scope: Scope) -> Any:
        if self.truth(self.ev(node.test, scope)):
            return self.ev(node.body, scope)
        return self.ev(node.orelse, scope)

    def _e_lambda(self, node: ast.Lambda, scope: Scope) -> Any:
        return self.make_function(node, scope)

    def _e_joinedstr(self, node: ast.JoinedStr, scope: Scope) -> Any:
        parts: list[str] = []
        total = 0
        for v in node.values:
            s = self.ev(v, scope)
            total += len(s)
            self.need_len(total)
            parts.append(s)
        return "".join(parts)

    def _e_formatted(self, node: ast.FormattedValue, scope: Scope) -> Any:
        value = self.ev(node.value, scope)
        if node.conversion == 114:
            value = self.to_repr(value)
        elif node.conversion == 97:
            value = ascii(self.to_repr(value))[1:-1]
        elif node.conversion == 115 or isinstance(value, SandboxInstance):
            value = self.to_str(value)
        spec = "" if node.format_spec is None else self.ev(node.format_spec, scope)
        return self.format_value(value, spec)

    def format_value(self, value: Any, spec: str) -> str:
        if not isinstance(spec, str):
            raise TypeError("format spec must be a str")
        self.check_format_spec(spec)
        if isinstance(value, SandboxInstance):
            value = self.to_str(value)
        elif isinstance(value, Internal):
            value = repr(value)
        else:
            self.text_budget(value)
        return format(value, spec)

    def _e_namedexpr(self, node: ast.NamedExpr, scope: Scope) -> Any:
        value = self.ev(node.value, scope)
        s = scope
        while s.is_comp and s.parent is not None:
            s = s.parent
        self.store(node.target.id, value, s)
        return value

    def _sink(self, scope: Scope) -> list[Any]:
        s: Scope | None = scope
        while s is not None and s.is_comp:
            s = s.parent
        if s is None or s.sink is None:
            raise SyntaxError("'yield' outside function")
        return s.sink

    def _e_yield(self, node: ast.Yield, scope: Scope) -> Any:
        sink = self._sink(scope)
        sink.append(None if node.value is None else self.ev(node.value, scope))
        self.need_len(len(sink), "coll")
        return None

    def _e_yieldfrom(self, node: ast.YieldFrom, scope: Scope) -> Any:
        sink = self._sink(scope)
        sink.extend(self.collect(self.ev(node.value, scope)))
        self.need_len(len(sink), "coll")
        return None

    def _e_starred_bare(self, node: ast.Starred, scope: Scope) -> Any:
        raise SyntaxError("can't use starred expression here")


class SafeFormatter(string.Formatter):
    """`str.format`/`format_map` whose field paths go through the interpreter's
    attribute rules and whose total output is bounded."""

    def __init__(self, interp: Interpreter) -> None:
        self.interp = interp
        self.total = 0

    def get_field(self, field_name: str, args: Any, kwargs: Any) -> Any:
        import _string  # CPython's own parser of "a.b[c]" field names

        first, rest = _string.formatter_field_name_split(field_name)
        obj = self.get_value(first, args, kwargs)
        for is_attr, key in rest:
            obj = self.interp.getattr(obj, key) if is_attr else self.interp.getitem(obj, key)
        return obj, first

    def convert_field(self, value: Any, conversion: str | None) -> Any:
        if conversion == "r":
            return self.interp.to_repr(value)
        if conversion == "s":
            return self.interp.to_str(value)
        if conversion == "a":
            return ascii(self.interp.to_repr(value))[1:-1]
        if conversion is None:
            return value
        raise ValueError(f"Unknown conversion specifier {conversion}")

    def format_field(self, value: Any, format_spec: str) -> Any:
        self.interp.tick()
        out = self.interp.format_value(value, format_spec)
        self.total += len(out)
        self.interp.need_len(self.total)
        return out


def safe_format(interp: Interpreter, fmt: str, args: tuple[Any, ...], kwargs: Any) -> str:
    if not isinstance(fmt, str):
        raise TypeError("format requires a str")
    return SafeFormatter(interp).vformat(fmt, args, kwargs)


def host_recursion_guard(limits: Limits) -> int:
    """Raise the host's recursion limit enough for `max_recursion` model frames;
    returns the previous value so the caller can restore it."""
    old = sys.getrecursionlimit()
    needed = min(limits.max_recursion * 25 + 1000, 30_000)
    if needed > old:
        sys.setrecursionlimit(needed)
    return old
