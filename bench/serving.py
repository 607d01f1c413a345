"""Start a real `memagent serve` subprocess and check what it acknowledged.

Shared by the load benchmarks and the tests that talk to a served process, so
that "start, wait until /health answers, fail with the server's stderr" and
"every acknowledged remember is readable and recallable" are written once.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence

import httpx


class ServerDidNotStart(RuntimeError):
    """The process exited, or /health did not answer 200 within the deadline."""


def free_port() -> int:
    """A loopback port that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_serve(
    args: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    timeout: float = 60.0,
) -> tuple[subprocess.Popen[str], str]:
    """Run `memagent serve --port P *args` and return (process, base URL) once healthy.

    On failure the process is killed and `ServerDidNotStart` carries its stderr.
    """
    port = free_port()
    cmd = [sys.executable, "-m", "memagent", "serve", "--port", str(port), *args]
    proc = subprocess.Popen(
        cmd,
        env=dict(env if env is not None else os.environ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout
    while True:
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            err = proc.stderr.read() if proc.stderr else ""
            raise ServerDidNotStart(f"memagent serve did not start: {err.strip()[-2000:]}")
        time.sleep(0.1)


def stop(proc: subprocess.Popen[str], timeout: float = 20.0) -> None:
    """Terminate politely, then kill."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=timeout)


def verify_acknowledged(url: str, key: str, acked: list[tuple[str, str, str]]) -> list[str]:
    """Each (id, token, text) must read back by id with the same text and be
    found by its unique token in the top 5; returns one line per loss."""
    lost: list[str] = []
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=60) as c:
        for mid, token, text in acked:
            got = c.get(f"/v1/memories/{mid}")
            if got.status_code != 200 or got.json()["content"] != text:
                lost.append(f"{mid}: GET answered {got.status_code}")
                continue
            hits = c.get("/v1/memories/search", params={"q": token, "k": 5})
            if hits.status_code != 200 or mid not in [h["id"] for h in hits.json()["hits"]]:
                lost.append(f"{mid}: not recalled by its token {token}")
    return lost
