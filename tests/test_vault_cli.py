from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memagent.cli import app
from memagent.core import MemoryHome, read_ops

runner = CliRunner()


def invoke(home: MemoryHome, *args: str, stdin: str | bytes | None = None) -> tuple[int, str]:
    res = runner.invoke(app, [*args, "--home", str(home.root)], input=stdin)
    return res.exit_code, res.stdout


def ops_count(home: MemoryHome) -> int:
    return sum(1 for _ in read_ops(home.layout.ops_log))


def test_run_json_array(home: MemoryHome) -> None:
    code, out = invoke(
        home,
        "vault",
        "run",
        stdin=json.dumps(
            [
                {"action": "create_file", "path": "a.md", "content": "hi"},
                {"action": "read_file", "path": "missing.md"},
            ]
        ),
    )
    assert code == 0
    result = json.loads(out)
    assert result["succeeded"] == 1 and result["failed"] == 1
    assert (home.layout.vault / "a.md").read_text() == "hi"


def test_run_llm_text(home: MemoryHome) -> None:
    text = (
        "<think>x</think>\n<actions>\n```json\n"
        '[{"action": "read_file", "path": "user.md"}]\n```\n</actions><reply>r</reply>'
    )
    code, out = invoke(home, "vault", "run", stdin=text)
    assert code == 0 and json.loads(out)["results"][0]["value"].startswith("# User")


def test_run_bad_input_writes_nothing(home: MemoryHome) -> None:
    before = ops_count(home)
    for stdin in (
        "not json at all",
        '<actions>[{"action": "create_file", "path": "a.md"}]</actions>',
        '[{"action": "create_file", "path": "a.md", "content": "x"}, {"action": "nope"}]',
        b"\xff\xfe",
        "",
    ):
        code, out = invoke(home, "vault", "run", stdin=stdin)
        err = json.loads(out)
        assert code == 2 and err["ok"] is False and err["error"], stdin
    assert ops_count(home) == before
    assert not (home.layout.vault / "a.md").exists()


def test_run_oversized_input(home: MemoryHome, monkeypatch: pytest.MonkeyPatch) -> None:
    import memagent.cli.commands.vault as cmd

    monkeypatch.setattr(cmd, "MAX_STDIN_BYTES", 100)
    code, out = invoke(home, "vault", "run", stdin="[" + " " * 200 + "]")
    assert code == 2 and "larger than 100 bytes" in json.loads(out)["error"]


def test_run_without_home(tmp_path: Path) -> None:
    res = runner.invoke(
        app, ["vault", "run", "--home", str(tmp_path / "none")], input='[{"action": "list_files"}]'
    )
    assert res.exit_code == 1 and "no memory home" in json.loads(res.stdout)["error"]
    assert not (tmp_path / "none").exists()


def test_schema_ls_show(home: MemoryHome) -> None:
    code, out = invoke(home, "vault", "schema")
    assert code == 0 and json.loads(out)["type"] == "array"
    (home.layout.vault / "entities" / "jane_doe.md").write_text("# Jane Doe\n\n## Work\nAtlas\n")
    code, out = invoke(home, "vault", "ls", "-r")
    assert code == 0 and out.split() == ["entities/", "entities/jane_doe.md", "user.md"]
    code, out = invoke(home, "vault", "ls", "entities", "--json")
    assert json.loads(out)["entries"] == ["entities/jane_doe.md"]
    code, out = invoke(home, "vault", "show", "entities/jane_doe.md")
    assert code == 0 and out == "# Jane Doe\n\n## Work\nAtlas\n"
    code, out = invoke(home, "vault", "show", "[[Jane Doe#Work]]")
    assert out == "## Work\nAtlas\n"


def test_show_and_ls_errors(home: MemoryHome) -> None:
    res = runner.invoke(app, ["vault", "show", "../config.toml", "--home", str(home.root)])
    assert res.exit_code == 1 and "'..'" in res.stderr
    res = runner.invoke(app, ["vault", "ls", "nope", "--home", str(home.root)])
    assert res.exit_code == 1 and "does not exist" in res.stderr


def test_demo_runs_without_a_tty_and_never_touches_a_home(
    home: MemoryHome, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMAGENT_HOME", str(home.root))
    before = sorted(p.relative_to(home.root) for p in home.root.rglob("*"))
    log = home.layout.ops_log.read_bytes()
    for _ in range(2):  # rerunnable
        res = runner.invoke(app, ["demo"])
        assert res.exit_code == 0, res.output
        for text in ("Step 1", "<actions>", "6 succeeded, 1 failed", "ops log", "jane_doe.md"):
            assert text in res.stdout
        assert "scratch home" in res.stdout
    assert sorted(p.relative_to(home.root) for p in home.root.rglob("*")) == before
    assert home.layout.ops_log.read_bytes() == log
    res = runner.invoke(app, ["demo", "--home", str(home.root)])  # an existing home: refused
    assert res.exit_code == 1 and "never writes into an existing home" in res.stderr
    assert home.layout.ops_log.read_bytes() == log
    kept = tmp_path / "demo-home"
    res = runner.invoke(app, ["demo", "--home", str(kept)])  # a new folder: kept there
    assert res.exit_code == 0, res.output
    assert "[[Jane Doe]]" in (kept / "vault" / "user.md").read_text()
    assert any(r.actor == "demo" for r in read_ops(MemoryHome.open(kept).layout.ops_log))
