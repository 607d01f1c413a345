"""The sandbox worker's OS jail (`sandbox.jail`): the emulated escape.

No interpreter escape is known, so the test plays one: plain Python (no
interpreter in the way) calls the worker's own jail setup, exactly as a worker
does, then tries what escaped code would: open a socket, fork, exec, read a
file, write or delete one, raise a limit, signal another process."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memagent.sandbox import IsolatedSession, SandboxUnjailed, WorkerPool
from memagent.sandbox.jail import ESSENTIAL, NOBODY

ESCAPE = r"""
import json, os, resource, socket, sys, threading
from memagent.sandbox._worker import apply_os_limits, _prewarm

target = sys.argv[1]
_prewarm()
report = apply_os_limits(2 << 30)
out = {"report": report.as_dict(), "uid": os.getuid()}

def attempt(name, fn):
    try:
        fn()
    except BaseException as exc:
        out[name] = type(exc).__name__
    else:
        out[name] = "ALLOWED"

attempt("socket", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM))
attempt("socket_unix", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM))
def fork():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
attempt("fork", fork)
attempt("thread", lambda: threading.Thread(target=print).start())
attempt("exec", lambda: os.execv("/bin/true", ["true"]))
attempt("read_passwd", lambda: open("/etc/passwd").read())
attempt("read_shadow", lambda: open("/etc/shadow").read())
attempt("read_target", lambda: open(target).read())
attempt("write_new", lambda: open(target + ".new", "w").write("x"))
attempt("truncate", lambda: os.truncate(target, 0))
attempt("unlink", lambda: os.unlink(target))
attempt("rename", lambda: os.rename(target, target + ".moved"))
attempt("chmod", lambda: os.chmod(target, 0o777))
attempt("mkdir", lambda: os.mkdir(target + ".d"))
hard_files = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
attempt("raise_files", lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (hard_files + 1,) * 2))
attempt("raise_memory", lambda: resource.setrlimit(resource.RLIMIT_AS, (-1, -1)))
attempt("raise_procs", lambda: resource.setrlimit(resource.RLIMIT_NPROC, (100, 100)))
cpu = resource.getrlimit(resource.RLIMIT_CPU)[1]
attempt("raise_cpu_hard", lambda: resource.setrlimit(resource.RLIMIT_CPU, (cpu + 1, cpu + 1)))
attempt("signal_init", lambda: os.kill(1, 0))
attempt("signal_group", lambda: os.kill(0, 0))
attempt("setuid_root", lambda: os.setuid(0))
out["limits"] = {
    "files": resource.getrlimit(resource.RLIMIT_NOFILE),
    "memory": resource.getrlimit(resource.RLIMIT_AS),
    "fsize": resource.getrlimit(resource.RLIMIT_FSIZE),
}
print(json.dumps(out), flush=True)
"""


@pytest.fixture(scope="module")
def escape(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("jail")
    folder.chmod(0o777)  # nobody could reach it: the jail, not permissions, must stop it
    target = folder / "victim.txt"
    target.write_text("secret")
    target.chmod(0o666)
    done = subprocess.run(
        [sys.executable, "-c", ESCAPE, str(target)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    out["target_after"] = target.read_text()
    out["left_in_folder"] = sorted(p.name for p in folder.iterdir())
    return out


def test_the_essential_layers_hold_here(escape: dict[str, Any]) -> None:
    report = escape["report"]
    assert set(ESSENTIAL) <= set(report["layers"]), report["missing"]
    assert "hard_limits" in report["layers"]
    if os.geteuid() == 0:
        assert escape["uid"] == NOBODY


@pytest.mark.parametrize("attempt", ["socket", "socket_unix"])
def test_no_socket(escape: dict[str, Any], attempt: str) -> None:
    assert escape[attempt] == "PermissionError"


@pytest.mark.parametrize("attempt", ["fork", "thread", "exec"])
def test_no_new_process_thread_or_program(escape: dict[str, Any], attempt: str) -> None:
    assert escape[attempt] in ("PermissionError", "RuntimeError", "BlockingIOError")


@pytest.mark.parametrize("attempt", ["read_passwd", "read_shadow", "read_target"])
def test_no_file_read_outside_the_open_descriptors(escape: dict[str, Any], attempt: str) -> None:
    assert escape[attempt] == "PermissionError"


@pytest.mark.parametrize("attempt", ["write_new", "truncate", "unlink", "rename", "chmod", "mkdir"])
def test_no_file_system_write(escape: dict[str, Any], attempt: str) -> None:
    assert escape[attempt] == "PermissionError"
    assert escape["target_after"] == "secret" and escape["left_in_folder"] == ["victim.txt"]


@pytest.mark.parametrize(
    "attempt", ["raise_files", "raise_memory", "raise_procs", "raise_cpu_hard", "setuid_root"]
)
def test_no_limit_or_privilege_raised(escape: dict[str, Any], attempt: str) -> None:
    assert escape[attempt] in ("PermissionError", "ValueError")
    soft, hard = escape["limits"]["files"]
    assert soft == hard == 8
    assert escape["limits"]["memory"] == [2 << 30, 2 << 30]
    assert escape["limits"]["fsize"] == [0, 0]


@pytest.mark.parametrize("attempt", ["signal_init", "signal_group"])
def test_no_signal_to_another_process(escape: dict[str, Any], attempt: str) -> None:
    assert escape[attempt] == "PermissionError"


def test_pool_workers_are_jailed_and_still_run_code() -> None:
    pool = WorkerPool(0)
    session = IsolatedSession(pool=pool)
    try:
        r = session.run(
            "import datetime, json, re\n"
            "d = datetime.datetime.strptime('2024-03-05', '%Y-%m-%d')\n"
            "[d.month, json.dumps({'a': 1}), re.sub('a', 'b', 'aa')]"
        )
        assert r.error is None and r.result == [3, '{"a": 1}', "bb"], r
        assert session._worker is not None
        assert set(ESSENTIAL) <= set(session._worker.jail["layers"])
    finally:
        session.close()
        pool.close()


class _Unjailable:
    def __init__(self) -> None:
        self.missing = {"seccomp": "no libseccomp (OSError: not found)"}
        self.killed = False

    def kill(self) -> None:
        self.killed = True


def test_a_worker_without_its_jail_is_refused_without_the_opt_in(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MEMAGENT_SANDBOX_UNJAILED", raising=False)
    pool = WorkerPool(0)
    worker = _Unjailable()
    with pytest.raises(SandboxUnjailed, match=r"seccomp: no libseccomp.*MEMAGENT_SANDBOX_UNJAILED"):
        pool._check_jail(worker)  # type: ignore[arg-type]
    assert worker.killed


def test_the_opt_in_runs_unjailed_with_one_warning(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("MEMAGENT_SANDBOX_UNJAILED", "1")
    pool = WorkerPool(0)
    with caplog.at_level(logging.WARNING, logger="memagent.sandbox"):
        for _ in range(3):
            pool._check_jail(_Unjailable())  # type: ignore[arg-type]
    warned = [r for r in caplog.records if "WITHOUT a full OS jail" in r.getMessage()]
    assert len(warned) == 1 and "seccomp" in warned[0].getMessage()


def test_the_escape_script_is_real_python_not_the_sandbox() -> None:
    """Guard against the test passing for the wrong reason: without the jail the
    same attempts succeed."""
    code = "import socket; socket.socket().close(); print(open('/etc/passwd').read()[:4])"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip()
    assert Path("/etc/passwd").exists()
