"""Admission control: one user cannot take the server's workers from the others.

Every request is sorted into a route class before any work starts; each route
declares its class where it is defined (`@admits(RouteClass.MODEL)`), and the
middleware finds the route with Starlette's own matching:

- `meta` (`/health`, `/v1/me`, the OpenAPI document and docs): never counted,
  never queued. These routes are async, so they do not need a worker thread.
- `auth` (sign-in and sign-out of the web page, key management): a gate of its
  own, so signing in never queues behind work.
- `model` (chat, completions, profile learning: anything that calls the LLM),
  `search` (memory search, vault actions, MCP calls), `write` (other POST, PUT,
  PATCH, DELETE) and `read` (other GETs).

Two limits apply, both counted in requests *in flight* (not per second):

- per user (the user of the bearer key; the client address when there is no
  valid key): at most `per_user` at once over all classes, and in one class at
  most half its cap — or more while that still leaves a slot free and nobody
  waits, so a lone user (one app, many clients) can use an idle server, but
  never holds a whole class. One more answers 429 with `Retry-After` at once:
  it is the caller's own limit.
- per class, for the whole server: at most `caps[class]` at once. A request over
  the cap waits, without holding a thread, up to `queue_wait_s` for a slot, then
  answers 503 with `Retry-After`.

Requests with no valid key or session (identified by client address) pass one
gate of their own, `anon_cap` for the whole server, instead of the class gates:
however many addresses send them, they never take an authenticated user's slot.

Refusals are cheap (no thread, no store, the key check cached per process), and
a client that comes back before the `Retry-After` it was given gets its next
refusal only once that time is up (the wait holds no thread): ignoring
`Retry-After` then gains a client nothing, and a hammering client costs the
server about one refusal per connection per `Retry-After`, not thousands a second.
The same holds for the app's own 429s (the per-key rate limit, on every route,
`/v1/me` included): a caller back early waits out their `Retry-After` first.

The caps add up to fewer than the worker threads the app runs sync routes on, so
admitted work never waits for a thread, and a user within their limits is
served however hard another user pushes.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import re
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, TypeVar

from starlette.routing import BaseRoute, Match, compile_path
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memagent.core import Overloaded
from memagent.server._problems import problem_response

ANON_PREFIX = "addr:"
"""How `identify` names a caller with no valid key or session (by its address)."""
MAX_TRACKED = 4096
"""Identities whose Retry-After is remembered at once."""
SCOPE_KEY = "memagent.admission"
"""Where an admitted request's scope holds (the middleware, its caller's identity)."""


class Identify(Protocol):
    """Who a request is, for admission (`ServerRoot.identify`); `verify=False`:
    without reading the key store (only keys already seen valid count)."""

    def __call__(self, scope: Scope, *, verify: bool = True) -> str: ...


class RouteClass(StrEnum):
    META = "meta"
    AUTH = "auth"
    MODEL = "model"
    SEARCH = "search"
    WRITE = "write"
    READ = "read"


ADMISSION_ATTR = "__memagent_admission__"
"""Where `admits` stores a route's class: on its endpoint function (or ASGI app)."""

_T = TypeVar("_T")


@dataclass(frozen=True)
class Admission:
    """A route's declaration: its class, and the methods that are long-lived
    event streams waiting on the loop (they hold no worker, so are not counted)."""

    cls: RouteClass
    streams: frozenset[str] = frozenset()


def admits(cls: RouteClass, *, streams: Iterable[str] = ()) -> Callable[[_T], _T]:
    """Declare the admission class of a route where it is defined:

        @router.post("/v1/chat")
        @admits(RouteClass.MODEL)
        def chat(...): ...

    Also takes a mounted ASGI app (static files, the MCP endpoint). A route with no
    declaration is admitted as MODEL (the tightest gate) and named by
    `undeclared_routes`, which the test-suite checks over the whole app.
    `streams`: methods of this route that are event streams (see `Admission`)."""
    declared = Admission(cls, frozenset(m.upper() for m in streams))

    def mark(endpoint: _T) -> _T:
        setattr(endpoint, ADMISSION_ATTR, declared)
        return endpoint

    return mark


@dataclass(frozen=True)
class RouteEntry:
    """One route of the app as admission sees it: its full path, its methods
    (None: a mount, matched by prefix) and its declared class (None: undeclared)."""

    path: str
    methods: frozenset[str] | None
    declared: Admission | None
    regex: re.Pattern[str] | None

    def matches(self, method: str, path: str) -> Match:
        if self.methods is None:
            inside = path == self.path or path.startswith(self.path.rstrip("/") + "/")
            return Match.FULL if inside else Match.NONE
        assert self.regex is not None
        if not self.regex.match(path):
            return Match.NONE
        return Match.FULL if method in self.methods else Match.PARTIAL


def _declared(target: object) -> Admission | None:
    found = getattr(target, ADMISSION_ATTR, None)
    return found if isinstance(found, Admission) else None


def route_entries(routes: Sequence[BaseRoute]) -> list[RouteEntry]:
    """Every route of an app, routers included by FastAPI flattened to their
    full paths, in the order the app matches them."""
    try:
        from fastapi.routing import iter_route_contexts
    except ImportError:  # a FastAPI that keeps included routes flat
        flat: Iterable[Any] = routes
    else:
        flat = iter_route_contexts(routes)
    out: list[RouteEntry] = []
    for route in flat:
        path = getattr(route, "path", None)
        if not isinstance(path, str):
            continue
        methods = getattr(route, "methods", None)
        endpoint = getattr(route, "endpoint", None)
        if methods is None and endpoint is None:  # a mount: its app declares
            out.append(RouteEntry(path, None, _declared(getattr(route, "app", None)), None))
            continue
        wanted = frozenset(methods or {"GET", "HEAD"})
        if "GET" in wanted:
            wanted |= {"HEAD"}
        out.append(RouteEntry(path, wanted, _declared(endpoint), compile_path(path)[0]))
    return out


def undeclared_routes(routes: Sequence[BaseRoute]) -> list[str]:
    """'METHODS PATH' of each route that declares no admission class."""
    return [
        f"{','.join(sorted(e.methods or {'*'}))} {e.path}"
        for e in route_entries(routes)
        if e.declared is None
    ]


class RouteTable:
    """Maps a request (method, path) to its route's declared class before routing
    (an undeclared route: MODEL, the tightest gate), and whether the request is
    an event stream; answers are cached per (method, path), a bounded number."""

    CACHE = 4096

    def __init__(self, routes: Sequence[BaseRoute]) -> None:
        self.entries = route_entries(routes)
        self.cache: dict[tuple[str, str], tuple[RouteClass, bool]] = {}

    def classify(self, method: str, path: str) -> tuple[RouteClass, bool]:
        key = (method, path)
        found = self.cache.get(key)
        if found is not None:
            return found
        partial: tuple[RouteClass, bool] | None = None
        undeclared = Admission(RouteClass.MODEL)
        for entry in self.entries:
            match = entry.matches(method, path)
            if match is not Match.NONE:
                declared = entry.declared or undeclared
                answer = (declared.cls, method in declared.streams)
                if match is Match.FULL:
                    found = answer
                    break
                partial = partial or answer
        # no route at all: a cheap 404 (READ); a wrong method: its route's class
        found = found or partial or (RouteClass.READ, False)
        if len(self.cache) >= self.CACHE:
            self.cache.clear()
        self.cache[key] = found
        return found


@dataclass
class AdmissionLimits:
    per_user: int = 16
    caps: dict[RouteClass, int] = field(
        default_factory=lambda: {
            RouteClass.AUTH: 2,
            RouteClass.MODEL: 4,
            RouteClass.SEARCH: 8,
            RouteClass.WRITE: 8,
            RouteClass.READ: 12,
        }
    )
    queue_wait_s: float = 0.5
    anon_cap: int = 4
    """Requests without a valid key or session in flight server-wide."""
    max_held_refusals: int = 1024
    """Refusals held until their client's Retry-After is up, at most, at once
    (more are answered at once)."""


class _Gate:
    """A counter with a cap that async waiters queue on in arrival order."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.used = 0
        self.waiters: list[asyncio.Future[None]] = []

    async def enter(self, wait_s: float) -> bool:
        if self.used < self.cap and not self.waiters:
            self.used += 1
            return True
        if wait_s <= 0:
            return False
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiters.append(fut)
        try:
            await asyncio.wait_for(asyncio.shield(fut), wait_s)
            return True  # leave() handed its slot over
        except TimeoutError:
            if fut.done():  # the slot arrived as the wait ended: keep it
                return True
            fut.cancel()
            return False
        finally:
            if fut in self.waiters:
                self.waiters.remove(fut)

    def spare(self) -> bool:
        """Whether one more request leaves a slot free and nobody is waiting."""
        return not self.waiters and self.used + 1 < self.cap

    def leave(self) -> None:
        while self.waiters:
            fut = self.waiters.pop(0)
            if not fut.done():
                fut.set_result(None)  # the slot passes on; `used` stays
                return
        self.used -= 1


class AdmissionMiddleware:
    """Counts requests in flight per user and per route class; see the module doc."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        limits: AdmissionLimits,
        identify: Identify,
        routes: Callable[[], Sequence[BaseRoute]],
    ) -> None:
        """`routes`: the app's routes, read at the first request (when every
        route and mount has been added)."""
        self.app = app
        self.routes = routes
        self.table: RouteTable | None = None
        self.limits = limits
        self.identify = identify
        self.gates = {cls: _Gate(cap) for cls, cap in limits.caps.items()}
        self.anon_gate = _Gate(limits.anon_cap)
        self.in_flight: dict[str, int] = {}
        self.refused_until: dict[str, float] = {}
        """Per identity, when the Retry-After of its last refusal is up (loop time)."""
        self.rate_until: dict[str, float] = {}
        """Per identity, when the Retry-After of the app's last 429 to it is up."""
        self.held = 0
        self.retry_after = max(1, math.ceil(limits.queue_wait_s * 2))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.table is None:
            self.table = RouteTable(self.routes())
        cls, stream = self.table.classify(scope["method"], scope["path"])
        passing = cls is RouteClass.META or stream
        # a request that is not admitted here reads no key store on the loop
        who = self.identify(scope, verify=not passing)
        await self._pace(who)
        app_send = self._watching(send, who)
        if passing:
            # An event stream (GET /mcp) waits on the loop and holds no worker.
            await self.app(scope, receive, app_send)
            return
        held = self.in_flight.get(who, 0)
        anon = who.startswith(ANON_PREFIX) and cls is not RouteClass.AUTH
        gate = self.anon_gate if anon else self.gates[cls]
        what = "keyless" if anon else cls.value
        in_class = self.in_flight.get(f"{who}\0{what}", 0)
        share = max(1, gate.cap // 2)
        if held >= self.limits.per_user or (in_class >= share and not gate.spare()):
            limit, kind = (
                (self.limits.per_user, "requests")
                if held >= self.limits.per_user
                else (share, f"{what} requests")
            )
            await self._hold_if_early(who)
            await self._refuse(
                scope,
                receive,
                send,
                429,
                f"too many {kind} in flight for this user; at most {limit} at once",
                "too-many-in-flight",
            )
            return
        self._count(who, +1)
        self._count(f"{who}\0{what}", +1)
        try:
            if not await gate.enter(self.limits.queue_wait_s):
                self._note_refusal(who)
                await self._refuse(
                    scope,
                    receive,
                    send,
                    503,
                    f"the server is busy with {what} requests (at most {gate.cap} at "
                    "once); retry shortly",
                    "busy",
                )
                return
            scope[SCOPE_KEY] = (self, who)
            try:
                await self.app(scope, receive, app_send)
            finally:
                gate.leave()
        finally:
            self._count(who, -1)
            self._count(f"{who}\0{what}", -1)

    @contextlib.asynccontextmanager
    async def hold(self, who: str, cls: RouteClass) -> AsyncIterator[None]:
        """A slot of `cls` for work of that class inside a request admitted as
        another (an MCP tool call that runs the model): the same per-user share and
        class cap a request of `cls` meets; `Overloaded` (one sentence) when none is
        free within `queue_wait_s`."""
        gate = self.gates[cls]
        name = f"{who}\0{cls.value}"
        share = max(1, gate.cap // 2)
        if self.in_flight.get(name, 0) >= share and not gate.spare():
            raise Overloaded(
                f"too many {cls.value} requests in flight for this user; at most {share} at once"
            )
        self._count(name, +1)
        try:
            if not await gate.enter(self.limits.queue_wait_s):
                raise Overloaded(
                    f"the server is busy with {cls.value} requests (at most {gate.cap} at "
                    "once); retry shortly"
                )
            try:
                yield
            finally:
                gate.leave()
        finally:
            self._count(name, -1)

    def _count(self, name: str, step: int) -> None:
        n = self.in_flight.get(name, 0) + step
        if n:
            self.in_flight[name] = n
        else:
            del self.in_flight[name]

    async def _hold_if_early(self, who: str) -> None:
        """Wait out `who`'s current Retry-After, if it has one (it came back early);
        then start a new one."""
        await self._wait_until(self.refused_until.get(who, 0.0))
        self._note_refusal(who)

    def _note_refusal(self, who: str) -> None:
        _note(self.refused_until, who, asyncio.get_running_loop().time() + self.retry_after)

    async def _pace(self, who: str) -> None:
        """A caller back before the Retry-After of its last rate-limit refusal (the
        app's 429, e.g. the per-key rate) waits that out here, holding no thread,
        then goes on; so hammering a rate limit gains nothing and costs little."""
        await self._wait_until(self.rate_until.get(who, 0.0))

    async def _wait_until(self, until: float) -> None:
        """Sleep until loop time `until`, holding no thread; at most
        `max_held_refusals` callers wait at once (the rest go on at once)."""
        wait = until - asyncio.get_running_loop().time()
        if wait > 0 and self.held < self.limits.max_held_refusals:
            self.held += 1
            try:
                await asyncio.sleep(wait)
            finally:
                self.held -= 1

    def _watching(self, send: Send, who: str) -> Send:
        """`send`, noting a 429 of the app's own (with its Retry-After) for `who`."""

        async def watched(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 429:
                for name, value in message.get("headers", []):
                    if name.lower() == b"retry-after" and value.isdigit():
                        until = asyncio.get_running_loop().time() + min(int(value), 60)
                        _note(self.rate_until, who, until)
            await send(message)

        return watched

    async def _refuse(
        self, scope: Scope, receive: Receive, send: Send, status: int, detail: str, slug: str
    ) -> None:
        response = problem_response(
            status,
            detail,
            instance=scope.get("path"),
            slug=slug,
            headers={"Retry-After": str(self.retry_after)},
        )
        await response(scope, receive, send)


def _note(until: dict[str, float], who: str, when: float) -> None:
    """`until[who] = when`, remembering at most `MAX_TRACKED` callers (past ones
    are forgotten first; with that many refused at once, the new one is not held)."""
    if len(until) >= MAX_TRACKED and who not in until:
        now = asyncio.get_running_loop().time()
        for name in [n for n, t in until.items() if t <= now]:
            del until[name]
        if len(until) >= MAX_TRACKED:
            return
    until[who] = when
