"""`memagent ui` as a process: stopped by SIGTERM it removes its temporary
folder; with `--open` the browser's command line carries a private file, never
the sign-in token, and a browser command that does not return does not hold
up the page."""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from bench.serving import free_port

from memagent.core import MemoryHome

HANG = 60.0  # a hang guard, never a speed assertion


def _start(
    home: MemoryHome, tmp_path: Path, *extra: str, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen[str], str, Path]:
    port = free_port()
    tmp = tmp_path / "tmp"
    tmp.mkdir(exist_ok=True)
    environ = {**os.environ, "TMPDIR": str(tmp), **(env or {})}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "memagent",
            "ui",
            "--home",
            str(home.root),
            "--port",
            str(port),
            "--keyword-only",
            *extra,
        ],
        env=environ,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + HANG
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/ui/login", timeout=2).status_code == 200:
                return proc, url, tmp
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    proc.kill()
    pytest.fail(f"memagent ui did not start: {proc.stderr.read() if proc.stderr else ''}")


def test_sigterm_removes_the_temporary_folder(home: MemoryHome, tmp_path: Path) -> None:
    proc, _, tmp = _start(home, tmp_path)
    assert [p.name for p in tmp.iterdir() if p.name.startswith("memagent-ui-")]
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=HANG)
    assert not [p for p in tmp.iterdir() if p.name.startswith("memagent-ui-")]


def test_open_passes_a_private_file_not_the_token(home: MemoryHome, tmp_path: Path) -> None:
    seen = tmp_path / "browser-argv.txt"
    pid_file = tmp_path / "browser.pid"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\necho $$ > {pid_file}\necho "$@" > {seen}\nexec sleep 120\n')
    browser.chmod(0o755)
    proc, url, tmp = _start(home, tmp_path, "--open", env={"BROWSER": str(browser)})
    try:
        # the page answers while the "browser" command is still running
        assert httpx.get(f"{url}/ui/login", timeout=10).status_code == 200
        deadline = time.monotonic() + HANG
        while not seen.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        argv = seen.read_text().strip()
        assert argv.startswith("file://") and "token" not in argv
        page = Path(argv.removeprefix("file://"))
        assert stat.S_IMODE(page.stat().st_mode) == 0o600
        assert stat.S_IMODE(page.parent.stat().st_mode) == 0o700
        text = page.read_text()
        token = text.split("token=")[1].split('"')[0]
        signed = httpx.get(f"{url}/ui/login", params={"token": token}, timeout=10)
        assert signed.status_code == 303 and signed.headers["location"] == "/ui/search"
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=HANG)
        if pid_file.exists():  # the stand-in browser, by its own pid
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid_file.read_text().strip()), signal.SIGKILL)
    assert not [p for p in tmp.iterdir() if p.name.startswith("memagent-ui-")]
