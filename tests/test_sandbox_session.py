"""Sessions persisted in a memory home, and the `memagent sandbox run` command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memagent.cli import app
from memagent.core import CorruptFile, InvalidInput, MemoryHome
from memagent.sandbox import Session, load_session, save_session, session_path

runner = CliRunner()


def _fresh(home: MemoryHome, name: str = "s") -> Session:
    s = Session()
    load_session(home, name, s)
    return s


def test_save_and_load_round_trip(home: MemoryHome) -> None:
    s = Session()
    r = s.run(
        "import math\n"
        "data = {'a': [1, 2.5, None, True], 'b': (1, 'x'), 'c': {1, 2}, 'd': b'\\x00\\xff',"
        " 'e': frozenset({3}), 'f': {1: 'one'}, '$odd': 1, 'g': float('inf')}\n"
        "def area(r):\n    return math.pi * r * r\n"
        "class Box:\n    def __init__(self, v):\n        self.v = v\n"
        "inst = Box(1)\n"
        "pat = __import__ if False else 0\n"
    )
    assert r.error is None, r.error
    skipped = save_session(home, "s", s)
    assert skipped == ["inst"]
    s2 = _fresh(home)
    assert s2.variables["data"] == s.variables["data"]
    r2 = s2.run("round(area(1), 2), Box(3).v, pat")
    assert (r2.error, r2.result) == (None, (3.14, 3, 0))


def test_state_file_is_written_through_storage(home: MemoryHome) -> None:
    s = Session()
    s.run("x = 1")
    save_session(home, "s", s)
    ops = home.ops(actor="sandbox")
    assert [o.op for o in ops] == ["sandbox.save"]
    assert ops[0].path == "state/sandbox/s.json"


def test_reassigned_definition_keeps_data(home: MemoryHome) -> None:
    s = Session()
    s.run("def f():\n    return 1\nf = 5")
    save_session(home, "s", s)
    assert _fresh(home).run("f").result == 5


def test_defaults_referring_to_variables_replay(home: MemoryHome) -> None:
    s = Session()
    s.run("base = 10\ndef add(x, b=base):\n    return x + b")
    save_session(home, "s", s)
    assert _fresh(home).run("add(1)").result == 11


@pytest.mark.parametrize("name", ["", "../x", "a/b", ".hidden", "x" * 65, "a b", "..", "a\x00"])
def test_bad_session_names_are_refused(home: MemoryHome, name: str) -> None:
    with pytest.raises(InvalidInput):
        session_path(home, name)


@pytest.mark.parametrize(
    "content",
    [
        b"not json",
        b"\xff\xfe",
        b"[]",
        b'{"version": 99, "variables": {}, "definitions": []}',
        b'{"version": 1, "variables": {"__x__": 1}, "definitions": []}',
        b'{"version": 1, "variables": {"x": {"$bytes": "@@"}}, "definitions": []}',
        b'{"version": 1, "variables": {"x": {"$evil": 1}}, "definitions": []}',
        b'{"version": 1, "variables": [], "definitions": []}',
    ],
)
def test_corrupt_state_is_reported_not_overwritten(home: MemoryHome, content: bytes) -> None:
    path = session_path(home, "s")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    with pytest.raises(CorruptFile):
        load_session(home, "s", Session())
    assert path.read_bytes() == content


def test_hostile_definitions_in_state_are_sandboxed(home: MemoryHome, tmp_path: Path) -> None:
    canary = tmp_path / "canary"
    canary.write_text("safe")
    path = session_path(home, "s")
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {
        "version": 1,
        "variables": {},
        "definitions": [
            {"names": "os", "source": "import os"},
            {"names": "x", "source": f"open({str(canary)!r}, 'w').write('pwned')"},
        ],
    }
    path.write_text(json.dumps(doc))
    # a "definition" that is not one def/class/import is refused before anything runs
    with pytest.raises(CorruptFile, match="one def, class or import"):
        load_session(home, "s", Session())
    assert canary.read_text() == "safe"
    doc["definitions"] = doc["definitions"][:1]
    path.write_text(json.dumps(doc))
    notes = load_session(home, "s", Session())
    assert len(notes) == 1 and "SecurityError" in notes[0]


def test_oversized_state_is_refused_and_nothing_written(home: MemoryHome) -> None:
    s = Session()
    s.run("big = 'x' * 2_000_000")
    with pytest.raises(InvalidInput):
        save_session(home, "s", s)
    assert not session_path(home, "s").exists()


def test_cli_run_prints_json() -> None:
    r = runner.invoke(app, ["sandbox", "run"], input="print('hi')\n6 * 7\n")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout) == {"output": "hi\n", "result": 42, "error": None, "final": False}


def test_cli_error_exit_1_with_json() -> None:
    r = runner.invoke(app, ["sandbox", "run"], input="import os\n")
    assert r.exit_code == 1
    doc = json.loads(r.stdout)
    assert doc["error"].startswith("SecurityError: import of 'os' is not allowed")


def test_cli_limits_options() -> None:
    r = runner.invoke(app, ["sandbox", "run", "--max-ops", "1000"], input="while True: pass\n")
    assert r.exit_code == 1
    assert "operation limit of 1000" in json.loads(r.stdout)["error"]


def test_cli_bad_input_exit_2() -> None:
    r = runner.invoke(app, ["sandbox", "run"], input=b"\xff\xfe\x00")
    assert r.exit_code == 2
    assert "not UTF-8" in json.loads(r.stdout)["error"]


def test_cli_session_persists_between_calls(home: MemoryHome) -> None:
    args = ["sandbox", "run", "--home", str(home.root), "--session", "work"]
    r1 = runner.invoke(app, args, input="n = 2\ndef twice(v):\n    return v * 2\n")
    assert r1.exit_code == 0, r1.output
    r2 = runner.invoke(app, args, input="n = twice(n)\nn\n")
    r3 = runner.invoke(app, args, input="twice(n)\n")
    assert json.loads(r2.stdout)["result"] == 4
    assert json.loads(r3.stdout)["result"] == 8
    assert session_path(home, "work").exists()


def test_cli_session_needs_existing_home(tmp_path: Path) -> None:
    r = runner.invoke(
        app, ["sandbox", "run", "--home", str(tmp_path / "none"), "--session", "w"], input="1"
    )
    assert r.exit_code == 2
    assert not (tmp_path / "none").exists()


def test_cli_bad_session_name(home: MemoryHome) -> None:
    r = runner.invoke(
        app, ["sandbox", "run", "--home", str(home.root), "--session", "../x"], input="1"
    )
    assert r.exit_code == 2
    assert "invalid session name" in json.loads(r.stdout)["error"]


def test_cli_oversized_stdin_is_refused() -> None:
    r = runner.invoke(app, ["sandbox", "run"], input="x = 1\n" * 200_000)
    assert r.exit_code == 2
    assert "code over" in json.loads(r.stdout)["error"]


def test_cli_reads_code_from_file(tmp_path: Path) -> None:
    script = tmp_path / "s.py"
    script.write_text("FINAL('from file')\n")
    r = runner.invoke(app, ["sandbox", "run", "--file", str(script)])
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    assert (doc["result"], doc["final"]) == ("from file", True)


def test_optimistic_save_detects_a_concurrent_save(home: MemoryHome) -> None:
    from memagent.core import Conflict
    from memagent.sandbox import state_digest

    first = Session()
    first.run("x = 1")
    save_session(home, "s", first)
    digest = state_digest(home, "s")
    other = Session()
    other.run("x = 2")
    save_session(home, "s", other, expected=digest)
    stale = Session()
    stale.run("x = 3")
    with pytest.raises(Conflict):
        save_session(home, "s", stale, expected=digest)
    assert _fresh(home).run("x").result == 2
