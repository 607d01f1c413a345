"""Every command, fed each class of bad input (a missing home, a read-only home, a
file where the home folder should be, non-UTF-8 stdin, huge input, malformed
input), fails the same way: a non-zero exit, one line on stderr naming the
problem, no traceback, and nothing written."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memagent.cli import app
from memagent.core import MemoryHome
from memagent.setup import init_home

runner = CliRunner()
CID = "chunk-20260101-000000000000"

# Every command that works on a memory home, with arguments that would succeed
# on a good one. `writes` marks the ones that must refuse a read-only home.
HOME_COMMANDS: list[tuple[list[str], bool]] = [
    (["hud"], True),
    (["links", CID], False),
    (["log"], False),
    (["remember", "hello there"], True),
    (["recall", "hello", "--keyword-only"], False),
    (["reindex", "--keyword-only"], True),
    (["persona", "ls"], False),
    (["persona", "show"], False),
    (["persona", "use", "BASE"], True),
    (["persona", "set", "humor", "50"], True),
    (["trace", "last"], False),
    (["chunks", "ls"], False),
    (["chunks", "show", CID], False),
    (["chunks", "rm", CID], True),
    (["chunks", "restore", CID], True),
    (["chunks", "link", CID, "supports", CID], True),
    (["profile", "show"], False),
    (["profile", "history", "x"], False),
    (["profile", "undo"], True),
    (["profile", "prune"], False),  # writes only when something expired
    (["profile", "create", "pets"], True),
    (["vault", "ls"], False),
    (["vault", "show", "user.md"], False),
]
# Commands that read a good home and must keep working when it is read-only.
READ_ONLY_OK: list[list[str]] = [
    ["log"],
    ["recall", "hello", "--keyword-only"],
    ["recall", "hello", "--keyword-only", "--json"],
    ["chunks", "ls"],
    ["profile", "show"],
    ["vault", "ls"],
    ["vault", "show", "user.md"],
    ["persona", "ls"],
]
# Commands whose contract is one JSON document on stdout (errors included).
JSON_CONTRACT = {("vault", "run"), ("sandbox", "run"), ("profile", "apply")}


def snapshot(root: Path) -> dict[str, str]:
    """Every file under `root` (except the derived index and the lock) by content."""
    out: dict[str, str] = {}
    if root.is_file():
        return {"": hashlib.sha256(root.read_bytes()).hexdigest()}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if rel.startswith("index.sqlite") or rel == ".lock" or p.is_dir():
            continue
        out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


@dataclass
class Outcome:
    exit_code: int
    stdout: str
    stderr: str


def invoke(args: list[str], stdin: bytes | None = None) -> Outcome:
    res = runner.invoke(app, args, input=stdin)
    assert res.exception is None or isinstance(res.exception, SystemExit), (
        args,
        repr(res.exception),
    )
    return Outcome(res.exit_code, res.stdout, res.stderr)


def assert_clean_failure(out: Outcome, args: list[str], *, mentions: str = "") -> None:
    assert out.exit_code != 0, (args, out)
    assert "Traceback" not in out.stderr + out.stdout, (args, out)
    if tuple(a for a in args[:2]) in JSON_CONTRACT:
        doc = json.loads(out.stdout)
        assert doc["error"], (args, out)
        detail = json.dumps(doc)
    else:
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), (args, out.stderr)
        detail = lines[0]
    assert mentions.lower() in detail.lower(), (args, detail)


@pytest.fixture
def good(tmp_path: Path) -> MemoryHome:
    mh = MemoryHome.open(tmp_path / "home")
    init_home(mh)
    return mh


@pytest.mark.parametrize("args", [a for a, _ in HOME_COMMANDS], ids=" ".join)
def test_missing_home_and_file_instead_of_folder(tmp_path: Path, args: list[str]) -> None:
    missing = tmp_path / "nope"
    out = invoke([*args, "--home", str(missing)])
    assert_clean_failure(out, args, mentions="no memory home")
    assert not missing.exists()
    a_file = tmp_path / "file"
    a_file.write_bytes(b"not a folder")
    for home in (a_file, a_file / "below"):
        out = invoke([*args, "--home", str(home)])
        assert_clean_failure(out, args, mentions="is a file, not a folder")
    assert a_file.read_bytes() == b"not a folder"


def test_init_on_a_file_is_one_line(tmp_path: Path) -> None:
    a_file = tmp_path / "f"
    a_file.write_text("x")
    out = invoke(["init", "--home", str(a_file)])
    assert_clean_failure(out, ["init"], mentions="not a folder")
    assert a_file.read_text() == "x"


def _stdin_cases() -> list[tuple[str, list[str], bytes, str]]:
    latin1 = b"caf\xe9"
    deep = b"[" * 10_000 + b"]" * 10_000
    huge_int = b'{"content": "x", "id": ' + b"9" * 5000 + b"}\n"
    two_then_bad = (
        b'{"content": "first", "timestamp": "2024-01-01T00:00:00Z"}\n'
        b'{"content": "second", "timestamp": "0999-01-01T00:00:00Z"}\n'
    )
    return [
        ("non-utf8", ["remember", "-"], latin1, "utf-8"),
        ("non-utf8", ["import", "-"], latin1, "utf-8"),
        ("non-utf8", ["vault", "run"], latin1, "utf"),
        ("non-utf8", ["vault", "run", "--python"], latin1, "utf-8"),
        ("non-utf8", ["sandbox", "run"], latin1, "utf-8"),
        ("non-utf8", ["profile", "apply", "-f", "-"], latin1, "utf-8"),
        ("empty", ["sandbox", "run"], b"", "no code"),
        ("empty", ["vault", "run", "--python"], b"", "no code"),
        ("empty", ["remember", "-"], b"  \n", "empty"),
        ("huge", ["remember", "-"], b"word " * (4 * 1024 * 1024), "larger than"),
        ("huge", ["import", "-"], huge_int, "digits"),
        ("huge", ["sandbox", "run"], b"x = 1\n" * 200_000, "over"),
        (
            "huge",
            ["vault", "run"],
            b"[" + b'{"action": "list_files"},' * 400_000 + b"{}]",
            "larger",
        ),
        ("huge", ["profile", "apply", "-f", "-"], b"[" + b"{}," * 600_000 + b"{}]", "over"),
        ("malformed", ["import", "-"], deep, "nested too deeply"),
        ("malformed", ["import", "-"], b'{"content": "x"}\n{"content": ', "line 2"),
        ("malformed", ["import", "-"], two_then_bad, "out of range"),
        ("malformed", ["profile", "apply", "-f", "-"], deep, "nested too deeply"),
        ("malformed", ["profile", "apply", "-f", "-"], b"[{", "not valid json"),
        ("malformed", ["vault", "run"], b"[{]", ""),
    ]


@pytest.mark.parametrize(
    ("kind", "args", "stdin", "mentions"),
    _stdin_cases(),
    ids=[f"{c[0]}:{' '.join(c[1])}" for c in _stdin_cases()],
)
def test_bad_stdin_is_one_line_and_writes_nothing(
    good: MemoryHome, kind: str, args: list[str], stdin: bytes, mentions: str
) -> None:
    del kind
    before = snapshot(good.root)
    out = invoke([*args, "--home", str(good.root)], stdin=stdin)
    assert_clean_failure(out, args, mentions=mentions)
    assert snapshot(good.root) == before


def test_import_dash_reads_stdin(good: MemoryHome) -> None:
    lines = b'{"content": "piped in", "timestamp": "2024-01-01T00:00:00Z"}\n'
    out = invoke(["import", "-", "--home", str(good.root), "--keyword-only"], stdin=lines)
    assert out.exit_code == 0, out
    hits = json.loads(
        invoke(["recall", "piped", "--home", str(good.root), "--keyword-only", "--json"]).stdout
    )["hits"]
    assert hits[0]["content"] == "piped in"
    assert hits[0]["source"]["file"] == "stdin"


def test_version_and_plain_help() -> None:
    out = invoke(["--version"])
    assert out.exit_code == 0 and out.stdout.startswith("memagent ")
    shown = invoke(["vault", "show", "--help"]).stdout
    assert "[[wikilink]]" in shown  # Rich markup would eat the brackets
    assert "[store]" in " ".join(invoke(["recall", "--help"]).stdout.split())


def test_unexpected_errors_are_one_line(good: MemoryHome) -> None:
    (good.root / "profile" / "resource_user_deep.json").write_text(
        '{"_metadata": {}, "a": ' + "[" * 5000 + "]" * 5000 + "}"
    )
    out = invoke(["profile", "show", "--home", str(good.root)])
    assert_clean_failure(out, ["profile", "show"], mentions="nested too deeply")
    # The index skips it; recall still works.
    out = invoke(["recall", "x", "--home", str(good.root), "--keyword-only", "--json"])
    assert out.exit_code == 0, out


_DRIVER = """
import json, sys
from typer.testing import CliRunner
from memagent.cli import app
results = []
for args in json.loads(sys.argv[1]):
    r = CliRunner().invoke(app, args)
    results.append({"args": args, "code": r.exit_code, "out": r.stdout, "err": r.stderr,
                    "exc": None if r.exception is None or isinstance(r.exception, SystemExit)
                    else repr(r.exception)})
print(json.dumps(results))
"""


def _run_read_only(home: Path, cases: list[list[str]]) -> list[dict[str, object]]:
    """Run the commands in one process that sees `home` read-only: a read-only bind
    mount in a private mount namespace when we are root (permissions do not stop
    root), else plain permissions."""
    argv = [sys.executable, "-c", _DRIVER, json.dumps(cases)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    if os.geteuid() == 0:
        if shutil.which("unshare") is None:
            pytest.skip("root without unshare: cannot make a read-only home")
        script = 'mount --bind -o ro "$0" "$0" || exit 97; exec "$@"'
        argv = ["unshare", "-m", "sh", "-c", script, str(home), *argv]
        proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)
        if proc.returncode == 97 or "unshare failed" in proc.stderr:
            pytest.skip(f"cannot mount read-only here: {proc.stderr.strip()}")
    else:
        dirs = [home, *(p for p in home.rglob("*") if p.is_dir())]
        for d in dirs:
            d.chmod(0o555)
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)
        finally:
            for d in dirs:
                d.chmod(0o755)
    assert proc.returncode == 0, proc.stderr
    results: list[dict[str, object]] = json.loads(proc.stdout)
    return results


@pytest.mark.slow
def test_read_only_home_reads_work_and_writes_fail_cleanly(good: MemoryHome) -> None:
    h = str(good.root)
    ids = []
    for text in ("hello from before", "and a second memory"):
        out = invoke(["remember", text, "--home", h, "--keyword-only", "--json"])
        ids.append(json.loads(out.stdout)[0]["id"])
    invoke(["chunks", "rm", ids[1], "--home", h])
    real = {CID: ids[0]}
    writers = [[real.get(x, x) for x in a] for a, writes in HOME_COMMANDS if writes]
    writers = [a for a in writers if a[:2] != ["profile", "undo"]]  # nothing to undo
    for a in writers:  # restore needs a deleted chunk; a link needs two chunks
        if a[:2] == ["chunks", "link"]:
            a[4] = ids[1]
        if a[:2] == ["chunks", "restore"]:
            a[2] = ids[1]
    before = snapshot(good.root)
    cases = [[*a, "--home", h] for a in READ_ONLY_OK] + [[*a, "--home", h] for a in writers]
    results = _run_read_only(good.root, cases)
    for r in results[: len(READ_ONLY_OK)]:
        assert r["code"] == 0 and r["exc"] is None, r
    recalled = json.loads(str(results[2]["out"]))["hits"]
    assert any("hello from before" in hit["content"] for hit in recalled)
    for r in results[len(READ_ONLY_OK) :]:
        args = r["args"]
        assert isinstance(args, list)
        assert r["exc"] is None, r
        out = Outcome(int(str(r["code"])), str(r["out"]), str(r["err"]))
        assert_clean_failure(out, args, mentions="read-only")
    assert snapshot(good.root) == before
