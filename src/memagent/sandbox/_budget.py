"""The per-run budget: operations, wall time, sizes and the memory budget.
Functions of the compiler (`Compiler`), bound as `Interpreter` methods."""

from __future__ import annotations

import functools
import time
from typing import Any

from memagent.sandbox._api import Compiler
from memagent.sandbox._objects import Internal, Metered
from memagent.sandbox._policy import _LISTLIKE, _SIZED_COLL, _UNWRAPPED, _plain_iterator
from memagent.sandbox.limits import LimitExceeded


def start_run(it: Compiler, source: str) -> None:
    it.ops = 0
    it.deadline = time.monotonic() + it.limits.timeout_s
    it.depth = 0
    it.line = 0
    it.output = []
    it.output_len = 0
    it.output_truncated = False
    it.handling = []
    it.allocated = 0
    it.iter_nesting = 0
    it.next_check = min(1024, it.limits.max_operations + 1)
    it._source = source


def set_source(it: Compiler, source: str) -> None:
    """The text the next parsed tree came from (definitions are recorded from it)."""
    it._source = source


def tick(it: Compiler) -> None:
    it.ops += 1
    if it.ops >= it.next_check:
        check_limits(it)


def check_limits(it: Compiler) -> None:
    """Called once `ops` reaches `next_check`: the operation limit, and the
    wall-time limit at least every 1024 operations. Compiled code charges its
    operations a statement, a block or a loop iteration at a time and calls
    this when the count crosses `next_check`."""
    max_ops = it.limits.max_operations
    if it.ops > max_ops:
        raise LimitExceeded(f"operation limit of {max_ops} reached")
    if time.monotonic() > it.deadline:
        raise LimitExceeded(f"time limit of {it.limits.timeout_s:g}s reached")
    it.next_check = min(it.ops + 1024, max_ops + 1)


def remaining_time(it: Compiler) -> float:
    left = it.deadline - time.monotonic()
    if left <= 0:
        raise LimitExceeded(f"time limit of {it.limits.timeout_s:g}s reached")
    return left


def check_size(it: Compiler, value: Any) -> Any:
    """Check a value the run just made against the size limits, charge it to
    the run's memory budget (whatever its size), and wrap a host iterator so
    whatever pulls from it is metered."""
    t = type(value)
    if t is int:
        bits = value.bit_length()
        if bits > it.limits.max_int_bits:
            raise LimitExceeded(f"int of more than {it.limits.max_int_bits} bits")
        it.allocated += 28 + bits // 8
        if it.allocated > it.limits.max_total_alloc:
            it.account(0)
    elif t is str or t is bytes or t is bytearray:
        n = len(value)
        if n > it.limits.max_str_len:
            raise LimitExceeded(f"string of more than {it.limits.max_str_len} characters")
        it.allocated += 49 + n
        if it.allocated > it.limits.max_total_alloc:
            it.account(0)
    elif isinstance(value, _SIZED_COLL):
        n = len(value)
        if n > it.limits.max_collection_len:
            raise LimitExceeded(f"collection of more than {it.limits.max_collection_len} items")
        it.account(56 + n * 8)
        if isinstance(value, tuple) and n < 64:  # a tuple C made (popitem): bounded nesting
            for x in value:
                if type(x) is tuple:
                    it.tuples.depth(value)
                    break
    elif value is None or t in _UNWRAPPED or isinstance(value, Internal):
        pass
    elif _plain_iterator(t):
        return Metered(it, value)
    return value


def account(it: Compiler, size: int) -> None:
    """Charge a large allocation to the run's cumulative budget."""
    it.allocated += size
    if it.allocated > it.limits.max_total_alloc:
        raise LimitExceeded(
            f"memory budget of {it.limits.max_total_alloc} bytes for one run exhausted"
        )


def need_len(it: Compiler, n: int, kind: str = "str") -> None:
    if kind == "str":
        if n > it.limits.max_str_len:
            raise LimitExceeded(f"string of {n} characters exceeds {it.limits.max_str_len}")
    elif n > it.limits.max_collection_len:
        raise LimitExceeded(f"collection of {n} items exceeds {it.limits.max_collection_len}")


def need_bits(it: Compiler, bits: int | float) -> None:
    if bits > it.limits.max_int_bits:
        raise LimitExceeded(f"int of about {int(bits)} bits exceeds {it.limits.max_int_bits}")


def text_budget(it: Compiler, obj: Any) -> None:
    """Refuse to render `obj` as text when its repr would exceed the string limit
    (shared references make `str([big] * n)` enormous from a small object)."""
    it.text_size(obj)


def account_deep(it: Compiler, obj: Any) -> None:
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
            it.tick()
            it.account(size)
            size = 0
    it.account(size)


def text_size(it: Compiler, obj: Any, item_extra: int = 0, escape: bool = False) -> int:
    """About how many characters the text of `obj` has (its repr, or with
    `item_extra` more per element and `escape` for JSON's \\uXXXX escapes);
    past the string limit, the run ends before anything is rendered."""
    limit = it.limits.max_str_len
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
            it.tick()
    return total
