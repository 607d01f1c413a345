"""`memagent ask --batch Q.jsonl [--json] [--short]`: many questions, one model,
nothing stored; every line checked before the model loads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memagent.cli.app import app
from memagent.core import MemoryHome

runner = CliRunner()


def script(tmp_path: Path, replies: list[str]) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(replies), encoding="utf-8")
    return f"scripted:{path}"


def reply(text: str) -> str:
    return json.dumps({"reply": text})


def ops_lines(home: MemoryHome) -> int:
    return len(home.layout.ops_log.read_text(encoding="utf-8").splitlines())


def test_batch_answers_each_line_and_stores_nothing(home: MemoryHome, tmp_path: Path) -> None:
    h = str(home.root)
    res = runner.invoke(app, ["remember", "My dog is called Rex.", "--home", h, "--keyword-only"])
    assert res.exit_code == 0, res.stderr
    before = ops_lines(home)
    qs = tmp_path / "q.jsonl"
    qs.write_text(
        json.dumps({"id": "a", "question": "What is my dog called?"})
        + "\n\n"
        + json.dumps({"question": "Where do I live?"})
        + "\n",
        encoding="utf-8",
    )
    model = script(tmp_path, [reply("Rex"), reply("I don't have that in memory.")])
    res = runner.invoke(
        app, ["ask", "--batch", str(qs), "--json", "--short", "--home", h, "--model", model]
    )
    assert res.exit_code == 0, res.stderr
    lines = [json.loads(x) for x in res.stdout.splitlines()]
    assert [x["id"] for x in lines] == ["a", 3]  # no id: the line number
    assert lines[0]["answer"] == "Rex" and lines[0]["ok"] is True
    assert lines[0]["memory_ids"] and lines[0]["error"] is None
    assert lines[1]["answer"] == "I don't have that in memory."
    assert all(x["latency_s"] >= 0 and x["prompt_tokens"] >= 0 for x in lines)
    assert ops_lines(home) == before  # read-only: no exchange, conversation or trace
    model = script(tmp_path, [reply("Rex"), reply("Nowhere known.")])
    res = runner.invoke(app, ["ask", "--batch", str(qs), "--home", h, "--model", model])
    assert res.exit_code == 0 and res.stdout.splitlines() == ["Rex", "Nowhere known."]


def test_a_failing_model_is_reported_per_line_and_exits_1(home: MemoryHome, tmp_path: Path) -> None:
    qs = tmp_path / "q.jsonl"
    qs.write_text('{"id": 1, "question": "A?"}\n{"id": 2, "question": "B?"}\n', encoding="utf-8")
    model = script(tmp_path, [reply("Yes.")])  # the second question finds the script empty
    res = runner.invoke(
        app, ["ask", "--batch", str(qs), "--json", "--home", str(home.root), "--model", model]
    )
    assert res.exit_code == 1
    first, second = (json.loads(x) for x in res.stdout.splitlines())
    assert first["ok"] and not second["ok"] and second["answer"] == ""
    assert "the model failed" in second["error"]
    assert "1 of 2 questions failed" in res.stderr


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "no questions"),
        ("not json\n", "line 1: not valid JSON"),
        ('{"id": 1}\n', 'line 1: expected {"id": …, "question": "…"}'),
        ('["question"]\n', "line 1: expected"),
        ('{"question": 5}\n', "line 1: expected"),
        ('{"question": "ok?"}\n{"question": "   "}\n', "line 2: the message is empty"),
        ('{"question": "nul\\u0000"}\n', "NUL"),
        ('{"question": "' + "x" * 20_001 + '"}\n', "20001 characters"),
        ('{"id": {"a": 1}, "question": "q?"}\n', "id must be a string or a number"),
    ],
)
def test_bad_batch_files_are_refused_before_anything_runs(
    home: MemoryHome, tmp_path: Path, content: str, message: str
) -> None:
    qs = tmp_path / "q.jsonl"
    qs.write_text(content, encoding="utf-8")
    before = ops_lines(home)
    model = script(tmp_path, [])  # never called: a call would fail differently
    res = runner.invoke(
        app, ["ask", "--batch", str(qs), "--json", "--home", str(home.root), "--model", model]
    )
    assert res.exit_code == 1
    assert message in res.stderr and res.stdout == ""
    assert ops_lines(home) == before


def test_batch_file_problems(home: MemoryHome, tmp_path: Path) -> None:
    h = str(home.root)
    bad = tmp_path / "latin1.jsonl"
    bad.write_bytes(b'{"question": "caf\xe9?"}\n')
    for args, message in [
        (["--batch", str(tmp_path / "missing.jsonl")], "cannot read"),
        (["--batch", str(bad)], "not UTF-8"),
        (["--batch", str(bad), "Also a question?"], "one of them"),
        ([], "one of them"),
        (["--batch", str(bad), "--deep"], "do not go together"),
    ]:
        res = runner.invoke(app, ["ask", *args, "--home", h, "--model", "scripted:x.json"])
        assert res.exit_code != 0, args
        assert message in res.stderr, (args, res.stderr)
