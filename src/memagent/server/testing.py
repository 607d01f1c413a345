"""Run the app on a real loopback socket for tests and embedding programs.

`LiveServer(app)` starts uvicorn in a background thread on 127.0.0.1 with a
port the OS picks, waits until it accepts connections, and stops it on exit.
Tests use it to talk to the real HTTP stack (not an in-process transport).
"""

from __future__ import annotations

import socket
import threading
import time
from types import TracebackType

import httpx
import uvicorn
from fastapi import FastAPI

from memagent.core.jsontext import JsonObject


class LiveServer:
    def __init__(self, app: FastAPI, *, host: str = "127.0.0.1", start_timeout: float = 20.0):
        self.app = app
        self.host = host
        self.start_timeout = start_timeout
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        # Accepted connections inherit this: without it, a response written in two
        # pieces (head, body) waits out the client's delayed ACK (~40 ms on Linux).
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._sock.bind((host, 0))
        self.port: int = self._sock.getsockname()[1]
        config = uvicorn.Config(app, log_level="warning", lifespan="on", ws="none")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> LiveServer:
        self._thread.start()
        deadline = time.monotonic() + self.start_timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._sock.close()

    def __enter__(self) -> LiveServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


PROBLEM_TYPE = "application/problem+json"


def assert_problem(response: httpx.Response, status: int) -> JsonObject:
    """Assert `response` is an RFC 9457 problem document with `status`; return it."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(PROBLEM_TYPE), response.headers
    body: JsonObject = response.json()
    assert body["status"] == status
    assert {"type", "title", "status", "detail", "instance"} <= set(body)
    assert body["instance"] == response.request.url.path
    return body
