"""Limits that keep one client from hurting the others: body size, rate, time.

`BodyLimitMiddleware` reads the request body up front (refusing it with 413 as
soon as it passes the limit, whatever `Content-Length` claims) and replays it to
the app. `TimeoutMiddleware` sets the request's deadline (the work in its
threads checks it and stops, see `memagent.core.deadline`) and answers 504 when
the app has not started its response within the limit; a response that has
started (an MCP event stream) is not cut. `TokenBucket` is the per-key rate limit
the auth dependency applies.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Iterator

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memagent.core.deadline import deadline
from memagent.server._problems import problem_response


class BodyLimitMiddleware:
    def __init__(self, app: ASGIApp, *, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        too_big = problem_response(
            413,
            f"request body is larger than {self.max_bytes} bytes",
            instance=scope.get("path"),
            slug="body-too-large",
        )
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = -1
                if declared > self.max_bytes:
                    await too_big(scope, receive, send)
                    return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body = message.get("body", b"")
            size += len(body)
            if size > self.max_bytes:
                await too_big(scope, receive, send)
                return
            chunks.append(body)
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


class TimeoutMiddleware:
    def __init__(self, app: ASGIApp, *, seconds: float) -> None:
        self.app = app
        self.seconds = seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False
        # set once the request is over (answered, a 504, the client gone): work still
        # running for it in a thread stops at its next check, mid-token for a model
        over = threading.Event()
        with (
            deadline(self.seconds, cancel=over),
            anyio.move_on_after(self.seconds) as cancel_scope,
            _setting(over),
        ):

            async def send_wrapper(message: Message) -> None:
                nonlocal started
                if message["type"] == "http.response.start":
                    started = True
                    cancel_scope.deadline = math.inf
                await send(message)

            await self.app(scope, receive, send_wrapper)
        if cancel_scope.cancelled_caught and not started:
            response = problem_response(
                504,
                f"the request took longer than {self.seconds:g}s",
                instance=scope.get("path"),
                slug="timeout",
            )
            await response(scope, receive, send)


@contextlib.contextmanager
def _setting(event: threading.Event) -> Iterator[None]:
    try:
        yield
    finally:
        event.set()


class TokenBucket:
    """Per-key token buckets: `rate` requests per second on average, `burst` at once."""

    def __init__(self, *, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = burst
        self._state: dict[str, tuple[float, float]] = {}
        self._guard = threading.Lock()

    def take(self, key: str) -> float:
        """Spend one token; returns 0 when allowed, else seconds until one is free."""
        now = time.monotonic()
        with self._guard:
            tokens, last = self._state.get(key, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - last) * self.rate)
            if tokens >= 1.0:
                self._state[key] = (tokens - 1.0, now)
                return 0.0
            self._state[key] = (tokens, now)
            return (1.0 - tokens) / self.rate
