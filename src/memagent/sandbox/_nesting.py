"""Data nested too deep for C: answered as `LimitExceeded` before it reaches C.

CPython hashes a tuple by hashing its items recursively in C with no depth
check, so hashing a tuple nested 200,000 deep overflows the C stack and kills
the process (comparisons and `repr` stop at Python's recursion limit with a
`RecursionError` instead). The interpreter therefore bounds how deep tuples
nest where it makes them (tuple displays, `tuple()`) and checks where it hashes
(`hash()`, set and dict displays, `in` a set or dict, dict and set methods), and
comparisons walk their operands' depth with the cost they already charge.

Tuples are immutable, so a tuple's depth is known for good once computed: the
depths of recently seen tuples are kept (with the tuples, so ids stay theirs),
which makes building a chain one level at a time cost one step per level.
"""

from __future__ import annotations

from typing import Any

from memagent.sandbox.limits import LimitExceeded

MAX_DATA_DEPTH = 1000
"""Deepest nesting of containers that hashing, comparing or printing accepts."""
_MEMO = 4096
_SMALL = 64


def too_deep(what: str = "data") -> LimitExceeded:
    return LimitExceeded(f"{what} nested more than {MAX_DATA_DEPTH} deep")


class TupleDepths:
    """Depths of tuples seen by one interpreter (see the module doc)."""

    def __init__(self) -> None:
        self.known: dict[int, tuple[tuple[Any, ...], int]] = {}

    def depth(self, root: tuple[Any, ...]) -> int:
        """How deep tuples nest in `root` (1: no tuple inside); `LimitExceeded`
        past `MAX_DATA_DEPTH`, found after at most that many levels."""
        known = self.known
        if len(known) > _MEMO:  # forget between walks, never during one
            known.clear()
        hit = known.get(id(root))
        if hit is not None and hit[0] is root:
            return hit[1]
        # iterative post-order walk over tuple children; each entry carries its
        # distance from the root, so a chain too deep is refused at the limit
        stack: list[tuple[tuple[Any, ...], int, bool]] = [(root, 1, False)]
        while stack:
            t, level, done = stack.pop()
            if done:
                deepest = 0
                for child in _tuples_in(t):
                    got = known.get(id(child))
                    deepest = max(deepest, got[1] if got is not None else 1)
                self._remember(t, deepest + 1)
                continue
            if level > MAX_DATA_DEPTH:
                raise too_deep("tuples")
            got = known.get(id(t))
            if got is not None and got[0] is t:
                if got[1] + level - 1 > MAX_DATA_DEPTH:
                    raise too_deep("tuples")
                continue
            stack.append((t, level, True))
            for child in _tuples_in(t):
                stack.append((child, level + 1, False))
        found = known[id(root)][1]
        if found > MAX_DATA_DEPTH:
            raise too_deep("tuples")
        return found

    def _remember(self, t: tuple[Any, ...], depth: int) -> None:
        self.known[id(t)] = (t, depth)

    def check(self, value: Any) -> None:
        """Refuse `value` (about to be hashed) if it is a tuple nested too deep."""
        if type(value) is tuple:
            self.depth(value)

    def check_items(self, values: Any) -> None:
        """`check` each item of a list, tuple, set or dict (keys) about to be hashed."""
        if isinstance(values, (list, tuple, set, frozenset, dict)) and tuple in set(
            map(type, values)
        ):
            for v in values:
                if type(v) is tuple:
                    self.depth(v)


def _tuples_in(t: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    if len(t) > _SMALL and tuple not in set(map(type, t)):
        return []
    return [c for c in t if type(c) is tuple]
