"""Run the app on the internet: connection hygiene and logging that never kills the loop.

uvicorn alone has no deadline for a request's head (a client that sends half a
request line holds its socket forever), accepts connections until the process
runs out of file descriptors, and logs the loop's errors through whatever a
dependency put on the root logger (the MCP SDK installs a Rich handler, whose
lazy imports fail with the very `EMFILE` they are reporting, and the loop dies).
`run_server` closes those holes:

- **Deadlines**: a request's head must arrive within `head_timeout_s` of the
  connection opening (or of the previous response on a kept-alive connection),
  its body within `body_timeout_s` of the head; an idle kept-alive connection
  closes after `keep_alive_s`, and one connection serves at most
  `max_requests_per_connection` requests.
- **Connection caps** below the descriptor limit, server-wide and per client
  address. At a cap, the connection that has waited longest for its head (at
  least `evict_after_s`) is closed to make room: half-open connections are the
  cheap ones to drop, so a flood of them cannot keep a real client out. When
  no connection can go, the new one is answered `503` with `Retry-After` and
  closed.
- **Descriptors**: the soft `RLIMIT_NOFILE` is raised to the hard limit at start,
  and the caps, the accept backlog and a reserve for the server's own files
  fit under it.
- **Logging**: the root logger gets one handler of ours that writes to stderr
  and never raises (a failing write falls back to a bare `os.write`); handlers
  a dependency installed on the root logger are removed, and the loop's
  exception handler cannot raise either.
- **Forwarded headers** (`X-Forwarded-For`, `-Proto`) are honoured only from the
  proxies named in `forwarded_allow_ips` (default none).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger("memagent.server")

_REFUSAL_BODY = (
    b'{"type":"https://memagent.dev/problems/busy","title":"Service Unavailable",'
    b'"status":503,"detail":"the server has too many connections; retry shortly",'
    b'"instance":"/"}'
)
_REFUSAL = (
    b"HTTP/1.1 503 Service Unavailable\r\n"
    b"content-type: application/problem+json\r\n"
    b"retry-after: 1\r\n"
    b"connection: close\r\n"
    b"content-length: " + str(len(_REFUSAL_BODY)).encode() + b"\r\n\r\n" + _REFUSAL_BODY
)


@dataclass(frozen=True)
class ConnectionLimits:
    """What one client connection may hold (the `serve` options)."""

    head_timeout_s: float = 10.0
    body_timeout_s: float = 30.0
    keep_alive_s: float = 5.0
    max_requests_per_connection: int = 1000
    max_connections: int = 4096
    max_per_client: int = 512
    evict_after_s: float = 1.0
    """A connection waiting for its head this long may be closed to make room."""
    backlog: int = 128
    reserve_fds: int = 64
    """Descriptors kept for the server's own files, databases and workers."""


@dataclass(frozen=True)
class Caps:
    """The caps in force once fitted under the descriptor limit."""

    total: int
    per_client: int
    backlog: int
    nofile: int


def raise_nofile_limit() -> int:
    """Raise the soft `RLIMIT_NOFILE` to the hard limit; return the soft limit now
    in force (on a platform without `resource`: a conservative 1024)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on POSIX
        return 1024
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        hard = max(soft, 1 << 20) if soft != resource.RLIM_INFINITY else 1 << 20
    if soft == resource.RLIM_INFINITY or soft >= hard:
        return int(hard if soft == resource.RLIM_INFINITY else soft)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        return int(hard)
    return int(soft)


def fit_caps(limits: ConnectionLimits, nofile: int) -> Caps:
    """The caps, the backlog and the reserve fitted under `nofile` descriptors: a
    burst of accepts (up to the backlog) on top of every connection at its cap
    still leaves the reserve free."""
    backlog = max(8, min(limits.backlog, nofile // 8))
    reserve = max(limits.reserve_fds, nofile // 4)
    room = max(8, nofile - reserve - backlog)
    total = min(limits.max_connections, room)
    return Caps(total, max(1, min(limits.max_per_client, total)), backlog, nofile)


@dataclass
class GuardStats:
    accepted: int = 0
    refused: int = 0
    evicted: int = 0
    head_timeouts: int = 0
    body_timeouts: int = 0


class ConnectionGuard:
    """Live connections, per client address, and those still waiting for a
    request head (oldest first): who may come in, and who goes to make room."""

    def __init__(self, caps: Caps, evict_after_s: float) -> None:
        self.caps = caps
        self.evict_after_s = evict_after_s
        self.live: dict[GuardedH11, str] = {}
        self.per_client: dict[str, int] = {}
        self.waiting: OrderedDict[GuardedH11, float] = OrderedDict()
        self.waiting_of: dict[str, OrderedDict[GuardedH11, float]] = {}
        self.stats = GuardStats()

    def admit(self, conn: GuardedH11, client: str, now: float) -> bool:
        """Register `conn`, closing an old half-open one at a cap; False: refuse it."""
        if len(self.live) >= self.caps.total and not self._evict(self.waiting, now):
            return False
        if self.per_client.get(client, 0) >= self.caps.per_client and not self._evict(
            self.waiting_of.get(client), now
        ):
            return False
        self.live[conn] = client
        self.per_client[client] = self.per_client.get(client, 0) + 1
        self.stats.accepted += 1
        return True

    def _evict(self, queue: OrderedDict[GuardedH11, float] | None, now: float) -> bool:
        if not queue:
            return False
        oldest, since = next(iter(queue.items()))
        if now - since < self.evict_after_s:
            return False
        self.stats.evicted += 1
        oldest.drop()
        return True

    def waiting_for_head(self, conn: GuardedH11, now: float) -> None:
        client = self.live.get(conn)
        if client is None:
            return
        self.head_arrived(conn)  # re-queued at the back
        self.waiting[conn] = now
        self.waiting_of.setdefault(client, OrderedDict())[conn] = now

    def head_arrived(self, conn: GuardedH11) -> None:
        client = self.live.get(conn)
        self.waiting.pop(conn, None)
        mine = self.waiting_of.get(client) if client is not None else None
        if mine is not None:
            mine.pop(conn, None)
            if not mine:
                del self.waiting_of[client]  # type: ignore[arg-type]

    def release(self, conn: GuardedH11) -> None:
        self.head_arrived(conn)
        client = self.live.pop(conn, None)
        if client is not None:
            left = self.per_client[client] - 1
            if left:
                self.per_client[client] = left
            else:
                del self.per_client[client]


class GuardedH11(H11Protocol):
    """uvicorn's h11 protocol with head/body deadlines, a request count per
    connection, and admission by a `ConnectionGuard` (see the module doc).
    `bind` makes a subclass for one guard."""

    guard: ClassVar[ConnectionGuard]
    limits: ClassVar[ConnectionLimits]

    @classmethod
    def bind(cls, guard: ConnectionGuard, limits: ConnectionLimits) -> type[GuardedH11]:
        return type("BoundGuardedH11", (cls,), {"guard": guard, "limits": limits})

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._phase = ""
        self._served = 0
        self._admitted = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        client = self.client[0] if self.client else "unknown"
        if not self.guard.admit(self, client, self.loop.time()):
            self.guard.stats.refused += 1
            with contextlib.suppress(Exception):
                transport.write(_REFUSAL)
            transport.close()
            return
        self._admitted = True
        self._await_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel()
        self.guard.release(self)
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if not self._admitted:
            return  # refused: its 503 is on the way out
        super().data_received(data)
        if self._admitted and not self.transport.is_closing():
            self._follow()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._served += 1
        if self.transport.is_closing():
            return
        if self._served >= self.limits.max_requests_per_connection:
            self.transport.close()
            return
        self._follow()

    def _follow(self) -> None:
        """Arm the deadline of what the connection now waits for from the client."""
        state = self.conn.their_state
        if state is h11.IDLE:
            if self._phase != "head":
                self._await_head()
        elif state is h11.SEND_BODY:
            if self._phase != "body":
                self.guard.head_arrived(self)
                self._arm("body", self.limits.body_timeout_s)
        else:  # the request is in; the app's own deadline takes over
            self.guard.head_arrived(self)
            self._cancel()

    def _await_head(self) -> None:
        self.guard.waiting_for_head(self, self.loop.time())
        self._arm("head", self.limits.head_timeout_s)

    def _arm(self, phase: str, seconds: float) -> None:
        self._cancel()
        self._phase = phase
        self._deadline = self.loop.call_later(seconds, self._expired)

    def _cancel(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline = None
        self._phase = ""

    def _expired(self) -> None:
        if self._phase == "head":
            self.guard.stats.head_timeouts += 1
        elif self._phase == "body":
            self.guard.stats.body_timeouts += 1
        self._deadline = None
        self.drop()

    def drop(self) -> None:
        """Close at once (descriptor freed now), telling a waiting app the client left."""
        self._cancel()
        self.guard.release(self)
        if self.cycle is not None and not self.cycle.response_complete:
            self.cycle.disconnected = True
            self.cycle.message_event.set()
        self.transport.abort()


# -- logging ---------------------------------------------------------------------------


class SafeStderrHandler(logging.Handler):
    """Writes records to stderr and never raises: a record that cannot be
    formatted or written (out of descriptors, closed stream) falls back to one
    bare `os.write` of its message, and failing that is dropped."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = self.format(record)
        except Exception:
            line = f"{record.levelname} {record.name}: {record.msg!s}"
        try:
            sys.stderr.write(line + "\n")
            sys.stderr.flush()
        except Exception:
            with contextlib.suppress(Exception):
                os.write(2, (line[:4000] + "\n").encode("utf-8", "replace"))

    def handleError(self, record: logging.LogRecord) -> None:
        """Never print a traceback (it may need files we have no descriptor for)."""


@dataclass
class _LoggingState:
    handler: SafeStderrHandler | None = field(default=None)


_state = _LoggingState()


def configure_logging(level: int = logging.WARNING) -> SafeStderrHandler:
    """The root logger gets exactly one handler, ours; a dependency's handler on
    it (the MCP SDK's Rich handler) is removed. Safe to call more than once."""
    root = logging.getLogger()
    handler = _state.handler or SafeStderrHandler()
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    _state.handler = handler
    for other in list(root.handlers):
        if other is not handler:
            root.removeHandler(other)
    if handler not in root.handlers:
        root.addHandler(handler)
    root.setLevel(level)
    logging.raiseExceptions = False  # a failing handler never raises into the caller
    return handler


def safe_exception_handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """The loop's exception handler: log one line, never raise (an exception
    here would stop the loop)."""
    try:
        exc = context.get("exception")
        message = context.get("message", "event loop error")
        log.error("%s: %s", message, f"{type(exc).__name__}: {exc}" if exc else "")
    except Exception:
        with contextlib.suppress(Exception):
            os.write(2, b"memagent: event loop error (not logged)\n")


# -- running ---------------------------------------------------------------------------


def server_config(
    app: Any,
    *,
    host: str,
    port: int,
    limits: ConnectionLimits | None = None,
    forwarded_allow_ips: list[str] | None = None,
    nofile: int | None = None,
) -> tuple[Any, ConnectionGuard]:
    """A uvicorn `Config` with the guarded protocol, and its guard."""
    import uvicorn

    limits = limits or ConnectionLimits()
    caps = fit_caps(limits, nofile if nofile is not None else raise_nofile_limit())
    guard = ConnectionGuard(caps, limits.evict_after_s)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        http=GuardedH11.bind(guard, limits),
        ws="none",
        lifespan="on",
        loop="asyncio",
        log_config=None,
        log_level="warning",
        access_log=False,
        backlog=caps.backlog,
        timeout_keep_alive=max(1, round(limits.keep_alive_s)),
        timeout_graceful_shutdown=5,
        proxy_headers=bool(forwarded_allow_ips),
        forwarded_allow_ips=list(forwarded_allow_ips or []) or None,
        h11_max_incomplete_event_size=64 * 1024,
    )
    return config, guard


def run_server(
    app: Any,
    *,
    host: str,
    port: int,
    limits: ConnectionLimits | None = None,
    forwarded_allow_ips: list[str] | None = None,
) -> None:
    """Serve `app` until stopped (SIGINT/SIGTERM), hardened as the module doc says."""
    import uvicorn

    configure_logging()
    config, _ = server_config(
        app, host=host, port=port, limits=limits, forwarded_allow_ips=forwarded_allow_ips
    )
    server = uvicorn.Server(config)

    async def main() -> None:
        asyncio.get_running_loop().set_exception_handler(safe_exception_handler)
        configure_logging()  # again: an import during startup may have added one
        await server.serve()

    asyncio.run(main())
