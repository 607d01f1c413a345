"""Streaming a reply as server-sent events: run the work in a thread, pass what it
emits to the event loop, and end with a problem document should it fail. The
HTTP chat (`/v1/chat/stream`, `/v1/chat/completions`) and the web page's chat
stream with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import logging
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

from memagent.core import DeadlineExceeded, MemagentError
from memagent.core.deadline import deadline
from memagent.llm import LLMError
from memagent.server._problems import Problem, status_of

_log = logging.getLogger("memagent.server")

SSE_MEDIA_TYPE = "text/event-stream"
Emit = Callable[[str, Any], None]
"""What streamed work is given: `emit(event, data)` sends one event."""


def problem_of(exc: BaseException, path: str) -> Problem:
    """The problem document a stream ends with when its work raised `exc`."""
    if isinstance(exc, MemagentError):
        status, slug = status_of(exc)
        detail = str(exc)
    elif isinstance(exc, LLMError):
        status, slug, detail = 502, "llm-failed", f"the language model failed: {exc}"
    else:
        _log.error("unhandled error in a stream on %s", path, exc_info=exc)
        status, slug, detail = 500, "error", "internal error (logged on the server)"
    return Problem(
        type=f"urn:memagent:problem:{slug}",
        title="Error",
        status=status,
        detail=detail,
        instance=path,
    )


async def events_from_thread(
    work: Callable[[Emit], None], path: str
) -> AsyncIterator[tuple[str, Any]]:
    """Run `work(emit)` in a thread (with this request's context: its deadline); yield
    what it emits, then an error if it raised. The loop waits on an asyncio queue, so
    a stream holds no worker thread of the shared pool while the model writes. When
    the client goes away, the next `emit` stops the work."""
    loop = asyncio.get_running_loop()
    items: asyncio.Queue[tuple[str, Any] | None] = asyncio.Queue()
    gone = threading.Event()

    def put(item: tuple[str, Any] | None) -> None:
        with contextlib.suppress(RuntimeError):  # the loop closed (server stopping)
            loop.call_soon_threadsafe(items.put_nowait, item)

    def emit(event: str, data: Any) -> None:
        if gone.is_set():
            raise DeadlineExceeded("the client went away")
        put((event, data))

    def run() -> None:
        try:
            with deadline(None, cancel=gone):  # the model stops at its next token
                work(emit)
        except BaseException as exc:
            put(("error", problem_of(exc, path).model_dump()))
        finally:
            put(None)

    context = contextvars.copy_context()
    threading.Thread(target=context.run, args=(run,), name="memagent-stream", daemon=True).start()
    try:
        while True:
            item = await items.get()
            if item is None:
                return
            yield item
    finally:
        gone.set()


def sse_event(event: str | None, data: Any) -> bytes:
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()
