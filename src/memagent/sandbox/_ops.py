"""Operators: arithmetic, comparisons and membership, each sized or charged
before it runs. Functions of the compiler, bound as `Interpreter` methods."""

from __future__ import annotations

import ast
import math
from typing import Any

from memagent.sandbox._api import Compiler
from memagent.sandbox._nesting import MAX_DATA_DEPTH, too_deep
from memagent.sandbox._objects import SandboxInstance
from memagent.sandbox._policy import (
    _FMT_SPEC,
    _NESTABLE,
    _PCT_SPEC,
    _SIZED_STR,
    BIN_DUNDER,
    BINOPS,
    CMP_DUNDER,
    CMPOPS,
    INPLACE,
)
from memagent.sandbox.limits import LimitExceeded, SecurityError


def binop(it: Compiler, op: type[ast.operator], a: Any, b: Any, inplace: bool = False) -> Any:
    ta, tb = type(a), type(b)
    if ta is int and tb is int:
        if op is ast.Pow:
            if b > 0 and abs(a) > 1:
                it.need_bits(b * math.log2(abs(a)))
        elif op is ast.LShift:
            if b > 0:
                it.need_bits(a.bit_length() + b)
        elif op is ast.Mult:
            it.need_bits(a.bit_length() + b.bit_length())
        return BINOPS[op](a, b)
    if ta is float or tb is float:
        return BINOPS[op](a, b)
    if ta is str and tb is str and op is ast.Add:
        it.need_len(len(a) + len(b))
        return it.check_size(a + b)
    if isinstance(a, SandboxInstance) or isinstance(b, SandboxInstance):
        name = BIN_DUNDER.get(op)
        if name is not None:
            m = it.dunder(a, f"__{name}__")
            if m is not None:
                return it.call(m, (b,), {})
            m = it.dunder(b, f"__r{name}__")
            if m is not None:
                return it.call(m, (a,), {})
        raise TypeError(
            f"unsupported operand type(s) for {op.__name__}: "
            f"'{it.type_name(a)}' and '{it.type_name(b)}'"
        )
    if op is ast.Mult:
        it._check_repeat(a, b)
        it._check_repeat(b, a)
    elif op is ast.Add:
        if isinstance(a, _SIZED_STR) and isinstance(b, _SIZED_STR):
            it.need_len(len(a) + len(b))
        elif isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
            it.need_len(len(a) + len(b), "coll")
    elif op is ast.Mod and isinstance(a, (str, bytes)):
        return it.check_size(it.percent_format(a, b))
    elif op is ast.Pow and isinstance(a, int) and isinstance(b, int):
        if b > 0 and abs(a) > 1:
            it.need_bits(b * math.log2(abs(a)))
    elif op is ast.LShift and isinstance(a, int) and isinstance(b, int) and b > 0:
        it.need_bits(a.bit_length() + b)
    fn = INPLACE[op] if inplace else BINOPS[op]
    return it.check_size(fn(a, b))


def _check_repeat(it: Compiler, seq: Any, n: Any) -> None:
    if (
        isinstance(n, int)
        and not isinstance(seq, (int, float, complex))
        and hasattr(seq, "__len__")
    ):
        if isinstance(seq, SandboxInstance):
            return
        total = len(seq) * n
        it.need_len(total, "str" if isinstance(seq, _SIZED_STR) else "coll")
    elif isinstance(n, int) and isinstance(seq, int):
        it.need_bits(seq.bit_length() + n.bit_length())


def check_format_spec(it: Compiler, spec: str) -> None:
    if not spec:
        return
    m = _FMT_SPEC.match(spec)
    if m is None:
        return  # datetime-style specs: output length follows the spec's own length
    for group in m.groups():
        if group and int(group) > it.limits.max_str_len:
            raise LimitExceeded(f"format width {group} exceeds {it.limits.max_str_len}")


def percent_format(it: Compiler, fmt: str | bytes, args: Any) -> Any:
    text = fmt.decode("latin-1") if isinstance(fmt, bytes) else fmt
    for m in _PCT_SPEC.finditer(text):
        key, width, prec, _conv = m.groups()
        if key and ("__" in key or key[1:2] == "_"):
            raise SecurityError(f"format key {key} is not allowed")
        for g in (width, prec):
            if g == "*":
                raise SecurityError("'*' width in % formatting is not supported")
            if g and int(g) > it.limits.max_str_len:
                raise LimitExceeded(f"format width {g} exceeds {it.limits.max_str_len}")
    if isinstance(args, SandboxInstance):
        args = (it.to_str(args),)
    it.text_budget(args)
    return fmt % args


def deep_items(it: Compiler, obj: Any, budget: int) -> int:
    """Items reachable in a container (shared references counted each time),
    stopping once `budget` is passed: the worst-case cost of comparing it.
    Containers nested past `MAX_DATA_DEPTH` are refused (`LimitExceeded`): C
    would compare them recursively."""
    total = 0
    stack: list[tuple[Any, int]] = [(obj, 1)]
    while stack and total <= budget:
        item, level = stack.pop()
        if level > MAX_DATA_DEPTH:
            raise too_deep()
        if isinstance(item, (list, tuple)):
            total += len(item)
            stack.extend((x, level + 1) for x in item if isinstance(x, _NESTABLE))
        elif isinstance(item, dict):
            total += len(item)
            stack.extend((v, level + 1) for v in item.values() if isinstance(v, _NESTABLE))
        else:
            total += 1
    return total


def charge_compare(it: Compiler, a: Any, b: Any, times: int = 1) -> None:
    """Charge the operation budget for comparing two containers in C, before
    doing it (comparing `[x] * n` with an equal copy costs n * len(x))."""
    budget = it.limits.max_operations - it.ops
    cost = min(it.deep_items(a, budget), it.deep_items(b, budget)) * times
    if cost > 256:
        it.ops += cost
        if it.ops > it.limits.max_operations:
            raise LimitExceeded(
                f"operation limit of {it.limits.max_operations} reached (comparison)"
            )


def compare(it: Compiler, op: type[ast.cmpop], a: Any, b: Any) -> Any:
    if (
        isinstance(a, _NESTABLE)
        and isinstance(b, _NESTABLE)
        and op in CMPOPS
        and op is not ast.Is
        and op is not ast.IsNot
    ):
        it.charge_compare(a, b)
    if op is ast.In or op is ast.NotIn:
        found = it.contains(b, a)
        return found if op is ast.In else not found
    if (isinstance(a, SandboxInstance) or isinstance(b, SandboxInstance)) and op in CMP_DUNDER:
        name, reflected = CMP_DUNDER[op]
        m = it.dunder(a, name)
        if m is not None:
            return it.call(m, (b,), {})
        m = it.dunder(b, reflected)
        if m is not None:
            return it.call(m, (a,), {})
        if op is ast.NotEq:
            m = it.dunder(a, "__eq__")
            if m is not None:
                return not it.truth(it.call(m, (b,), {}))
    return CMPOPS[op](a, b)


def contains(it: Compiler, container: Any, item: Any) -> bool:
    if type(item) is tuple and isinstance(container, (dict, set, frozenset)):
        it.tuples.depth(item)  # hashed in C: bounded nesting first
    if isinstance(item, _NESTABLE) and isinstance(container, (list, tuple)) and container:
        it.charge_compare(item, item, len(container))
    if isinstance(item, SandboxInstance) and isinstance(container, (list, tuple)):
        return any(x is item or it.truth(it.compare(ast.Eq, x, item)) for x in container)
    if isinstance(container, (list, tuple, str, bytes, bytearray, dict, set, frozenset)):
        return item in container
    if isinstance(container, range) and type(item) is int:
        return item in container
    if isinstance(container, SandboxInstance):
        m = it.dunder(container, "__contains__")
        if m is not None:
            return it.truth(it.call(m, (item,), {}))
    if isinstance(container, dict):
        return item in container
    return any(x is item or it.truth(it.compare(ast.Eq, x, item)) for x in it.metered(container))


def type_name(it: Compiler, obj: Any) -> str:
    if isinstance(obj, SandboxInstance):
        return obj._cls._name
    return type(obj).__name__
