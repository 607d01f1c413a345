"""One time budget per request, checked cooperatively by long work.

`with deadline(seconds):` sets the budget for everything the block runs, in this
thread and in threads started with a copy of its context (asyncio/anyio worker
threads copy it). A nested `deadline` keeps the earlier end. Long loops call
`check_deadline()` at safe points (between model tokens, agent steps, plan
steps, files of a search) and bound their own waits with `remaining_time()`, so
work past its budget stops instead of holding a worker thread.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from contextvars import ContextVar

from memagent.core.errors import DeadlineExceeded

_END: ContextVar[float | None] = ContextVar("memagent_deadline_end", default=None)


@contextlib.contextmanager
def deadline(seconds: float | None) -> Iterator[None]:
    """Run the block with at most `seconds` left (None: no new limit)."""
    if seconds is None:
        yield
        return
    end = time.monotonic() + seconds
    current = _END.get()
    token = _END.set(end if current is None else min(end, current))
    try:
        yield
    finally:
        _END.reset(token)


def remaining_time() -> float | None:
    """Seconds left in the current budget (never negative), or None when unbounded."""
    end = _END.get()
    return None if end is None else max(0.0, end - time.monotonic())


def check_deadline(what: str = "the request") -> None:
    """Raise `DeadlineExceeded` once the current budget is spent."""
    end = _END.get()
    if end is not None and time.monotonic() >= end:
        raise DeadlineExceeded(f"{what} ran out of time and was stopped")


def bounded(timeout: float) -> float:
    """`timeout`, shortened to what is left of the current budget."""
    left = remaining_time()
    return timeout if left is None else min(timeout, left)
