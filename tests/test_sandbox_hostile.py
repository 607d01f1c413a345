"""The reproductions of issue 16, each a prompt, clear error and a living host."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator

import pytest
from typer.testing import CliRunner

from memagent.cli import app
from memagent.core import CorruptFile, MemoryHome
from memagent.sandbox import Limits, Session, load_session, run_persisted, session_path
from memagent.sandbox._interp import MAX_DEFINITIONS


def error_of(code: str, **limits: float) -> str:
    r = Session(limits=Limits(**limits)).run(code)  # type: ignore[arg-type]
    assert r.error is not None, r
    assert r.result is None
    return r.error


@pytest.mark.parametrize(
    "code", ["2**20000", "[1, {'a': (2**20000,)}]", "FINAL(2**20000)", "str(2**20000)"]
)
def test_int_to_str_digit_limit_is_a_sandbox_error(code: str) -> None:
    err = error_of(code)
    assert err.startswith("LimitExceeded: an integer of more than 4300 digits"), err
    assert "set_int_max_str_digits" not in err  # CPython's hint does not apply here


def test_int_to_str_through_the_cli_is_json_not_a_traceback() -> None:
    out = CliRunner().invoke(app, ["sandbox", "run"], input="2**20000\n")
    assert out.exit_code == 1
    body = json.loads(out.stdout)
    assert body["result"] is None
    assert body["error"].startswith("LimitExceeded: an integer of more than")


def test_big_int_within_the_digit_limit_still_renders() -> None:
    r = Session().run("2**14000")
    assert r.error is None and r.to_json()["result"] == str(2**14000)


# --------------------------------------------------------------- limits that hold

QUICK = {"timeout_s": 1.0}


@pytest.mark.parametrize(
    "code",
    [
        # C-level iterator nesting: a segfault in the host before issue 16.
        "import functools\nnext(functools.reduce(enumerate, [0]*1000000, iter([1])))",
        "it = iter([1])\nfor _ in range(100000):\n    it = enumerate(it)\nnext(it)",
        "import itertools\nit = iter([1])\nfor _ in range(100000):\n"
        "    it = itertools.chain.from_iterable([it])\nnext(it)",
        "import functools\n"
        "next(functools.reduce(lambda a, b: map(abs, a), range(100000), iter([1])))",
    ],
)
def test_nested_host_iterators_are_bounded(code: str) -> None:
    err = error_of(code, **QUICK)
    assert err.startswith("LimitExceeded"), err


@pytest.mark.parametrize(
    "code",
    [
        "import collections, itertools\ncollections.deque(iterable=itertools.count(), maxlen=0)",
        "import difflib, itertools\n"
        "difflib.get_close_matches('a', possibilities=itertools.repeat('b'))",
        "import itertools\nbytes(itertools.repeat(0))",
        "import itertools\nbytearray(itertools.cycle([1]))",
        "import random, itertools\nrandom.choices([1], weights=itertools.count())",
        # random accumulates weights/counts in host code: strings grew to GBs
        "import random, itertools\nrandom.choices([1], weights=itertools.repeat('ab'))",
        "import random, itertools\nrandom.sample([1], k=1, counts=itertools.repeat('ab'))",
        "import itertools\nitertools.combinations(iterable=itertools.count(), r=2)",
        "import collections\ncollections.deque(iterable=range(10**12), maxlen=0)",
        "import itertools\nlist(itertools.chain.from_iterable([range(10**12)]))",
        "import statistics\nstatistics.fmean(**{'data': range(10**12)})",
        "import heapq\nheapq.nlargest(2, *[range(10**12)])",
        "import itertools\nstr(bytes(x % 256 for x in range(10**12)))",
        "max([range(10**12)], key=sum)",
        "import itertools\ndict.fromkeys(itertools.count())",
        "import collections, itertools\ncollections.Counter(itertools.repeat('a'))",
    ],
)
def test_host_code_gets_only_metered_iterables(code: str) -> None:
    err = error_of(code, max_operations=200_000, **QUICK)
    assert err.startswith(("LimitExceeded", "SecurityError")), err


@pytest.mark.parametrize(
    "code",
    [
        "import json\njson.dumps([0]*100000, separators=(','*5000, ':'))",
        "import json\njson.dumps({'a': [0]*100000}, indent=60)",
        "import string\nstring.Template('$a'*100000).substitute(a='x'*5000)",
        "import string\nstring.Template('$a'*100000).safe_substitute({'a': 'x'*5000})",
        "str(dict.fromkeys(range(100000), 'x'*5000).values())",
        "repr(dict.fromkeys(range(100000), 'x'*5000).items())",
        "x = ['y'*5000] * 100000\n', '.join(map(str, x))",
        "'{}'.format(['y'*5000] * 100000)",
        "f\"{dict.fromkeys(range(100000), 'x'*5000).values()!r}\"",
        "import json\njson.dumps(['\\x00' * 1000] * 5000)",
    ],
)
def test_amplifying_host_results_are_estimated_before_they_run(code: str) -> None:
    err = error_of(code, **QUICK)
    assert err.startswith("LimitExceeded"), err


@pytest.mark.parametrize(
    "code",
    [
        "kept = []\nfor i in range(100000):\n    kept.append('x' * 65000)",
        "kept = []\nfor i in range(100000):\n    kept.append(str(i) * 20000)",
        "import json\ntext = json.dumps([[0] * 1000] * 300)\n"
        "kept = [json.loads(text) for _ in range(300)]",
        "kept = []\nfor i in range(100000):\n    kept.append([i] * 10000)",
    ],
)
def test_every_allocation_counts_toward_the_memory_budget(code: str) -> None:
    err = error_of(code, max_total_alloc=200_000_000, max_operations=10**8, timeout_s=20)
    assert "memory budget" in err, err


# --------------------------------------------------------------- session replay

SLOW_DEF = "def f{i}(x=sum(range(150_000))):\n    return x"


def _write_state(home: MemoryHome, name: str, definitions: list[str]) -> None:
    path = session_path(home, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {
        "version": 1,
        "variables": {},
        "definitions": [{"names": f"d{i}", "source": s} for i, s in enumerate(definitions)],
    }
    path.write_text(json.dumps(doc))


def test_replay_shares_the_budget_of_the_run_that_loads_it(home: MemoryHome) -> None:
    # each definition alone fits the budget; eight of them do not, replayed together
    _write_state(home, "s", [SLOW_DEF.format(i=i) for i in range(8)])
    session = Session(limits=Limits(max_operations=500_000))
    doc = run_persisted(home, "s", session, "1 + 1")
    assert doc["error"].startswith("LimitExceeded: operation limit of 500000")
    assert doc["error"].endswith("(replaying the session's definitions)")
    assert doc["result"] is None
    # and the failed replay saved nothing over the state
    assert len(json.loads(session_path(home, "s").read_text())["definitions"]) == 8


def test_replay_within_budget_restores_and_runs(home: MemoryHome) -> None:
    _write_state(home, "s", [SLOW_DEF.format(i=i) for i in range(2)])
    doc = run_persisted(home, "s", Session(limits=Limits(max_operations=2_000_000)), "f1() + 1")
    assert doc["error"] is None and doc["result"] == sum(range(150_000)) + 1


def test_replay_does_not_hold_the_home_lock(
    home: MemoryHome, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write_state(home, "s", [SLOW_DEF.format(i=0)])
    running = False
    locked_while_running: list[bool] = []
    real_run = Session.run
    real_lock = type(home.storage).lock

    def run(self: Session, code: str, **kw: object) -> object:
        nonlocal running
        running = True
        try:
            return real_run(self, code, **kw)  # type: ignore[arg-type]
        finally:
            running = False

    @contextlib.contextmanager
    def lock(self: object) -> Iterator[None]:
        locked_while_running.append(running)
        with real_lock(self):  # type: ignore[arg-type]
            yield

    monkeypatch.setattr(Session, "run", run)
    monkeypatch.setattr(type(home.storage), "lock", lock)
    doc = run_persisted(home, "s", Session(), "f0()")
    assert doc["error"] is None
    assert locked_while_running and not any(locked_while_running)


def test_definitions_per_session_are_capped(home: MemoryHome) -> None:
    code = "\n".join(f"def g{i}():\n    return {i}" for i in range(MAX_DEFINITIONS + 5))
    err = error_of(code)
    assert err.startswith(f"LimitExceeded: a session keeps at most {MAX_DEFINITIONS}")
    _write_state(home, "s", [f"def g{i}():\n    return {i}" for i in range(MAX_DEFINITIONS + 1)])
    with pytest.raises(CorruptFile, match="definitions"):
        load_session(home, "s", Session())


@pytest.mark.parametrize(
    "source",
    [
        "x = 1",
        "def f(): pass\nimport json",
        "print('hi')",
        "def f(:",
        "while True: pass",
    ],
)
def test_state_definitions_are_untrusted_input(home: MemoryHome, source: str) -> None:
    _write_state(home, "s", [source])
    before = session_path(home, "s").read_bytes()
    with pytest.raises(CorruptFile):
        run_persisted(home, "s", Session(), "1")
    assert session_path(home, "s").read_bytes() == before


def test_the_segfault_reproduction_through_the_cli_is_a_json_error() -> None:
    code = "import functools\nnext(functools.reduce(enumerate, [0]*1000000, iter([1])))\n"
    out = CliRunner().invoke(app, ["sandbox", "run", "--timeout", "20"], input=code)
    assert out.exit_code == 1, out.output
    body = json.loads(out.stdout)
    assert body["error"].startswith("LimitExceeded: "), body


@pytest.mark.parametrize(
    "expression",
    ["sum(range(10**12))", "2**20000", "[0] * 10**9", "max(enumerate(range(10**12)))"],
)
def test_calculate_refuses_hostile_expressions_clearly(expression: str) -> None:
    from memagent.agent.tools import calculate
    from memagent.core import InvalidInput

    with pytest.raises(InvalidInput, match="cannot calculate"):
        calculate(expression)
    assert calculate("6 * 7") == 42
