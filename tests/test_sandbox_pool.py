"""The second wall: sandbox code in pre-started worker processes with OS limits."""

from __future__ import annotations

import json
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memagent.core import InvalidInput, MemoryHome
from memagent.core.deadline import deadline
from memagent.core.errors import DeadlineExceeded
from memagent.llm import Message, ScriptedLLM
from memagent.sandbox import IsolatedSession, Limits, WorkerPool, run_persisted, session_path
from memagent.server import KeyStore, ServerSettings, create_app
from memagent.server.testing import LiveServer

SEGFAULT = "import functools\nnext(functools.reduce(enumerate, [0]*1000000, iter([1])))"


@pytest.fixture(scope="module")
def pool() -> Iterator[WorkerPool]:
    p = WorkerPool(1)
    yield p
    p.close()


def test_runs_with_state_and_host_tools(pool: WorkerPool) -> None:
    calls: list[str] = []

    def shout(text: str) -> str:
        calls.append(text)
        return text.upper()

    s = IsolatedSession(tools={"shout": shout}, pool=pool)
    try:
        assert s.run("x = shout('hi')\nprint(x)").output == "HI\n"
        r = s.run("x + '!'")
        assert (r.result, r.error) == ("HI!", None)
        assert s.tool_names == ["shout"] and calls == ["hi"]
        doc, skipped = s.snapshot()
        assert doc["variables"] == {"x": "HI"} and skipped == []
    finally:
        s.close()


def test_tool_errors_reach_the_code_as_exceptions(pool: WorkerPool) -> None:
    def read_file(path: str) -> str:
        raise FileNotFoundError(f"{path} does not exist")

    r = pool.run(
        "try:\n    read_file('a.md')\nexcept FileNotFoundError as e:\n    out = str(e)\nout",
        tools={"read_file": read_file},
    )
    assert r.result == "a.md does not exist"
    r = pool.run("read_file(open)", tools={"read_file": read_file})
    assert (r.error is not None and "denied" in r.error) or "not" in (r.error or "")


def test_results_that_are_not_data_come_back_as_their_repr(pool: WorkerPool) -> None:
    r = pool.run("class A:\n    pass\nA()")
    assert r.error is None and repr(r.result) == "<A object>"
    assert r.to_json()["result"] == "<A object>"


def _kill_me(session: IsolatedSession, sig: int) -> Any:
    def kill() -> None:
        assert session._worker is not None
        os.kill(session._worker.proc.pid, sig)

    return kill


def test_a_crashed_worker_is_a_clear_error_and_replaced(pool: WorkerPool) -> None:
    s = IsolatedSession(pool=pool)
    try:
        s.add_tools({"crash": _kill_me(s, signal.SIGSEGV)})
        s.run("x = 1")
        r = s.run("crash()\nwhile True:\n    pass")
        assert r.error is not None and r.error.startswith("SandboxCrashed: ")
        assert "SIGSEGV" in r.error
        after = s.run("1 + 1")  # a fresh worker; the state is gone and a note says so
        assert after.result == 2 and any("crashed" in n for n in after.notes)
        assert s.run("x").error == "NameError: name 'x' is not defined (line 1)"
    finally:
        s.close()


def test_a_worker_that_stops_answering_is_killed_after_its_time_limit(pool: WorkerPool) -> None:
    s = IsolatedSession(limits=Limits(timeout_s=0.2), pool=pool)
    try:
        s.add_tools({"freeze": _kill_me(s, signal.SIGSTOP)})
        r = s.run("freeze()\n1")
        assert r.error == "SandboxCrashed: the worker overran its time limit and was killed"
        assert s.run("2").result == 2
    finally:
        s.close()


def test_the_request_budget_kills_code_mid_run(pool: WorkerPool) -> None:
    """A request's cancel (or deadline) stops sandboxed code at once, well inside its
    own time limit: the worker is killed and the session starts over."""
    s = IsolatedSession(limits=Limits(timeout_s=60, max_operations=10**12), pool=pool)
    cancel = threading.Event()
    try:
        s.add_tools({"started": lambda: cancel.set()})  # the code is running: cancel it
        s.run("x = 1")
        with deadline(None, cancel=cancel), pytest.raises(DeadlineExceeded, match="sandboxed"):
            s.run("started()\nwhile True:\n    pass")
        after = s.run("1 + 1")  # a fresh worker; the state is gone and a note says why
        assert after.result == 2
        assert after.notes == [
            "the previous run was cancelled with its request: "
            "this session started over, its variables are gone"
        ]
        assert s.run("2").notes == []  # said once
        with deadline(0.3), pytest.raises(DeadlineExceeded, match="ran out of time"):
            s.run("y = 1\nwhile True:\n    pass")
        with pytest.raises(InvalidInput, match="stopped by its request's deadline"):
            s.snapshot()
        later = s.run("3")
        assert later.result == 3 and not any("crashed" in n for n in later.notes)
        assert any("stopped by its request's deadline" in n for n in later.notes)
    finally:
        s.close()


def test_os_limits_hold_inside_the_worker(pool: WorkerPool) -> None:
    import resource

    s = IsolatedSession(pool=pool)
    try:
        s.run("1")
        assert s._worker is not None
        pid = s._worker.proc.pid
        limits = Path(f"/proc/{pid}/limits")
        if not limits.exists():
            pytest.skip("no /proc on this platform")
        text = limits.read_text()
        assert "Max address space" in text
        row = next(line for line in text.splitlines() if line.startswith("Max processes"))
        assert row.split()[2] == "0" or os.geteuid() == 0 or resource.RLIMIT_NPROC is None
        row = next(line for line in text.splitlines() if line.startswith("Max open files"))
        assert row.split()[3] == "8"
    finally:
        s.close()


def test_oversized_and_malformed_input_is_refused(pool: WorkerPool) -> None:
    s = IsolatedSession(limits=Limits(max_source_bytes=100), pool=pool)
    with pytest.raises(InvalidInput):
        s.run("x" * 200)
    with pytest.raises(InvalidInput):
        s.run(b"1")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        IsolatedSession(tools={"_private": print}, pool=pool)
    with pytest.raises(InvalidInput):
        s.restore_variables({"f": object()})
    s.close()


# ------------------------------------------------------------ the host lives on


def test_the_segfault_reproduction_through_the_server_leaves_others_served(
    tmp_path: Path,
) -> None:
    feedback: list[str] = []

    def model(messages: list[Message], schema: dict[str, Any] | None) -> str:
        props = (schema or {}).get("properties", {})
        if "facts" in props:
            return '{"facts": []}'
        last = messages[-1].content
        if "LimitExceeded" in last or "Sandbox" in last:
            feedback.append(last)
        if "python" in props and "LimitExceeded" not in last and "Sandbox" not in last:
            return json.dumps({"python": SEGFAULT})
        return json.dumps({"reply": "done"})

    root = tmp_path / "server"
    store = KeyStore(root)
    keys = {u: store.create(user=u)[0] for u in ("mallory", "bob")}
    settings_ = ServerSettings(mcp=False, embeddings=False)
    with LiveServer(create_app(root, settings_, llm=ScriptedLLM(fn=model))) as live:
        clients = {
            u: httpx.Client(base_url=live.url, headers={"Authorization": f"Bearer {k}"}, timeout=90)
            for u, k in keys.items()
        }
        out: dict[str, Any] = {}

        def attack() -> None:
            out["mallory"] = clients["mallory"].post(
                "/v1/chat", json={"message": "run this", "mode": "python"}
            )

        t = threading.Thread(target=attack)
        t.start()
        bob = clients["bob"].post("/v1/chat", json={"message": "hello"})
        t.join(120)
        assert bob.status_code == 200, bob.text
        assert out["mallory"].status_code == 200, out["mallory"].text
        again = clients["bob"].post("/v1/chat", json={"message": "still there?"})
        assert again.status_code == 200, again.text
        assert any("iterators nested more than 100 deep" in f for f in feedback), feedback
        for c in clients.values():
            c.close()


# ------------------------------------------------------------ hypothesis: limits hold

_ITERS = [
    "itertools.count()",
    "itertools.repeat('ab')",
    "itertools.cycle([1, 2])",
    "range(10**12)",
    "iter([1, 2, 3])",
    "enumerate(itertools.count())",
    "map(str, itertools.count())",
]
_CONSUMERS = [
    "list({it})",
    "bytes({it})",
    "bytearray({it})",
    "collections.deque(iterable={it}, maxlen=0)",
    "collections.Counter({it})",
    "dict.fromkeys({it})",
    "sorted({it})",
    "''.join(map(str, {it}))",
    "json.dumps(list({it}))",
    "itertools.combinations(iterable={it}, r=2)",
    "random.choices([1], weights={it})",
    "functools.reduce(enumerate, [0] * 10000, {it})",
    "list(itertools.chain.from_iterable([{it}]))",
    "str(dict.fromkeys({it}, 'x' * 5000).values())",
    "string.Template('$a' * 100000).substitute(a=str({it}))",
]
LIMITS = Limits(timeout_s=1.0, max_operations=300_000, max_total_alloc=300_000_000)


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    consumer=st.sampled_from(_CONSUMERS),
    inner=st.sampled_from(_ITERS),
    outer=st.sampled_from(_CONSUMERS),
)
def test_random_compositions_stay_under_the_limits(
    pool: WorkerPool, consumer: str, inner: str, outer: str
) -> None:
    expr = outer.format(it=f"iter({consumer.format(it=inner)})")
    code = "import collections, functools, itertools, json, random, string\n" + expr
    s = IsolatedSession(limits=LIMITS, pool=pool)
    try:
        r = s.run(code)
    finally:
        s.close()
    assert not (r.error or "").startswith("SandboxCrashed"), (code, r.error)
    assert len(r.output) <= LIMITS.max_output_chars + 200
    assert len(json.dumps(r.to_json())) <= LIMITS.max_str_len * 6 + 1000
    # memory as the worker itself measured it (its lifetime peak)
    assert s.last_peak_rss < 1_500_000_000, (code, s.last_peak_rss)


def test_a_crash_never_overwrites_the_saved_session(pool: WorkerPool, home: MemoryHome) -> None:
    first = IsolatedSession(pool=pool)
    assert run_persisted(home, "s", first, "kept = 41")["error"] is None
    first.close()
    saved = session_path(home, "s").read_bytes()
    s = IsolatedSession(pool=pool)
    s.add_tools({"crash": _kill_me(s, signal.SIGKILL)})
    doc = run_persisted(home, "s", s, "crash()\nkept + 1")
    assert doc["error"].startswith("SandboxCrashed: ")
    assert session_path(home, "s").read_bytes() == saved
    with pytest.raises(InvalidInput, match="crashed"):
        s.snapshot()
    s.close()


_BIG_HOST = """
import sys
from memagent.sandbox import IsolatedSession, WorkerPool
ballast = bytearray(800 * 1024 * 1024)
for i in range(0, len(ballast), 4096):
    ballast[i] = 1
pool = WorkerPool(1)
s = IsolatedSession(pool=pool)
r = s.run("x = 1 + 1")
s.close()
pool.close()
print(s.last_peak_rss)
"""


def test_a_worker_reports_its_own_peak_memory_not_its_big_hosts() -> None:
    """Linux carries a parent's peak RSS into its children (ru_maxrss): a worker
    started by a large server must still measure only itself, or it would be
    recycled after every run and the memory checks would mean nothing."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", _BIG_HOST], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    peak = int(done.stdout.strip().splitlines()[-1])
    assert 0 < peak < 400 * 1024 * 1024, peak
