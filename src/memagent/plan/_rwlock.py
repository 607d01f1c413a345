"""Asyncio multi-granularity read/write locks over resource names.

A resource is locked in S (read) or X (write) mode; each of its ancestors
(`vault:`, `vault:entities/` for `vault:entities/a.md`) is locked in the matching
intention mode (IS / IX), so a writer of `vault:entities/` excludes readers and
writers of every file under it while unrelated files proceed. Every step takes all
its locks in one global (sorted) order, so there is no deadlock, and a step that
reads and writes one resource asks for one combined mode. Locks prefer writers: a
new reader waits behind a queued writer it conflicts with, so writers never starve.
"""

from __future__ import annotations

import asyncio
import functools
from collections import deque
from collections.abc import Iterable, Sequence

from memagent.plan.spec import is_prefix_resource

IS, IX, S, X = 0, 1, 2, 3
MODE_NAMES = ("IS", "IX", "S", "X")
_COMPAT = (
    (True, True, True, False),
    (True, True, False, False),
    (True, False, True, False),
    (False, False, False, False),
)
_WRITER = (False, True, False, True)
# Combining two modes on one key (S + IX would be SIX; X is the safe superset).
_JOIN = (
    (IS, IX, S, X),
    (IX, IX, X, X),
    (S, X, S, X),
    (X, X, X, X),
)

LockRequest = tuple[str, int]


@functools.lru_cache(maxsize=8192)
def ancestors(resource: str) -> tuple[str, ...]:
    """Prefix resources that contain `resource` (not itself), outermost first."""
    out = []
    for i, ch in enumerate(resource[:-1]):
        if ch in "/:":
            out.append(resource[: i + 1])
    return tuple(out)


def lock_requests(reads: Iterable[str], writes: Iterable[str]) -> tuple[LockRequest, ...]:
    """The (resource, mode) pairs a step takes, in the global acquisition order."""
    modes: dict[str, int] = {}

    def want(key: str, mode: int) -> None:
        old = modes.get(key)
        modes[key] = mode if old is None else _JOIN[old][mode]

    for r in reads:
        want(r, S)
        for a in ancestors(r):
            want(a, IS)
    for w in writes:
        want(w, X)
        for a in ancestors(w):
            want(a, IX)
    return tuple(sorted(modes.items()))


def requests_conflict(a: Sequence[LockRequest], b: Sequence[LockRequest]) -> bool:
    """True if two steps holding these requests would exclude each other."""
    modes = dict(a)
    return any(k in modes and not _COMPAT[modes[k]][m] for k, m in b)


class _Waiter:
    __slots__ = ("future", "mode")

    def __init__(self, mode: int, future: asyncio.Future[None]) -> None:
        self.mode = mode
        self.future = future


class ModeLock:
    """One resource's lock: counts of holders per mode plus a FIFO of waiters."""

    __slots__ = ("held", "waiters")

    def __init__(self) -> None:
        self.held = [0, 0, 0, 0]
        self.waiters: deque[_Waiter] = deque()

    @property
    def idle(self) -> bool:
        return not self.waiters and not any(self.held)

    def _fits(self, mode: int, ahead: Iterable[_Waiter]) -> bool:
        row = _COMPAT[mode]
        held = self.held
        if not all(row[m] or not held[m] for m in range(4)):
            return False
        # A writer may pass queued readers; nobody passes a conflicting writer.
        writer = _WRITER[mode]
        return all(row[w.mode] or (writer and not _WRITER[w.mode]) for w in ahead)

    async def acquire(self, mode: int) -> None:
        if self._fits(mode, self.waiters):
            self.held[mode] += 1
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        waiter = _Waiter(mode, fut)
        self.waiters.append(waiter)
        try:
            await fut
        except BaseException:
            if fut.done() and not fut.cancelled():
                self.release(mode)
            else:
                self.waiters.remove(waiter)
                self._wake()
            raise

    def release(self, mode: int) -> None:
        self.held[mode] -= 1
        self._wake()

    def _wake(self) -> None:
        if not self.waiters:
            return
        still: list[_Waiter] = []
        for w in self.waiters:
            if not w.future.done() and self._fits(w.mode, still):
                self.held[w.mode] += 1
                w.future.set_result(None)
            elif not w.future.done():
                still.append(w)
        self.waiters = deque(still)


class LockTable:
    """The locks of one executor (on one event loop), created on demand."""

    def __init__(self) -> None:
        self._locks: dict[str, ModeLock] = {}

    async def acquire_all(self, requests: Sequence[LockRequest]) -> None:
        """Take every lock in order; on failure or cancellation release those taken."""
        taken = 0
        try:
            for key, mode in requests:
                lock = self._locks.get(key)
                if lock is None:
                    lock = self._locks[key] = ModeLock()
                await lock.acquire(mode)
                taken += 1
        except BaseException:
            self.release_all(requests[:taken])
            key = requests[taken][0]
            lock = self._locks.get(key)
            if lock is not None and lock.idle:
                del self._locks[key]
            raise

    def release_all(self, requests: Sequence[LockRequest]) -> None:
        for key, mode in reversed(requests):
            lock = self._locks[key]
            lock.release(mode)
            if lock.idle:
                del self._locks[key]

    def held(self) -> dict[str, str]:
        """Resources currently locked, with the strongest mode held (diagnostics)."""
        out = {}
        for key, lock in self._locks.items():
            modes = [MODE_NAMES[m] for m in range(4) if lock.held[m]]
            if modes:
                out[key] = "+".join(modes)
        return out


__all__ = [
    "IS",
    "IX",
    "LockRequest",
    "LockTable",
    "ModeLock",
    "S",
    "X",
    "ancestors",
    "is_prefix_resource",
    "lock_requests",
    "requests_conflict",
]
