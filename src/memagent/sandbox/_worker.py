"""A sandbox worker process: `python -m memagent.sandbox._worker MEMORY_BYTES`.

It runs the interpreter for one session at a time in an OS jail (`jail`: the
`nobody` user, hard limits, no_new_privs, seccomp, namespaces; its report goes
to the host in the `ready` message) and talks to its host over stdin/stdout,
one JSON object per line:

    host → worker  {"op": "open", "limits": {...}, "tools": [names]}
                   {"op": "run", "code": "...", "replay": [...]}
                   {"op": "restore", "variables": {...}}   {"op": "snapshot"}
                   {"op": "add_tools", "tools": [names]}   {"op": "return"|"raise", ...}
    worker → host  {"op": "ok"}  {"op": "result", ...}  {"op": "state", ...}
                   {"op": "call", "name": tool, "args": [...], "kwargs": {...}}

A tool call travels back to the host, which runs the real function (under its
own locks) and answers with `return` or `raise`. Values cross as tagged JSON
(`_codec`); nothing is pickled. If the code crashes the process, only this
worker dies: the host reports `SandboxCrashed` and starts another.
"""

from __future__ import annotations

import builtins
import json
import os
import resource
import sys
from typing import Any, BinaryIO

from memagent.sandbox._codec import Unencodable, decode_value, encode_value
from memagent.sandbox.jail import JailReport, enter_jail
from memagent.sandbox.limits import Limits
from memagent.sandbox.session import RunResult, Session, jsonable

_CPU_GRACE_S = 2


def _limit(kind: int, soft: int) -> None:
    try:
        _, hard = resource.getrlimit(kind)
        if hard != resource.RLIM_INFINITY:
            soft = min(soft, hard)
        resource.setrlimit(kind, (soft, hard))
    except (ValueError, OSError):  # not allowed on this platform: the others still hold
        pass


def apply_os_limits(memory_bytes: int) -> JailReport:
    """Jail this process (`jail.enter_jail`) once everything it needs is
    imported and the files it keeps are open; return what holds."""
    return enter_jail(memory_bytes)


def _prewarm() -> None:
    """What the interpreter would otherwise load lazily from files mid-run (the
    jail lets the worker open none): the time zone, `strptime`'s module."""
    import _strptime  # noqa: F401 - datetime.strptime imports it on first use
    import time

    time.localtime()
    time.strftime("%c")


def _cpu_budget(timeout_s: float) -> None:
    used = resource.getrusage(resource.RUSAGE_SELF)
    spent = used.ru_utime + used.ru_stime
    _limit(resource.RLIMIT_CPU, int(spent + timeout_s) + _CPU_GRACE_S)


def encode_result(value: Any) -> Any:
    try:
        return {"value": encode_value(value)}
    except (Unencodable, RecursionError):
        return {"repr": jsonable(value)}


class Worker:
    def __init__(self, inp: BinaryIO, out: BinaryIO, jail: JailReport | None = None) -> None:
        self.inp = inp
        self.out = out
        self.jail = jail or JailReport()
        self.session: Session | None = None

    def send(self, msg: dict[str, Any]) -> None:
        self.out.write(json.dumps(msg, ensure_ascii=False).encode("utf-8", "surrogatepass"))
        self.out.write(b"\n")
        self.out.flush()

    def recv(self) -> dict[str, Any] | None:
        line = self.inp.readline()
        if not line:
            return None
        msg = json.loads(line)
        assert isinstance(msg, dict)
        return msg

    def tool(self, name: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                payload = {
                    "op": "call",
                    "name": name,
                    "args": [encode_value(a) for a in args],
                    "kwargs": {k: encode_value(v) for k, v in kwargs.items()},
                }
            except (Unencodable, RecursionError):
                raise TypeError(f"{name}() takes data (str, numbers, lists, dicts)") from None
            self.send(payload)
            reply = self.recv()
            if reply is None:
                raise SystemExit(0)
            if reply.get("op") == "return":
                return decode_value(reply.get("value"))
            kind = getattr(builtins, str(reply.get("type")), None)
            message = str(reply.get("message", ""))
            if isinstance(kind, type) and issubclass(kind, Exception):
                raise kind(message)
            raise RuntimeError(f"{reply.get('type')}: {message}")

        call.__name__ = name
        return call

    def handle(self, msg: dict[str, Any]) -> dict[str, Any]:
        op = msg.get("op")
        if op == "open":
            limits = Limits.model_validate(msg.get("limits") or {})
            tools = {n: self.tool(n) for n in msg.get("tools", [])}
            self.session = Session(tools=tools, limits=limits)
            return {"op": "ok"}
        session = self.session
        if session is None:
            return {"op": "error", "message": "no session is open"}
        if op == "add_tools":
            session.add_tools({n: self.tool(n) for n in msg.get("tools", [])})
            return {"op": "ok"}
        if op == "restore":
            values = {k: decode_value(v) for k, v in dict(msg.get("variables", {})).items()}
            session.restore_variables(values)
            return {"op": "ok"}
        if op == "snapshot":
            doc, skipped = session.snapshot()
            return {"op": "state", "doc": doc, "skipped": skipped}
        if op == "run":
            _cpu_budget(session.limits.timeout_s)
            r = session.run(str(msg.get("code", "")), replay=list(msg.get("replay", [])))
            return _result_message(r)
        return {"op": "error", "message": f"unknown op {op!r}"}

    def serve(self) -> None:
        self.send({"op": "ready", "pid": os.getpid(), "jail": self.jail.as_dict()})
        while True:
            msg = self.recv()
            if msg is None:
                return
            try:
                reply = self.handle(msg)
            except Exception as exc:  # a refused input: say so, keep serving
                reply = {"op": "error", "message": f"{type(exc).__name__}: {exc}"}
            self.send(reply)


class PeakRss:
    """This process's own peak resident memory, in bytes.

    `ru_maxrss` is no good here: Linux carries the parent's high-water mark into
    a child across fork and exec, so a worker started by a 4 GB server would
    report 4 GB before running anything (and be recycled after every run).
    `VmHWM` in /proc/self/status belongs to the address space exec made. The file
    is opened once, before the open-files limit, and re-read in place."""

    def __init__(self) -> None:
        try:
            self._fh: BinaryIO | None = open("/proc/self/status", "rb", buffering=0)  # noqa: SIM115
        except OSError:
            self._fh = None

    def bytes(self) -> int:
        if self._fh is not None:
            try:
                self._fh.seek(0)
                for line in self._fh.read().splitlines():
                    if line.startswith(b"VmHWM:"):
                        return int(line.split()[1]) * 1024
            except (OSError, ValueError, IndexError):
                pass
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


_PEAK: PeakRss | None = None  # set by main(), in the worker process only


def _result_message(r: RunResult) -> dict[str, Any]:
    return {
        "op": "result",
        "output": r.output,
        "result": encode_result(r.result),
        "error": r.error,
        "final": r.final,
        "operations": r.operations,
        "notes": r.notes,
        "peak_rss_bytes": (_PEAK or PeakRss()).bytes(),
        "cpu_s": _cpu_spent(),
    }


def _cpu_spent() -> float:
    used = resource.getrusage(resource.RUSAGE_SELF)
    return float(used.ru_utime + used.ru_stime)


def main() -> None:
    memory_bytes = int(sys.argv[1]) if len(sys.argv) > 1 else 2 << 30
    # everything the interpreter may import, before the file limit closes in
    import memagent.sandbox._modules  # noqa: F401

    session = Session()
    session.run("import " + ", ".join(Session.allowed_modules))
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # stray prints must not corrupt the protocol
    global _PEAK
    _PEAK = PeakRss()
    _prewarm()
    report = apply_os_limits(memory_bytes)
    Worker(inp, out, report).serve()


if __name__ == "__main__":
    main()
