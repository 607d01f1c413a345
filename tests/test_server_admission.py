"""Fair sharing in `memagent serve`: the issue's reproductions, asserting that the
victim is still served while one attacker saturates its own limits, that limits
answer 429/503 with Retry-After, that a deadline really stops work, and that
`max_tokens` is capped."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.routing import Route

from memagent.llm import ChatResult, ScriptedLLM
from memagent.llm.base import MessageLike
from memagent.server import KeyStore, ServerSettings, create_app
from memagent.server._admission import (
    AdmissionLimits,
    AdmissionMiddleware,
    RouteClass,
    RouteTable,
    admits,
    route_entries,
    undeclared_routes,
)
from memagent.server.testing import LiveServer, assert_problem

USERS = ("alice", "mallory", "bob", "carol")


@dataclass
class Setup:
    root: Path
    url: str
    keys: dict[str, str]

    def client(self, user: str) -> httpx.Client:
        return httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {self.keys[user]}"}, timeout=60
        )


class RecordingLLM(ScriptedLLM):
    """A slow scripted model that records how each call ended and its max_tokens."""

    def __init__(self, delay_s: float) -> None:
        super().__init__(fn=lambda messages, schema: "A slow answer.", delay_s=delay_s)
        self.ended: list[str] = []
        self.max_tokens: list[int] = []
        self._guard = threading.Lock()

    def chat(self, messages: Sequence[MessageLike], **kw: Any) -> ChatResult:
        with self._guard:
            self.max_tokens.append(int(kw.get("max_tokens", 0)))
        try:
            result = super().chat(messages, **kw)
        except BaseException as exc:
            with self._guard:
                self.ended.append(type(exc).__name__)
            raise
        with self._guard:
            self.ended.append("ok")
        return result


def _serve(tmp_path: Path, llm: Any, **settings: Any) -> Iterator[Setup]:
    root = tmp_path / "server"
    store = KeyStore(root)
    keys = {u: store.create(user=u)[0] for u in USERS}
    app = create_app(root, ServerSettings(mcp=False, embeddings=False, **settings), llm=llm)
    with LiveServer(app) as live:
        yield Setup(root, live.url, keys)


def _completion(client: httpx.Client, **extra: Any) -> httpx.Response:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], **extra}
    body.setdefault("memory", {"recall_k": 0, "remember": False})
    return client.post("/v1/chat/completions", json=body)


@pytest.fixture
def slow(tmp_path: Path) -> Iterator[tuple[Setup, RecordingLLM]]:
    llm = RecordingLLM(delay_s=1.5)
    for s in _serve(tmp_path, llm):
        yield s, llm


@pytest.fixture(scope="module")
def whole_app(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The app with every mount: the web page, MCP, and FastAPI's own docs."""
    root = tmp_path_factory.mktemp("routes")
    return create_app(root, ServerSettings(embeddings=False, mcp=True, ui=True))


def test_every_route_of_the_app_declares_its_admission_class(whole_app: Any) -> None:
    entries = route_entries(whole_app.routes)
    paths = {e.path for e in entries}
    assert {"/health", "/v1/chat", "/ui/chat", "/ui/chat/stream", "/mcp", "/ui/static"} <= paths
    assert {"/openapi.json", "/docs", "/redoc"} <= paths
    assert len(entries) > 50
    assert undeclared_routes(whole_app.routes) == []


@pytest.mark.parametrize(
    ("method", "path", "want", "stream"),
    [
        ("GET", "/health", RouteClass.META, False),
        ("GET", "/v1/me", RouteClass.META, False),
        ("GET", "/openapi.json", RouteClass.META, False),
        ("POST", "/ui/login", RouteClass.AUTH, False),  # never behind work
        ("POST", "/v1/admin/keys", RouteClass.AUTH, False),
        ("DELETE", "/v1/admin/keys/k1", RouteClass.AUTH, False),
        ("POST", "/v1/chat/completions", RouteClass.MODEL, False),
        ("POST", "/v1/profile/learn", RouteClass.MODEL, False),
        ("POST", "/ui/chat", RouteClass.MODEL, False),  # the page's chat calls the model
        ("POST", "/ui/chat/stream", RouteClass.MODEL, False),
        ("GET", "/ui/chat", RouteClass.READ, False),  # the page itself does not
        ("GET", "/v1/memories/search", RouteClass.SEARCH, False),  # counted, not passed
        ("POST", "/v1/vault/actions", RouteClass.SEARCH, False),
        ("POST", "/mcp", RouteClass.SEARCH, False),
        ("GET", "/mcp", RouteClass.SEARCH, True),  # the event stream holds no worker
        ("PUT", "/v1/vault/notes/a/b.md", RouteClass.WRITE, False),
        ("GET", "/v1/memories", RouteClass.READ, False),
        ("GET", "/ui/static/app.css", RouteClass.META, False),  # several per page
        ("GET", "/no/such/route", RouteClass.READ, False),
        ("PUT", "/health", RouteClass.META, False),  # wrong method: its route's class
    ],
)
def test_requests_take_the_class_their_route_declares(
    whole_app: Any, method: str, path: str, want: RouteClass, stream: bool
) -> None:
    assert RouteTable(whole_app.routes).classify(method, path) == (want, stream)


def test_a_route_without_a_declaration_is_named_and_gets_the_tightest_gate() -> None:
    def declared() -> None: ...

    def forgotten() -> None: ...

    routes: list[Any] = [
        Route("/a", admits(RouteClass.READ)(declared)),
        Route("/b/{x}", forgotten, methods=["POST"]),
    ]
    assert undeclared_routes(routes) == ["POST /b/{x}"]
    assert RouteTable(routes).classify("POST", "/b/1") == (RouteClass.MODEL, False)
    assert RouteTable(routes).classify("GET", "/a") == (RouteClass.READ, False)


@pytest.mark.slow
def test_attacker_flood_of_slow_chats_leaves_victim_served(
    slow: tuple[Setup, RecordingLLM],
) -> None:
    s, _ = slow
    attacker, victim = s.client("mallory"), s.client("alice")
    with ThreadPoolExecutor(45) as pool:
        flood = [pool.submit(_completion, attacker) for _ in range(45)]
        time.sleep(0.3)  # let the flood arrive first
        health = victim.get("/health")
        me = victim.get("/v1/me")
        wrote = victim.post("/v1/memories", json={"text": "victim still writes"})
        listed = victim.get("/v1/memories")
        chat = _completion(victim)
        answers = [f.result() for f in flood]
    assert health.status_code == 200 and me.json()["user"] == "alice"
    assert wrote.status_code in (200, 201), wrote.text
    assert listed.status_code == 200
    assert chat.status_code == 200, chat.text
    codes = [a.status_code for a in answers]
    assert codes.count(200) >= 2 and codes.count(429) >= 40, codes
    refused = next(a for a in answers if a.status_code == 429)
    assert_problem(refused, 429)
    assert int(refused.headers["Retry-After"]) >= 1
    assert "in flight" in refused.json()["detail"]


@pytest.mark.slow
def test_class_cap_answers_503_with_retry_after(tmp_path: Path) -> None:
    for s in _serve(tmp_path, RecordingLLM(delay_s=1.5), model_in_flight=2, queue_wait_s=0.1):
        clients = {u: s.client(u) for u in ("alice", "bob", "carol")}
        with ThreadPoolExecutor(2) as pool:
            busy = [pool.submit(_completion, clients[u]) for u in ("alice", "bob")]
            time.sleep(0.4)
            third = _completion(clients["carol"])
            assert [f.result().status_code for f in busy] == [200, 200]
        assert_problem(third, 503)
        assert int(third.headers["Retry-After"]) >= 1
        assert clients["carol"].get("/v1/me").status_code == 200


@pytest.mark.slow
def test_catastrophic_regex_stays_within_one_budget_and_victim_is_served(
    tmp_path: Path,
) -> None:
    for s in _serve(tmp_path, ScriptedLLM(["unused"])):
        attacker, victim = s.client("mallory"), s.client("alice")
        evil = ("a" * 28 + "!\n") * 100
        assert attacker.put("/v1/vault/notes/evil.md", json={"content": evil}).status_code == 200
        search = {"actions": [{"action": "search_files", "query": "(a|aa)+$", "regex": True}]}
        batch = {
            "actions": [
                {"action": "read_file", "path": "user.md"},
                {"action": "list_files", "path": ""},
            ]
        }
        with ThreadPoolExecutor(4) as pool:
            attacks = [
                pool.submit(attacker.post, "/v1/vault/actions", json=search) for _ in range(4)
            ]
            time.sleep(0.2)
            mine = victim.post("/v1/vault/actions", json=batch)
            results = [f.result() for f in attacks]
        assert mine.status_code == 200 and mine.json()["ok"], mine.text
        for r in results:
            assert r.status_code == 200, r.text
            entry = r.json()["results"][0]
            # one regex search at a time per memory: the others wait, then give up
            assert not entry["ok"], entry
            assert "took longer" in entry["error"] or "still running" in entry["error"]


def test_deadline_stops_the_model_call(tmp_path: Path) -> None:
    llm = RecordingLLM(delay_s=30)
    for s in _serve(tmp_path, llm, request_timeout_s=0.5):
        r = _completion(s.client("alice"))
        assert_problem(r, 504)
        for _ in range(200):  # the model's thread stops at its next check
            if llm.ended:
                break
            time.sleep(0.05)
        assert llm.ended == ["DeadlineExceeded"]
        assert s.client("alice").get("/health").status_code == 200


def test_deadline_closes_an_openai_compatible_model_call(tmp_path: Path) -> None:
    """The same through the OpenAI-compatible backend against a fake server on
    loopback: the 504 stops the (non-streamed) call, which hangs up on the server."""
    from memagent.llm.openai_compat import OpenAICompatLLM
    from test_llm_openai import FakeServer, SlowStream

    stream = SlowStream()
    fake = FakeServer(lambda body: (200, stream))
    try:
        llm = OpenAICompatLLM("fake-model", base_url=fake.url, max_retries=0)
        for s in _serve(tmp_path, llm, request_timeout_s=0.5):
            assert_problem(_completion(s.client("alice")), 504)
            assert stream.done.wait(120)  # a hang guard: slow only on a loaded machine
            assert stream.closed_by_client and stream.sent < stream.total
            assert fake.requests[0]["stream"] is True
    finally:
        fake.close()


def test_max_tokens_is_capped_by_config(tmp_path: Path) -> None:
    llm = RecordingLLM(delay_s=0)
    for s in _serve(tmp_path, llm, max_tokens=64):
        r = _completion(s.client("alice"), max_tokens=32_768)
        assert r.status_code == 200, r.text
        r = _completion(s.client("alice"), max_tokens=10)
        assert r.status_code == 200, r.text
    assert llm.max_tokens == [64, 10]


def test_caps_must_leave_threads_for_health(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="keep them under"):
        create_app(
            tmp_path / "server",
            ServerSettings(mcp=False, model_in_flight=20, search_in_flight=20),
        )


def test_identities_for_admission(tmp_path: Path) -> None:
    from memagent.server._context import UI_COOKIE, ServerRoot
    from memagent.server.ui._session import COOKIE

    assert UI_COOKIE == COOKIE
    root = tmp_path / "server"
    key, _ = KeyStore(root).create(user="alice")
    server = ServerRoot.open(root, rate=10, burst=10)
    client = ("10.0.0.1", 1234)

    def who(*headers: tuple[bytes, bytes]) -> str:
        return server.identify({"headers": list(headers), "client": client})

    bearer = (b"authorization", f"Bearer {key}".encode())
    # routes answered on the loop (/health) read no key store: an unseen key is keyless
    assert server.identify({"headers": [bearer], "client": client}, verify=False) == (
        "addr:10.0.0.1"
    )
    assert who(bearer) == "user:alice"  # checked once, then known without reading
    assert server.identify({"headers": [bearer], "client": client}, verify=False) == "user:alice"
    assert who((b"authorization", b"Bearer nonsense")) == "addr:10.0.0.1"
    # a web session counts as its user once the page has found it valid; until then
    # (or a forged cookie) it is keyless, by address
    assert who((b"cookie", f"{COOKIE}=abc".encode())) == "addr:10.0.0.1"
    server.note_session("abc", "alice")
    assert who((b"cookie", f"x=1; {COOKIE}=abc".encode())) == "user:alice"
    assert who((b"cookie", f"{COOKIE}=abd".encode())) == "addr:10.0.0.1"
    assert who() == "addr:10.0.0.1"
    server.close()


# -- the middleware on its own: refusals held for clients that come back early, and
# keyless requests in a gate of their own ----------------------------------------------


class _Blocking:
    """An ASGI app whose requests answer 200 once `release` is set."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.started = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        self.started += 1
        await self.release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


def _call(mw: AdmissionMiddleware, who: str, path: str = "/v1/memories") -> asyncio.Task[int]:
    async def run() -> int:
        status = 0

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message: Any) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]

        scope = {"type": "http", "method": "GET", "path": path, "headers": [], "who": who}
        await mw(scope, receive, send)
        return status

    return asyncio.ensure_future(run())


def _noop() -> None: ...


_ROUTES = [
    Route("/v1/memories", admits(RouteClass.READ)(_noop)),
    Route("/ui/login", admits(RouteClass.AUTH)(lambda: None)),
]


def _middleware(app: _Blocking, **limits: Any) -> AdmissionMiddleware:
    return AdmissionMiddleware(
        app, limits=AdmissionLimits(**limits), identify=_who_in_scope, routes=lambda: _ROUTES
    )


def _who_in_scope(scope: Any, *, verify: bool = True) -> str:
    return str(scope["who"])


def test_a_client_that_ignores_retry_after_waits_it_out() -> None:
    async def scenario() -> None:
        app = _Blocking()
        mw = _middleware(app, per_user=1, queue_wait_s=0.5)
        first = _call(mw, "user:mallory")
        await asyncio.sleep(0)
        refused = await _call(mw, "user:mallory")  # over its limit: refused at once
        assert refused == 429 and mw.held == 0
        early = _call(mw, "user:mallory")  # back before its Retry-After: held, no work
        other = _call(mw, "user:alice")  # another user is not held
        await asyncio.sleep(0.05)
        assert mw.held == 1 and not early.done() and app.started == 2
        app.release.set()
        assert await other == 200 and await first == 200
        assert await early == 429 and mw.held == 0

    asyncio.run(scenario())


def test_keyless_requests_cannot_take_authenticated_slots() -> None:
    async def scenario() -> None:
        app = _Blocking()
        mw = _middleware(app, per_user=16, anon_cap=2, queue_wait_s=0.05)
        # keyless requests from many addresses fill their own gate, and no more
        keyless = [_call(mw, f"addr:10.0.0.{i}") for i in range(6)]
        await asyncio.sleep(0.2)
        assert app.started == 2
        users = [_call(mw, f"user:u{i}") for i in range(6)]  # the read gate is untouched
        await asyncio.sleep(0.05)
        assert app.started == 8
        app.release.set()
        assert [await t for t in users] == [200] * 6
        codes = sorted([await t for t in keyless])
        assert codes.count(200) == 2 and set(codes[2:]) == {503}
        # signing in (the key is in the form, so it is keyless) has a gate of its own
        app.release.clear()
        keyless = [_call(mw, f"addr:10.0.0.{i}") for i in range(4)]
        await asyncio.sleep(0.01)
        before = app.started  # 2 more: the keyless gate is full again
        login = _call(mw, "addr:10.0.1.1", "/ui/login")
        await asyncio.sleep(0.01)
        assert app.started == before + 1  # the sign-in runs at once
        app.release.set()
        assert await login == 200
        for t in keyless:
            await t

    asyncio.run(scenario())


def test_a_caller_back_early_after_a_rate_limit_waits_it_out() -> None:
    class RateLimited(_Blocking):
        """Answers the first request 429 (Retry-After: 1), the rest 200."""

        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            self.started += 1
            status = 429 if self.started == 1 else 200
            headers = [(b"retry-after", b"1")] if status == 429 else []
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": b""})

    async def scenario() -> None:
        app = RateLimited()
        mw = _middleware(app)
        assert await _call(mw, "user:mallory", "/v1/me") == 429
        early = _call(mw, "user:mallory", "/v1/me")  # held until its Retry-After is up
        other = _call(mw, "user:alice", "/v1/me")
        assert await other == 200
        assert mw.held == 1 and not early.done() and app.started == 2
        assert await early == 200 and mw.held == 0

    asyncio.run(scenario())
