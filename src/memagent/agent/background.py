"""One worker thread for memory writes that must not delay the reply.

Jobs run in submission order; `flush()` waits until every submitted job is
done (tests, `memagent ask`, the end of `memagent chat`), or at most a timeout. A failing job is
recorded in `errors` (and reported by the agent), never raised into the loop.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import Any


class BackgroundWriter:
    def __init__(self, name: str = "memagent-agent-writer") -> None:
        self._jobs: queue.Queue[tuple[str, Callable[[], Any]] | None] = queue.Queue()
        self.errors: list[str] = []
        self.done: list[str] = []
        self._thread = threading.Thread(target=self._work, name=name, daemon=True)
        self._thread.start()
        self._closed = False

    def submit(self, label: str, job: Callable[[], Any]) -> None:
        if self._closed:
            raise RuntimeError("the background writer is closed")
        self._jobs.put((label, job))

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every submitted job is done (at most `timeout` seconds);
        True when they all are."""
        if timeout is None:
            self._jobs.join()
            return True
        deadline = time.monotonic() + timeout
        with self._jobs.all_tasks_done:
            while self._jobs.unfinished_tasks:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._jobs.all_tasks_done.wait(left)
        return True

    def abandon(self) -> None:
        """Stop taking jobs without waiting for the one running (a daemon thread:
        it ends with the process). For work that is kept durably elsewhere."""
        self._closed = True

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._jobs.put(None)
            self._thread.join()

    def _work(self) -> None:
        while True:
            item = self._jobs.get()
            try:
                if item is None:
                    return
                label, job = item
                try:
                    job()
                    self.done.append(label)
                except Exception as exc:  # reported, never raised into the loop
                    self.errors.append(f"{label}: {type(exc).__name__}: {exc}")
            finally:
                self._jobs.task_done()
