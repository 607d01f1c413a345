"""Progress of long work on stderr: "what: N of M unit".

On a terminal it is a Rich bar with the counts (removed when done); otherwise
(a pipe, a log file, CI) one plain line at most every `every_s` seconds and a
last one at the end, so long silent work is never silent. stdout is untouched.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from memagent.cli._common import err_console

Update = Callable[[int, int], None]


@contextlib.contextmanager
def progress(what: str, unit: str = "", *, every_s: float = 2.0) -> Iterator[Update]:
    """Yields `update(done, total)`; shows nothing for work that ends within `every_s`."""
    suffix = f" {unit}" if unit else ""
    if err_console.is_terminal:
        columns = (
            TextColumn(f"{what}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn(unit),
            TimeElapsedColumn(),
        )
        with Progress(*columns, console=err_console, transient=True) as bar:
            task = bar.add_task(what, total=None)
            yield lambda done, total: bar.update(task, completed=done, total=total)
        return
    started = time.monotonic()
    last = started
    state = {"done": 0, "total": 0, "shown": False}

    def update(done: int, total: int) -> None:
        nonlocal last
        state["done"], state["total"] = done, total
        now = time.monotonic()
        if now - last >= every_s:
            last = now
            state["shown"] = True
            sys.stderr.write(f"{what}: {done} of {total}{suffix}\n")
            sys.stderr.flush()

    yield update
    if state["shown"]:
        sys.stderr.write(f"{what}: {state['done']} of {state['total']}{suffix}, done\n")
        sys.stderr.flush()
