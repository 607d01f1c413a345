"""Connection hygiene of `memagent serve` (`server.serving`): a flood of half-open
connections past the descriptor limit does not take the server down, heads and
bodies have deadlines, connections are capped (old half-open ones make room),
keep-alive is bounded, forwarded headers count only from named proxies, and
logging can never raise into the event loop."""

from __future__ import annotations

import json
import logging
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from bench.flood import run_flood, start_limited
from bench.serving import stop

from memagent.server import KeyStore
from memagent.server.serving import (
    Caps,
    ConnectionGuard,
    ConnectionLimits,
    SafeStderrHandler,
    configure_logging,
    fit_caps,
    safe_exception_handler,
    server_config,
)

HANG = 20.0  # a hang guard, never a speed assertion


async def _echo(scope: Any, receive: Any, send: Any) -> None:
    """An ASGI app that reads the whole body and answers with the client's address."""
    if scope["type"] != "http":
        return
    more = True
    while more:
        message = await receive()
        more = message.get("more_body", False)
        if message["type"] == "http.disconnect":
            return
    body = json.dumps({"client": scope["client"][0] if scope.get("client") else None}).encode()
    length = [(b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": length})
    await send({"type": "http.response.body", "body": body})


@contextmanager
def _served(
    limits: ConnectionLimits, *, forwarded: list[str] | None = None, nofile: int = 4096
) -> Iterator[tuple[int, ConnectionGuard]]:
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    config, guard = server_config(
        _echo, host="127.0.0.1", port=0, limits=limits, forwarded_allow_ips=forwarded, nofile=nofile
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        assert thread.is_alive()
        threading.Event().wait(0.01)
    try:
        yield sock.getsockname()[1], guard
    finally:
        server.should_exit = True
        thread.join(timeout=HANG)
        sock.close()


def _connect(port: int) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=HANG)
    return s


def _read_all(s: socket.socket) -> bytes:
    chunks = []
    while True:
        try:
            data = s.recv(65536)
        except ConnectionResetError:
            break
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks)


def _one_response(s: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        data += s.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
    while len(body) < length:
        body += s.recv(65536)
    return head


def _get(port: int, headers: str = "") -> bytes:
    with _connect(port) as s:
        s.sendall(f"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n{headers}\r\n".encode())
        return _read_all(s)


def test_a_half_sent_head_is_closed_at_its_deadline() -> None:
    with _served(ConnectionLimits(head_timeout_s=0.5)) as (port, guard):
        with _connect(port) as s:
            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")  # never finished
            assert _read_all(s) == b""  # closed by the server, not by the guard
        assert guard.stats.head_timeouts == 1
        assert _get(port).startswith(b"HTTP/1.1 200")


def test_a_body_that_never_arrives_is_closed_at_its_deadline() -> None:
    with _served(ConnectionLimits(body_timeout_s=0.5)) as (port, guard):
        with _connect(port) as s:
            s.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789")
            assert _read_all(s) == b""
        assert guard.stats.body_timeouts == 1


def test_a_kept_alive_connection_serves_a_bounded_number_of_requests() -> None:
    with _served(ConnectionLimits(max_requests_per_connection=2)) as (port, _), _connect(port) as s:
        for _ in range(2):
            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            assert _one_response(s).startswith(b"HTTP/1.1 200")
        assert _read_all(s) == b""  # the third request would need a new connection


def test_old_half_open_connections_make_room_for_new_clients() -> None:
    limits = ConnectionLimits(max_connections=8, max_per_client=4, evict_after_s=0.2)
    with _served(limits) as (port, guard):
        idle = [_connect(port) for _ in range(4)]
        for s in idle:
            s.sendall(b"GET / HTTP/1.1\r\n")
        threading.Event().wait(0.4)
        assert _get(port).startswith(b"HTTP/1.1 200")  # the oldest half-open one went
        assert guard.stats.evicted >= 1
        assert sum(1 for s in idle if _read_all(s) == b"") >= 1
        for s in idle:
            s.close()


def test_a_connection_over_the_cap_is_answered_503_when_none_can_go() -> None:
    limits = ConnectionLimits(max_connections=8, max_per_client=2, evict_after_s=3600)
    with _served(limits) as (port, guard):
        held = [_connect(port) for _ in range(2)]
        for s in held:
            s.sendall(b"GET / HTTP/1.1\r\n")
        threading.Event().wait(0.2)
        answer = _get(port)
        assert answer.startswith(b"HTTP/1.1 503") and b"retry-after: 1" in answer
        assert b'"status":503' in answer
        assert guard.stats.refused == 1
        for s in held:
            s.close()


def test_forwarded_headers_count_only_from_named_proxies() -> None:
    forged = "X-Forwarded-For: 203.0.113.9\r\n"
    with _served(ConnectionLimits()) as (port, _):
        assert b'"client": "127.0.0.1"' in _get(port, forged)
    with _served(ConnectionLimits(), forwarded=["127.0.0.1"]) as (port, _):
        assert b'"client": "203.0.113.9"' in _get(port, forged)


def test_caps_fit_under_the_descriptor_limit() -> None:
    caps = fit_caps(ConnectionLimits(), 256)
    assert caps.total + caps.backlog + 64 <= 256 and caps.total >= 8
    assert caps.per_client <= caps.total
    big = fit_caps(ConnectionLimits(max_connections=4096), 1 << 20)
    assert big.total == 4096 and big.backlog == 128


def test_the_soft_descriptor_limit_is_raised_to_the_hard_one() -> None:
    code = (
        "import resource\n"
        "resource.setrlimit(resource.RLIMIT_NOFILE, (256, 512))\n"
        "from memagent.server.serving import raise_nofile_limit\n"
        "print(raise_nofile_limit(), resource.getrlimit(resource.RLIMIT_NOFILE)[0])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.split() == ["512", "512"]


def test_no_dependency_handler_stays_on_the_root_logger(tmp_path: Path) -> None:
    """The MCP SDK puts a Rich handler on the root logger when its server is built;
    `serve` configures logging first and removes any such handler."""
    code = (
        "import logging, sys\n"
        "from memagent.server.serving import configure_logging\n"
        "from memagent.server import ServerSettings, create_app\n"
        "logging.getLogger().addHandler(logging.StreamHandler())  # a dependency's\n"
        f"create_app({str(tmp_path)!r}, ServerSettings(mcp=True, embeddings=False))\n"
        "configure_logging()\n"
        "print([type(h).__name__ for h in logging.getLogger().handlers])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "['SafeStderrHandler']"


def test_a_failing_log_handler_falls_back_and_never_raises(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    class Broken:
        def write(self, _: str) -> int:
            raise OSError(24, "Too many open files")

        def flush(self) -> None:
            raise OSError(24, "Too many open files")

    handler = SafeStderrHandler()
    monkeypatch.setattr(sys, "stderr", Broken())
    record = logging.LogRecord("asyncio", logging.ERROR, __file__, 1, "accept failed", (), None)
    handler.emit(record)  # falls back to a bare write on fd 2
    assert "accept failed" in capfd.readouterr().err

    class Loop:
        pass

    logger = logging.getLogger("memagent.server")
    monkeypatch.setattr(logger, "error", lambda *a, **k: (_ for _ in ()).throw(OSError(24, "x")))
    safe_exception_handler(Loop(), {"message": "socket.accept() out of system resource"})  # type: ignore[arg-type]
    assert "event loop error" in capfd.readouterr().err


def test_configure_logging_keeps_one_handler_of_ours() -> None:
    root = logging.getLogger()
    before = list(root.handlers), root.level
    try:
        first = configure_logging()
        root.addHandler(logging.StreamHandler())
        assert configure_logging() is first and root.handlers == [first]
    finally:
        root.handlers[:] = before[0]
        root.setLevel(before[1])


def test_the_guard_forgets_closed_connections() -> None:
    guard = ConnectionGuard(Caps(total=2, per_client=2, backlog=8, nofile=64), 0.0)

    class Conn:
        def __init__(self) -> None:
            self.dropped = False

        def drop(self) -> None:
            self.dropped = True
            guard.release(self)  # type: ignore[arg-type]

    a, b, c = Conn(), Conn(), Conn()
    assert guard.admit(a, "h", 0.0) and guard.admit(b, "h", 0.0)  # type: ignore[arg-type]
    guard.waiting_for_head(a, 0.0)  # type: ignore[arg-type]
    assert guard.admit(c, "h", 1.0) and a.dropped  # type: ignore[arg-type]
    guard.release(b)  # type: ignore[arg-type]
    guard.release(c)  # type: ignore[arg-type]
    assert guard.live == {} and guard.per_client == {} and not guard.waiting


@pytest.mark.slow
def test_a_flood_past_the_descriptor_limit_leaves_serve_answering(tmp_path: Path) -> None:
    """The issue's reproduction, smaller: `memagent serve` (MCP on) under a
    descriptor limit of 256, 500 half-open connections held for 5 s. While they
    are held the victim is served or refused with 503, never left hanging; once
    the attacker leaves, a normal request is answered at once."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 700 <= hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if resource.getrlimit(resource.RLIMIT_NOFILE)[0] < 700:
        pytest.fail("the test needs 700 descriptors for its half-open sockets")
    root = tmp_path / "server"
    key = KeyStore(root).create(user="alice")[0]
    proc, url, port = start_limited(
        root, nofile=256, args=["--keyword-only", "--head-timeout", "3"]
    )
    try:
        figures = run_flood(url, port, key, sockets=500, seconds=5)
        assert proc.poll() is None, "the server died"
    finally:
        stop(proc)
    codes = {code for code, _ in figures.during}
    assert figures.during and codes <= {"200", "503"}, figures.during
    assert "200" in codes
    assert figures.attack.most_open + figures.attack.closed_by_server > 256
    assert figures.attack.closed_by_server > 0
    assert figures.recovery_s < HANG
