"""One time budget per request, checked cooperatively by long work.

`with deadline(seconds, cancel=event):` sets the budget for everything the block
runs, in this thread and in threads started with a copy of its context
(asyncio/anyio worker threads copy it; the plan executor copies it into its
pool). A nested `deadline` keeps the earlier end and the outer cancel event.
The budget ends when its time is up or when its cancel event is set (the server
sets it when it gives up on a request: a 504, a client gone), whichever is first.

Long loops call `check_deadline()` at safe points (between model tokens, agent
steps, plan steps, files of a search) and bound their own waits with
`remaining_time()`; work that runs outside Python's view (a llama.cpp decode
loop) takes `current_budget()` and asks `budget.stopped()` from its callback, so
work past its budget stops instead of holding a worker thread.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass

from memagent.core.errors import DeadlineExceeded


@dataclass(frozen=True)
class Budget:
    """What is left of a request's time: an end (monotonic clock) and a cancel event."""

    end: float | None = None
    cancel: threading.Event | None = None

    @property
    def bounded(self) -> bool:
        """Whether anything can stop the work (an end or a cancel event)."""
        return self.end is not None or self.cancel is not None

    def remaining(self) -> float | None:
        """Seconds left (0 once cancelled), or None when there is no end."""
        if self.cancel is not None and self.cancel.is_set():
            return 0.0
        return None if self.end is None else max(0.0, self.end - time.monotonic())

    def cancelled(self) -> bool:
        """Whether the cancel event is set (as opposed to the time being up)."""
        return self.cancel is not None and self.cancel.is_set()

    def stopped(self) -> bool:
        """Whether the work should stop now (time up or cancelled); cheap enough to
        ask once per generated token."""
        if self.cancel is not None and self.cancel.is_set():
            return True
        return self.end is not None and time.monotonic() >= self.end

    def check(self, what: str = "the request") -> None:
        """Raise `DeadlineExceeded` once the budget is spent or cancelled."""
        if self.cancel is not None and self.cancel.is_set():
            raise DeadlineExceeded(f"{what} was cancelled and stopped")
        if self.end is not None and time.monotonic() >= self.end:
            raise DeadlineExceeded(f"{what} ran out of time and was stopped")


_UNBOUNDED = Budget()
_BUDGET: ContextVar[Budget] = ContextVar("memagent_budget", default=_UNBOUNDED)


@contextlib.contextmanager
def deadline(seconds: float | None, *, cancel: threading.Event | None = None) -> Iterator[Budget]:
    """Run the block with at most `seconds` left (None: no new time limit), stopped
    early when `cancel` is set. Yields the block's budget."""
    current = _BUDGET.get()
    end = current.end
    if seconds is not None:
        mine = time.monotonic() + seconds
        end = mine if end is None else min(end, mine)
    event = current.cancel
    if cancel is not None and cancel is not event:
        event = cancel if event is None else _Either(event, cancel)
    budget = Budget(end=end, cancel=event)
    token = _BUDGET.set(budget)
    try:
        yield budget
    finally:
        _BUDGET.reset(token)


@contextlib.contextmanager
def within(budget: Budget) -> Iterator[Budget]:
    """Run the block under `budget` as it is (one taken with `current_budget()` in
    another thread: a pool thread that does not inherit the caller's context)."""
    token = _BUDGET.set(budget)
    try:
        yield budget
    finally:
        _BUDGET.reset(token)


def current_budget() -> Budget:
    """The budget of the work running now (unbounded outside any `deadline`)."""
    return _BUDGET.get()


def remaining_time() -> float | None:
    """Seconds left in the current budget (never negative), or None when unbounded."""
    return _BUDGET.get().remaining()


def check_deadline(what: str = "the request") -> None:
    """Raise `DeadlineExceeded` once the current budget is spent or cancelled."""
    _BUDGET.get().check(what)


def bounded(timeout: float) -> float:
    """`timeout`, shortened to what is left of the current budget."""
    left = remaining_time()
    return timeout if left is None else min(timeout, left)


class _Either(threading.Event):
    """Set when either of two events is (for `is_set`, all that budgets ask)."""

    def __init__(self, a: threading.Event, b: threading.Event) -> None:
        super().__init__()
        self._a, self._b = a, b

    def is_set(self) -> bool:
        return self._a.is_set() or self._b.is_set() or super().is_set()
