"""The builtins the code sees, and the checked versions of host methods that
could allocate or loop without bound (`str.ljust`, `str.join`, `list.extend`…)."""

from __future__ import annotations

import ast
import builtins as _py
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from memagent.sandbox._modules import pattern_method
from memagent.sandbox._objects import (
    CheckedFunction,
    Internal,
    SandboxClass,
    SandboxException,
    SandboxInstance,
)
from memagent.sandbox.limits import FinalAnswer, LimitExceeded, SecurityError

if TYPE_CHECKING:
    from memagent.sandbox._api import Compiler

DENIED = frozenset(
    {
        "open",
        "eval",
        "exec",
        "compile",
        "__import__",
        "globals",
        "locals",
        "vars",
        "dir",
        "breakpoint",
        "input",
        "help",
        "exit",
        "quit",
        "memoryview",
        "copyright",
        "credits",
        "license",
        "__build_class__",
        "__loader__",
        "__spec__",
        "__builtins__",
        "id",
        "aiter",
        "anext",
    }
)

_PLAIN = (
    "abs",
    "bin",
    "bool",
    "callable",
    "chr",
    "complex",
    "dict",
    "divmod",
    "enumerate",
    "filter",
    "float",
    "frozenset",
    "hash",
    "hex",
    "list",
    "map",
    "max",
    "min",
    "oct",
    "ord",
    "range",
    "reversed",
    "round",
    "set",
    "slice",
    "sorted",
    "tuple",
    "zip",
    "object",
    "staticmethod",
    "classmethod",
    "property",
    "all",
    "any",
    "NotImplemented",
    "Ellipsis",
)

_EXCEPTIONS = (
    "BaseException",
    "Exception",
    "ArithmeticError",
    "AssertionError",
    "AttributeError",
    "EOFError",
    "FloatingPointError",
    "IndexError",
    "KeyError",
    "LookupError",
    "MemoryError",
    "NameError",
    "NotImplementedError",
    "OverflowError",
    "RecursionError",
    "RuntimeError",
    "StopIteration",
    "TypeError",
    "UnboundLocalError",
    "UnicodeDecodeError",
    "UnicodeEncodeError",
    "UnicodeError",
    "ValueError",
    "ZeroDivisionError",
    "TimeoutError",
    "FileNotFoundError",
    "FileExistsError",
    "PermissionError",
    "IsADirectoryError",
    "NotADirectoryError",
    "OSError",
    "KeyboardInterrupt",
    "Warning",
    "UserWarning",
)

_NOWRAP = (
    "len",
    "iter",
    "next",
    "isinstance",
    "issubclass",
    "callable",
    "hash",
    "range",
    "slice",
    "reversed",
    "bool",
    "type",
    "repr",
    "str",
    "print",
    "format",
    "getattr",
    "hasattr",
    "setattr",
    "delattr",
    "abs",
    "chr",
    "ord",
    "round",
    "divmod",
)


_BASE: dict[str, Any] = {name: getattr(_py, name) for name in _PLAIN + _EXCEPTIONS}


def make_builtins(it: Compiler) -> tuple[dict[str, Any], frozenset[str], set[int]]:
    b: dict[str, Any] = dict(_BASE)
    lim = it.limits

    def _print(*args: Any, sep: Any = " ", end: Any = "\n", **_ignored: Any) -> None:
        if sep is None:
            sep = " "
        if end is None:
            end = "\n"
        if not isinstance(sep, str) or not isinstance(end, str):
            raise TypeError("sep and end must be None or a string")
        if it.output_truncated:
            return
        room = lim.max_output_chars - it.output_len
        pieces: list[str] = []
        size = 0
        for i, a in enumerate(args):
            piece = (sep if i else "") + it.to_str(a)
            pieces.append(piece[: room + 1 - size])
            size += len(pieces[-1])
            if size > room:
                break
        else:
            pieces.append(end[: room + 1 - size])
        text = "".join(pieces)
        if len(text) > room:
            it.output.append(text[: max(room, 0)])
            it.output_len = lim.max_output_chars
            it.output_truncated = True
            return
        it.output.append(text)
        it.output_len += len(text)

    def _str(*args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and not kwargs:
            return it.to_str(args[0])
        return str(*args, **kwargs)

    def _repr(obj: Any) -> str:
        return it.to_repr(obj)

    def _ascii(obj: Any) -> str:
        return (
            ascii(it.to_repr(obj))[1:-1]
            if isinstance(obj, SandboxInstance)
            else _check_text(obj, ascii)
        )

    def _check_text(obj: Any, fn: Callable[[Any], str]) -> str:
        it.text_budget(obj)
        return fn(obj)

    def _format(value: Any, spec: str = "") -> str:
        return it.format_value(value, spec)

    def _len(obj: Any) -> int:
        if isinstance(obj, SandboxInstance):
            m = it.dunder(obj, "__len__")
            if m is None:
                raise TypeError(f"object of type '{obj._cls._name}' has no len()")
            out = it.call(m, (), {})
            if not isinstance(out, int):
                raise TypeError("'__len__' returned a non-integer")
            return out
        return len(obj)

    def _iter(obj: Any, *sentinel: Any) -> Any:
        if sentinel:
            return it.metered(iter(lambda: it.call(obj, (), {}), sentinel[0]))
        return it.metered(obj)

    def _next(iterator: Any, *default: Any) -> Any:
        if isinstance(iterator, SandboxInstance):
            m = it.dunder(iterator, "__next__")
            if m is None:
                raise TypeError(f"'{iterator._cls._name}' object is not an iterator")
            try:
                return it.call(m, (), {})
            except StopIteration:
                if default:
                    return default[0]
                raise
        return next(iterator, *default)

    def _type(*args: Any) -> Any:
        if len(args) != 1:
            raise SecurityError("type() with 3 arguments (creating classes) is not allowed")
        obj = args[0]
        if isinstance(obj, SandboxInstance):
            return obj._cls
        if isinstance(obj, SandboxException) and obj._sandbox_cls is not None:
            return obj._sandbox_cls
        if isinstance(obj, Internal):
            raise SecurityError("type() of sandbox internals is not available")
        result = type(obj)
        if issubclass(result, type):
            raise SecurityError("the type of a class (its metaclass) is not available")
        return result

    def _isinstance(obj: Any, classinfo: Any) -> bool:
        if isinstance(classinfo, tuple):
            return any(_isinstance(obj, c) for c in classinfo)
        if isinstance(classinfo, SandboxClass):
            if isinstance(obj, SandboxInstance):
                return obj._cls.is_subclass_of(classinfo)
            return classinfo._exc_type is not None and isinstance(obj, classinfo._exc_type)
        if isinstance(classinfo, Internal):
            raise TypeError("isinstance() arg 2 must be a type")
        return isinstance(obj, classinfo)

    def _issubclass(cls: Any, classinfo: Any) -> bool:
        if isinstance(classinfo, tuple):
            return any(_issubclass(cls, c) for c in classinfo)
        if isinstance(cls, SandboxClass):
            if isinstance(classinfo, SandboxClass):
                return cls.is_subclass_of(classinfo)
            return (
                cls._exc_type is not None
                and isinstance(classinfo, type)
                and issubclass(cls._exc_type, classinfo)
            )
        if isinstance(classinfo, SandboxClass):
            return False
        return issubclass(cls, classinfo)

    _nodefault = object()

    def _getattr(obj: Any, name: str, default: Any = _nodefault) -> Any:
        try:
            return it.getattr(obj, name)
        except AttributeError:
            if default is _nodefault:
                raise
            return default

    def _hasattr(obj: Any, name: str) -> bool:
        try:
            it.getattr(obj, name)
        except AttributeError:
            return False
        return True

    def _setattr(obj: Any, name: str, value: Any) -> None:
        it.setattr(obj, name, value)

    def _delattr(obj: Any, name: str) -> None:
        it.delattr(obj, name)

    def _sum(iterable: Any, /, start: Any = 0) -> Any:
        if isinstance(start, (str, bytes, bytearray)):
            raise TypeError("sum() can't sum strings [use ''.join(seq) instead]")
        total = start
        if type(iterable) in (list, tuple) and all(type(x) is float for x in iterable):
            return _py.sum(iterable, start)
        for x in it.metered(iterable):
            total = it.binop(ast.Add, total, x)
        return total

    def _pow(base: Any, exp: Any, mod: Any = None) -> Any:
        if mod is None:
            return it.binop(ast.Pow, base, exp)
        if isinstance(base, int) and isinstance(exp, int) and isinstance(mod, int):
            mbits = max(mod.bit_length(), 1)
            it.need_bits(mbits)
            cost = abs(exp).bit_length() * (mbits / 30 + 1) ** 1.6
            if cost > 5e8:
                raise LimitExceeded("modular exponentiation too large for the sandbox")
        return pow(base, exp, mod)

    def _int(*args: Any, **kwargs: Any) -> Any:
        if args and isinstance(args[0], (str, bytes, bytearray)) and len(args[0]) > 5000:
            it.need_bits(len(args[0]) * 3.33)
        return int(*args, **kwargs)

    def _bytes(*args: Any, **kwargs: Any) -> Any:
        if args and isinstance(args[0], int):
            it.need_len(args[0])
        return bytes(*args, **kwargs)

    def _bytearray(*args: Any, **kwargs: Any) -> Any:
        if args and isinstance(args[0], int):
            it.need_len(args[0])
        return bytearray(*args, **kwargs)

    def _final_answer(answer: Any = None) -> Any:
        raise FinalAnswer(answer)

    def _final_var(name: str) -> Any:
        if not isinstance(name, str):
            raise TypeError("FINAL_VAR takes the name of a variable, as a string")
        if name not in it.globals:
            raise NameError(f"name '{name}' is not defined")
        raise FinalAnswer(it.globals[name])

    depths = it.tuples

    def _hash(obj: Any) -> int:
        depths.check(obj)  # CPython hashes a tuple recursively in C, unchecked
        return hash(obj)

    def _hashing(kind: type) -> Callable[..., Any]:
        def make(*args: Any, **kwargs: Any) -> Any:
            if args:
                depths.check_items(args[0])
            return kind(*args, **kwargs)

        return make

    def _tuple(*args: Any) -> tuple[Any, ...]:
        made = tuple(*args)
        depths.check(made)
        return made

    b["hash"] = _hash
    it.type_calls = {
        str: _str,
        int: _int,
        bytes: _bytes,
        bytearray: _bytearray,
        tuple: _tuple,
        set: _hashing(set),
        frozenset: _hashing(frozenset),
        dict: _hashing(dict),
    }
    b.update(str=str, int=int, bytes=bytes, bytearray=bytearray)
    b.update(
        print=_print,
        repr=_repr,
        ascii=_ascii,
        format=_format,
        len=_len,
        iter=_iter,
        next=_next,
        type=_type,
        isinstance=_isinstance,
        issubclass=_issubclass,
        getattr=_getattr,
        hasattr=_hasattr,
        setattr=_setattr,
        delattr=_delattr,
        sum=_sum,
        pow=_pow,
        final_answer=_final_answer,
        FINAL=_final_answer,
        FINAL_VAR=_final_var,
    )
    b["True"], b["False"], b["None"] = True, False, None
    nowrap = {id(b[n]) for n in _NOWRAP if n in b}
    return b, DENIED, nowrap


_HASHING_METHODS = frozenset(
    {
        "setdefault",
        "pop",
        "discard",
        "remove",
        "fromkeys",
        "union",
        "difference",
        "intersection",
        "issubset",
    }
)


def risky_method(it: Compiler, obj: Any, name: str) -> Any:
    """A checked stand-in for `obj.name` when that method could allocate or loop
    past the limits; None when plain `getattr` is fine."""
    from memagent.sandbox._format import safe_format

    if isinstance(obj, (str, type)) and name in ("format", "format_map"):
        if obj is str:
            return CheckedFunction("format", lambda fmt, *a, **k: safe_format(it, fmt, a, k), None)
        if not isinstance(obj, str):
            return None
        if name == "format":
            return CheckedFunction("format", lambda *a, **k: safe_format(it, obj, a, k), None)
        return CheckedFunction(
            "format_map", lambda mapping: safe_format(it, obj, (), mapping), None
        )
    if isinstance(obj, (str, bytes, bytearray)):
        if name == "join":
            return _join_call(it, obj)
        check = _STR_CHECKS.get(name)
        if check is None:
            return None
        method = getattr(obj, name)
        return CheckedFunction(name, method, lambda a, k: check(it, obj, a, k))
    if name == "to_bytes" and isinstance(obj, int):

        def to_bytes(*args: Any, **kwargs: Any) -> Any:
            length = _arg0(args, kwargs, "length", 1)
            if isinstance(length, int):
                it.need_len(length)
            return obj.to_bytes(*args, **kwargs)

        return CheckedFunction("to_bytes", to_bytes, None)
    if isinstance(obj, (dict, set, frozenset)) and name in _HASHING_METHODS:
        method = getattr(obj, name)
        depths = it.tuples

        def bounded(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
            for value in args:
                depths.check(value)  # hashed in C: bounded nesting first
                if name in ("union", "difference", "intersection", "issubset"):
                    depths.check_items(value)

        return CheckedFunction(name, method, bounded)
    if name in ("extend", "update", "extendleft") and (
        isinstance(obj, (list, dict, set, bytearray)) or type(obj).__name__ == "deque"
    ):
        method = getattr(obj, name)

        def grow(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
            add = 0
            for a in args:
                if hasattr(a, "__len__"):
                    add += len(a)
            it.need_len(len(obj) + add + len(kwargs), "coll")

        def run(*args: Any, **kwargs: Any) -> Any:
            grow(args, kwargs)
            return method(*[it._wrap_arg(a) for a in args], **kwargs)

        return CheckedFunction(name, run, None)
    return pattern_method(it, obj, name)


def _arg0(args: tuple[Any, ...], kwargs: dict[str, Any], name: str, default: Any) -> Any:
    return args[0] if args else kwargs.get(name, default)


def _width_arg(it: Compiler, obj: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    width = args[0] if args else kwargs.get("width", 0)
    if isinstance(width, int):
        it.need_len(max(width, len(obj)))


def _join_len(it: Compiler, sep: Any, items: list[Any] | tuple[Any, ...]) -> None:
    total = len(sep) * max(len(items) - 1, 0)
    try:
        # in C: a join of 20k parts costs no Python loop (an item that is not
        # text makes the join itself fail; its len, if any, only errs high)
        total += sum(map(len, items))
    except TypeError:
        for x in items:
            if isinstance(x, (str, bytes, bytearray)):
                total += len(x)
    it.need_len(total)


def _replace(it: Compiler, s: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    if len(args) < 2:
        return
    old, new = args[0], args[1]
    if not isinstance(old, type(s)) or not isinstance(new, (str, bytes, bytearray)):
        return
    count = s.count(old) if old else len(s) + 1
    if len(args) > 2 and isinstance(args[2], int) and args[2] >= 0:
        count = min(count, args[2])
    it.need_len(len(s) + count * max(len(new) - len(old), 0))


def _expandtabs(it: Compiler, s: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    size = args[0] if args else kwargs.get("tabsize", 8)
    if isinstance(size, int):
        tab = b"\t" if isinstance(s, (bytes, bytearray)) else "\t"
        it.need_len(len(s) + s.count(tab) * max(size, 0))


def _translate(it: Compiler, s: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    if args and isinstance(args[0], dict) and isinstance(s, str):
        longest = max((len(v) for v in args[0].values() if isinstance(v, str)), default=1)
        it.need_len(len(s) * max(longest, 1))


def _join_call(it: Compiler, obj: Any) -> CheckedFunction:
    def run(iterable: Any) -> Any:
        items = iterable if isinstance(iterable, (list, tuple)) else it.collect(iterable)
        _join_len(it, obj, items)
        return obj.join(items)

    return CheckedFunction("join", run, None, flat=True)


_STR_CHECKS: dict[str, Callable[[Any, Any, tuple[Any, ...], dict[str, Any]], None]] = {
    "ljust": _width_arg,
    "rjust": _width_arg,
    "center": _width_arg,
    "zfill": _width_arg,
    "replace": _replace,
    "expandtabs": _expandtabs,
    "translate": _translate,
}
