"""A flood of half-open connections against a real `memagent serve` (loopback only).

The server runs in a subprocess whose descriptor limit is lowered (soft and hard,
default 256) so the flood goes past it with a few hundred sockets. The attacker
opens up to `--sockets` connections that each send half a request head
(`GET /health HTTP/1.1\\r\\nHost: x\\r\\n`) and never finish it, re-opening the ones
the server closes, for `--seconds`. Meanwhile a victim with an API key sends
`GET /v1/me` on a fresh connection every 0.3 s. Reported: the victim's answers
during the flood (each must be 200 or 503, none may hang), the time to the first
200 after the attacker leaves, how many half-open sockets the server closed, and
whether the server is still alive. The baseline ratio is the victim's median
latency during the flood over its median on the quiet server.

    python -m bench.flood [--sockets 600] [--seconds 6] [--nofile 256]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import select
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from bench.serving import ServerDidNotStart, free_port, stop

HALF_HEAD = b"GET /health HTTP/1.1\r\nHost: x\r\n"
_LAUNCH = (
    "import resource, runpy, sys\n"
    "n = int(sys.argv[1])\n"
    "resource.setrlimit(resource.RLIMIT_NOFILE, (n, n))\n"
    "sys.argv = ['memagent', *sys.argv[2:]]\n"
    "runpy.run_module('memagent', run_name='__main__')\n"
)


def start_limited(
    root: Path, *, nofile: int, args: list[str], timeout: float = 90.0
) -> tuple[subprocess.Popen[str], str, int]:
    """`memagent serve --root ROOT *args` under RLIMIT_NOFILE=`nofile` (soft and
    hard); returns (process, URL, port) once /health answers."""
    port = free_port()
    cmd = [
        sys.executable,
        "-c",
        _LAUNCH,
        str(nofile),
        "serve",
        "--root",
        str(root),
        "--port",
        str(port),
        *args,
    ]
    err = tempfile.TemporaryFile("w+")  # noqa: SIM115 - the server's stderr while it runs
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return proc, url, port
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            err.seek(0)
            raise ServerDidNotStart(f"memagent serve did not start: {err.read()[-2000:]}")
        time.sleep(0.1)


@dataclass
class Attack:
    opened: int = 0
    failed_connects: int = 0
    closed_by_server: int = 0
    most_open: int = 0
    socks: list[socket.socket] = field(default_factory=list)


def _reap(attack: Attack) -> None:
    """Forget the sockets the server closed (readable with EOF, or reset)."""
    if not attack.socks:
        return
    poller = select.poll()
    by_fd = {s.fileno(): s for s in attack.socks}
    for fd in by_fd:
        poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
    ready = [by_fd[fd] for fd, _ in poller.poll(0)]
    gone = set()
    for s in ready:
        try:
            if not s.recv(4096, socket.MSG_DONTWAIT):
                gone.add(s)
        except BlockingIOError:
            continue
        except OSError:
            gone.add(s)
        else:
            gone.add(s)  # it answered (a 503): done with it
    for s in gone:
        s.close()
    attack.closed_by_server += len(gone)
    attack.socks = [s for s in attack.socks if s not in gone]


def flood(port: int, sockets: int, seconds: float, stop_event: threading.Event) -> Attack:
    """Hold up to `sockets` half-open connections for `seconds` (see the module doc)."""
    attack = Attack()
    end = time.monotonic() + seconds
    while time.monotonic() < end and not stop_event.is_set():
        while len(attack.socks) < sockets and time.monotonic() < end:
            s = socket.socket()
            s.settimeout(0.5)
            try:
                s.connect(("127.0.0.1", port))
                s.sendall(HALF_HEAD)
            except OSError:
                attack.failed_connects += 1
                s.close()
                break  # the backlog is full: reap, then try again
            attack.opened += 1
            attack.socks.append(s)
            attack.most_open = max(attack.most_open, len(attack.socks))
        _reap(attack)
        time.sleep(0.05)
    return attack


def _victim(url: str, key: str, outcomes: list[tuple[str, float]], until: threading.Event) -> None:
    while not until.is_set():
        t0 = time.monotonic()
        try:
            r = httpx.get(f"{url}/v1/me", headers={"Authorization": f"Bearer {key}"}, timeout=30)
            outcomes.append((str(r.status_code), time.monotonic() - t0))
        except httpx.TimeoutException:
            outcomes.append(("hang", time.monotonic() - t0))
        except httpx.HTTPError as exc:
            outcomes.append((type(exc).__name__, time.monotonic() - t0))
        until.wait(0.3)


@dataclass
class FloodFigures:
    quiet_ms: float
    during: list[tuple[str, float]]
    attack: Attack
    recovery_s: float
    alive: bool

    @property
    def during_ms(self) -> float:
        served = [t for code, t in self.during if code == "200"]
        return statistics.median(served) * 1000 if served else float("nan")


def run_flood(url: str, port: int, key: str, *, sockets: int, seconds: float) -> FloodFigures:
    """The attack and the victim together; the server must already be running."""
    quiet = []
    for _ in range(5):
        t0 = time.monotonic()
        httpx.get(f"{url}/v1/me", headers={"Authorization": f"Bearer {key}"}, timeout=10)
        quiet.append(time.monotonic() - t0)
    outcomes: list[tuple[str, float]] = []
    done = threading.Event()
    victim = threading.Thread(target=_victim, args=(url, key, outcomes, done), daemon=True)
    stop_event = threading.Event()
    victim.start()
    attack = flood(port, sockets, seconds, stop_event)
    done.set()
    victim.join(timeout=60)
    for s in attack.socks:
        s.close()
    attack.socks = []
    left = time.monotonic()
    recovery = float("inf")
    while time.monotonic() - left < 30:
        with contextlib.suppress(httpx.HTTPError):
            r = httpx.get(f"{url}/v1/me", headers={"Authorization": f"Bearer {key}"}, timeout=5)
            if r.status_code == 200:
                recovery = time.monotonic() - left
                break
        time.sleep(0.1)
    return FloodFigures(
        quiet_ms=statistics.median(quiet) * 1000,
        during=outcomes,
        attack=attack,
        recovery_s=recovery,
        alive=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sockets", type=int, default=600)
    parser.add_argument("--seconds", type=float, default=6.0)
    parser.add_argument("--nofile", type=int, default=256)
    parser.add_argument("--head-timeout", type=float, default=5.0)
    parser.add_argument(
        "--plain", action="store_true", help="pass no hygiene options (a build without them)"
    )
    opts = parser.parse_args()
    _raise_own_limit(opts.sockets + 64)
    from memagent.server import KeyStore

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "server"
        key = KeyStore(root).create(user="alice")[0]
        proc, url, port = start_limited(
            root,
            nofile=opts.nofile,
            args=["--keyword-only"]
            + ([] if opts.plain else ["--head-timeout", str(opts.head_timeout)]),
        )
        try:
            figures = run_flood(url, port, key, sockets=opts.sockets, seconds=opts.seconds)
            figures.alive = proc.poll() is None
        finally:
            stop(proc)
    codes: dict[str, int] = {}
    for code, _ in figures.during:
        codes[code] = codes.get(code, 0) + 1
    worst = max((t for _, t in figures.during), default=0.0)
    a = figures.attack
    print(
        f"server RLIMIT_NOFILE {opts.nofile}; flood {opts.sockets} half-open sockets for "
        f"{opts.seconds:.0f} s (head timeout {opts.head_timeout:g} s); {os.cpu_count()} CPUs"
    )
    print(
        f"attacker: opened {a.opened}, most open at once {a.most_open}, "
        f"closed by the server {a.closed_by_server}, connects refused/timed out {a.failed_connects}"
    )
    print(
        f"victim during the flood: {codes} over {len(figures.during)} requests; "
        f"slowest {worst:.2f} s; median served {figures.during_ms:.1f} ms"
    )
    print(
        f"victim on the quiet server: median {figures.quiet_ms:.1f} ms; "
        f"ratio flood/quiet {figures.during_ms / figures.quiet_ms:.1f}x"
    )
    print(
        f"first 200 after the attacker left: {figures.recovery_s:.2f} s; "
        f"server alive: {figures.alive}"
    )


def _raise_own_limit(wanted: int) -> None:
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(wanted, soft)), hard))


if __name__ == "__main__":
    main()
