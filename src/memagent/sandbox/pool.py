"""The second wall: sandbox code runs in pre-started worker processes.

    pool = default_pool()
    r = pool.run("6 * 7")                       # one run, a worker borrowed and given back
    s = IsolatedSession(tools={...})            # a stateful session on its own worker
    s.run("x = 1"); s.run("x + 1").result == 2; s.close()

The interpreter's own limits stay the first wall. Behind it each worker is in an
OS jail (`jail`: the `nobody` user, hard limits, no_new_privs, a seccomp filter
refusing sockets, new processes, exec, opening files and writing the file
system, and namespaces where the kernel allows), and the host watches it: a
worker that crashes (a C-level bug the interpreter did not stop), overruns the
wall-time limit or its memory is killed and replaced; that run's error is
`SandboxCrashed: …` and the host, and every other user's run, go on. Tools
stay in the host: a call from the code travels back over the pipe and runs
here, under the host's locks.

`MEMAGENT_SANDBOX_WORKERS` sets how many idle workers are kept started (2). A
worker whose jail lacks an essential layer is refused (`SandboxUnjailed`) unless
`MEMAGENT_SANDBOX_UNJAILED=1` (or `WorkerPool(allow_unjailed=True)`) opts in to
running with what holds; that is warned about once per pool.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from memagent.core.deadline import Budget, current_budget
from memagent.core.errors import DeadlineExceeded, InvalidInput, MemagentError
from memagent.sandbox._codec import Unencodable, decode_value, encode_value
from memagent.sandbox.jail import ESSENTIAL, LIFETIME_CPU_S, unjailed_allowed
from memagent.sandbox.limits import Limits
from memagent.sandbox.session import RunResult, jsonable

_GRACE_S = 5.0
"""Wall time a worker gets past twice the run's own limit before it is killed (the
interpreter stops itself at the limit, and the CPU rlimit at limit + 2 s of CPU:
this catches a worker that hangs without using CPU, even on a loaded machine)."""
_START_TIMEOUT_S = 60.0
_MEMORY_BYTES = 2 << 30
_RECYCLE_RSS_BYTES = 1 << 30
_EXTRA_IDLE = 4
"""Returned workers kept beyond the pre-started ones (spawning is the cost to avoid)."""


_CRASHED = "the previous run's worker crashed"
_OUT_OF_TIME = "the previous run was stopped by its request's deadline"
_CANCELLED = "the previous run was cancelled with its request"
"""Why a session started over (its next run's note; `snapshot`'s refusal)."""


class SandboxCrashed(Exception):
    """The worker running the code died or was killed; the host is unharmed."""


class SandboxUnjailed(MemagentError):
    """A worker could not be jailed here and running it unjailed was not allowed."""


log = logging.getLogger("memagent.sandbox")


class _Opaque:
    """A result that is not plain data, as its repr (it stayed in the worker)."""

    def __init__(self, text: Any) -> None:
        self.text = text if isinstance(text, str) else json.dumps(text)

    def __repr__(self) -> str:
        return self.text


class _Worker:
    """One worker process and the line protocol to it."""

    def __init__(self, memory_bytes: int) -> None:
        src = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ)
        env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memagent.sandbox._worker", str(memory_bytes)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
        self._buf = b""
        self.peak_rss = 0
        self.cpu_s = 0.0
        self.ready = False
        self.jail: dict[str, Any] = {}

    def wait_ready(self) -> None:
        if not self.ready:
            msg = self.recv(time.monotonic() + _START_TIMEOUT_S)
            if msg.get("op") != "ready":
                raise SandboxCrashed(f"the worker did not start: {msg}")
            self.jail = dict(msg.get("jail") or {})
            self.ready = True

    @property
    def missing(self) -> dict[str, str]:
        """The essential jail layers that do not hold, and why."""
        layers = self.jail.get("layers") or []
        why = self.jail.get("missing") or {}
        return {k: str(why.get(k, "not reported")) for k in ESSENTIAL if k not in layers}

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def send(self, msg: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(msg).encode("utf-8", "surrogatepass") + b"\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise SandboxCrashed(self._death()) from exc

    def recv(self, deadline: float, budget: Budget | None = None) -> dict[str, Any]:
        """The worker's next message; `budget` (the request's) stopped: the worker is
        killed (the only way to stop code mid-run) and `DeadlineExceeded` raised."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        watch = budget is not None and budget.bounded
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill()
                raise SandboxCrashed("the worker overran its time limit and was killed")
            if watch and budget is not None and budget.stopped():
                self.kill()
                budget.check("the sandboxed code")
            ready, _, _ = select.select([fd], [], [], min(left, 0.05) if watch else left)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise SandboxCrashed(self._death())
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        msg = json.loads(line)
        if not isinstance(msg, dict):
            raise SandboxCrashed("the worker broke the protocol")
        return msg

    def _death(self) -> str:
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
            return "the worker stopped answering and was killed"
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            why = {"SIGXCPU": " (CPU time limit)", "SIGKILL": " (killed)"}.get(name, "")
            return f"the worker process died of {name}{why}"
        return f"the worker process exited with status {code}"

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=5)
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()


class WorkerPool:
    """Idle, pre-started workers; a session borrows one for its lifetime."""

    def __init__(
        self,
        idle: int | None = None,
        *,
        memory_bytes: int = _MEMORY_BYTES,
        allow_unjailed: bool | None = None,
    ) -> None:
        """`allow_unjailed`: run workers whose jail lacks an essential layer (with a
        warning); None: as `MEMAGENT_SANDBOX_UNJAILED` says (default: refuse)."""
        if idle is None:
            idle = int(os.environ.get("MEMAGENT_SANDBOX_WORKERS", "2") or 2)
        self.idle_target = max(0, idle)
        self.memory_bytes = memory_bytes
        self.allow_unjailed = unjailed_allowed() if allow_unjailed is None else allow_unjailed
        self._warned = False
        self._idle: list[_Worker] = []
        self._lock = threading.Lock()
        self._closed = False
        self._refill()

    def _refill(self) -> None:
        with self._lock:
            while not self._closed and len(self._idle) < self.idle_target:
                self._idle.append(_Worker(self.memory_bytes))

    def acquire(self) -> _Worker:
        with self._lock:
            if self._closed:
                raise InvalidInput("the sandbox worker pool is closed")
            worker = None
            while self._idle and worker is None:
                w = self._idle.pop(0)
                worker = w if w.alive else None
            short = len(self._idle) < self.idle_target
        if worker is None:
            worker = _Worker(self.memory_bytes)
        if short:
            threading.Thread(target=self._refill, daemon=True).start()
        worker.wait_ready()
        self._check_jail(worker)
        return worker

    def _check_jail(self, worker: _Worker) -> None:
        missing = worker.missing
        if not missing:
            return
        why = "; ".join(f"{k}: {v}" for k, v in missing.items())
        if not self.allow_unjailed:
            worker.kill()
            raise SandboxUnjailed(
                f"sandbox workers cannot be jailed here ({why}); refusing to run code "
                "without the OS jail. Set MEMAGENT_SANDBOX_UNJAILED=1 to run it behind "
                "the interpreter and OS limits only"
            )
        if not self._warned:
            self._warned = True
            log.warning("sandbox workers run WITHOUT a full OS jail (%s), as allowed", why)

    def release(self, worker: _Worker) -> None:
        """Take a worker back for another session, or end it when it is unfit."""
        keep = (
            worker.alive
            and worker.peak_rss < _RECYCLE_RSS_BYTES
            and worker.cpu_s < LIFETIME_CPU_S / 2  # its hard CPU budget is for life
        )
        with self._lock:
            if keep and not self._closed and len(self._idle) < self.idle_target + _EXTRA_IDLE:
                self._idle.append(worker)
                return
        worker.kill()

    def run(
        self,
        code: str,
        *,
        tools: dict[str, Callable[..., Any]] | None = None,
        limits: Limits | None = None,
    ) -> RunResult:
        """Run `code` once in a fresh session on a pooled worker."""
        session = IsolatedSession(tools=tools, limits=limits, pool=self)
        try:
            return session.run(code)
        finally:
            session.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for w in idle:
            w.kill()


_default: WorkerPool | None = None
_default_lock = threading.Lock()


def default_pool() -> WorkerPool:
    """The process-wide pool (started on first use, closed at exit)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = WorkerPool()
            atexit.register(_default.close)
        return _default


class IsolatedSession:
    """A `Session` whose interpreter lives in a worker process.

    Same calls as `Session` (`run`, `add_tools`, `restore_variables`,
    `snapshot`, `tool_names`); `close()` gives the worker back. After a crash
    the next run starts over on a fresh worker (its variables are gone, and
    that run's notes say so).
    """

    def __init__(
        self,
        tools: dict[str, Callable[..., Any]] | None = None,
        limits: Limits | None = None,
        *,
        pool: WorkerPool | None = None,
    ) -> None:
        self.limits = limits or Limits()
        self._tools: dict[str, Callable[..., Any]] = {}
        for name, fn in (tools or {}).items():
            self._check_tool(name, fn)
            self._tools[name] = fn
        self._pool = pool or default_pool()
        self._worker: _Worker | None = None
        self._lock = threading.Lock()
        self._lost: str | None = None
        """Why the session's state was lost since its last run (it started over)."""
        self.last_peak_rss = 0

    @staticmethod
    def _check_tool(name: str, fn: Any) -> None:
        if not isinstance(name, str) or not name.isidentifier() or name.startswith("_"):
            raise InvalidInput(f"invalid tool name {name!r}")
        if not callable(fn):
            raise InvalidInput(f"tool {name!r} is not callable")

    @property
    def tool_names(self) -> list[str]:
        return sorted(self._tools)

    def add_tools(self, tools: dict[str, Callable[..., Any]]) -> None:
        for name, fn in tools.items():
            self._check_tool(name, fn)
            if name in self._tools:
                raise InvalidInput(f"a tool named {name!r} is already loaded")
        with self._lock:
            self._tools.update(tools)
            if self._worker is not None:
                self._request({"op": "add_tools", "tools": list(tools)})

    def _ensure(self) -> _Worker:
        if self._worker is None or not self._worker.alive:
            if self._worker is not None:
                self._worker.kill()
                self._lost = self._lost or _CRASHED
            self._worker = self._pool.acquire()
            self._request(
                {"op": "open", "limits": self.limits.model_dump(), "tools": list(self._tools)}
            )
        return self._worker

    def _request(self, msg: dict[str, Any], timeout: float = 30.0) -> dict[str, Any]:
        worker = self._worker
        assert worker is not None
        worker.send(msg)
        deadline = time.monotonic() + timeout
        budget = current_budget()
        while True:
            try:
                reply = worker.recv(deadline, budget)
            except DeadlineExceeded:
                self._worker = None  # killed: the next run starts a fresh worker
                self._lost = _CANCELLED if budget.cancelled() else _OUT_OF_TIME
                raise
            if reply.get("op") != "call":
                if reply.get("op") == "error":
                    raise InvalidInput(str(reply.get("message")))
                return reply
            started = time.monotonic()
            worker.send(self._call_tool(reply))
            deadline += time.monotonic() - started  # time in host tools is not the worker's

    def _call_tool(self, msg: dict[str, Any]) -> dict[str, Any]:
        fn = self._tools.get(str(msg.get("name")))
        if fn is None:
            return {"op": "raise", "type": "NameError", "message": f"no tool {msg.get('name')!r}"}
        try:
            args = [decode_value(a) for a in msg.get("args", [])]
            kwargs = {str(k): decode_value(v) for k, v in dict(msg.get("kwargs", {})).items()}
            value = fn(*args, **kwargs)
        except Exception as exc:  # the code sees the tool's exception, as in-process
            return {"op": "raise", "type": type(exc).__name__, "message": str(exc)}
        try:
            return {"op": "return", "value": encode_value(value)}
        except (Unencodable, RecursionError):
            return {"op": "return", "value": jsonable(value)}

    def run(self, code: str, *, replay: Sequence[str] = ()) -> RunResult:
        if not isinstance(code, str) or any(not isinstance(s, str) for s in replay):
            raise InvalidInput("sandbox code must be text")
        size = sum(len(s.encode("utf-8", "surrogatepass")) for s in [*replay, code])
        if size > self.limits.max_source_bytes:
            raise InvalidInput(f"sandbox code is larger than {self.limits.max_source_bytes} bytes")
        with self._lock:
            try:
                self._ensure()
                reply = self._request(
                    {"op": "run", "code": code, "replay": list(replay)},
                    timeout=2 * self.limits.timeout_s + _GRACE_S,
                )
            except SandboxCrashed as exc:
                if self._worker is not None:
                    self._worker.kill()
                self._worker = None
                self._lost = _CRASHED
                return RunResult("", None, f"SandboxCrashed: {exc}")
        notes = list(reply.get("notes", []))
        if self._lost is not None:
            notes.append(f"{self._lost}: this session started over, its variables are gone")
            self._lost = None
        self.last_peak_rss = int(reply.get("peak_rss_bytes", 0))
        if self._worker is not None:
            self._worker.peak_rss = self.last_peak_rss
            self._worker.cpu_s = float(reply.get("cpu_s", 0.0))
        packed = reply.get("result") or {}
        result = decode_value(packed["value"]) if "value" in packed else _Opaque(packed.get("repr"))
        if result is not None and reply.get("error"):
            result = None
        return RunResult(
            str(reply.get("output", "")),
            result,
            reply.get("error"),
            bool(reply.get("final")),
            int(reply.get("operations", 0)),
            notes,
        )

    def restore_variables(self, values: dict[str, Any]) -> None:
        try:
            encoded = {k: encode_value(v) for k, v in values.items()}
        except (Unencodable, RecursionError) as exc:
            raise InvalidInput("only data values can be restored into a session") from exc
        with self._lock:
            self._ensure()
            self._request({"op": "restore", "variables": encoded})

    def snapshot(self) -> tuple[dict[str, Any], list[str]]:
        with self._lock:
            if self._worker is None or not self._worker.alive:
                if self._lost is not None:
                    raise InvalidInput(f"{self._lost}: its state cannot be saved")
                return {"version": 1, "variables": {}, "definitions": []}, []
            reply = self._request({"op": "snapshot"})
        return dict(reply["doc"]), list(reply["skipped"])

    def close(self) -> None:
        with self._lock:
            worker, self._worker = self._worker, None
        if worker is not None:
            # the next session's "open" replaces this one's interpreter in the worker
            self._pool.release(worker)

    def __del__(self) -> None:
        worker = getattr(self, "_worker", None)
        if worker is not None:
            worker.kill()


__all__ = ["IsolatedSession", "SandboxCrashed", "SandboxUnjailed", "WorkerPool", "default_pool"]
