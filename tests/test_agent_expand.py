"""Query expansion for `recall --deep` (memagent.agent.expand), with the scripted model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memagent.agent.expand import MAX_TERM_CHARS, MAX_TERMS, Expansion, expand_query, parse_terms
from memagent.cli import app
from memagent.core import InvalidInput, MemoryHome
from memagent.index import MAX_QUERY_CHARS
from memagent.llm import LLMError, ScriptedLLM

runner = CliRunner()


def test_terms_are_split_cleaned_and_deduplicated() -> None:
    reply = "Art Gallery, museum exhibit,\n- concert; art gallery , 1. theatre show.\n\n,,"
    assert parse_terms(reply) == ["art gallery", "museum exhibit", "concert", "theatre show"]


def test_hostile_and_oversized_replies_are_bounded() -> None:
    assert parse_terms("") == [] and parse_terms(",,, ;\n") == []
    assert parse_terms(None) == []  # type: ignore[arg-type]
    got = parse_terms(", ".join(f"word{i}" for i in range(1000)))
    assert len(got) == MAX_TERMS
    long = parse_terms("x" * 10_000)
    assert long == ["x" * MAX_TERM_CHARS]
    assert parse_terms("a\x00b\x1b[31m, ok") == ["a b [31m", "ok"]
    assert parse_terms("---, ..., '''") == []
    # The question itself is not a new term.
    assert parse_terms("dogs, pets", "Dogs") == ["pets"]


def test_expanded_query_keeps_the_question_first_and_within_the_limit() -> None:
    e = Expansion("art events I attended?", ["gallery", "museum"])
    assert e.expanded == "art events I attended? gallery, museum"
    assert Expansion("q").expanded == "q"
    big = Expansion("q" * (MAX_QUERY_CHARS - 10), ["abcdefgh", "ijklmnop"])
    assert big.expanded.startswith("q" * 10) and len(big.expanded) <= MAX_QUERY_CHARS


def test_expand_query_asks_the_model_once_with_the_question() -> None:
    llm = ScriptedLLM(["gallery, museum, concert"])
    got = expand_query(llm, "How many art-related events did I attend?")
    assert got.terms == ["gallery", "museum", "concert"]
    assert got.expanded.endswith("gallery, museum, concert")
    (call,) = llm.calls
    assert "How many art-related events" in call.messages[-1].content
    assert call.messages[0].role == "system" and "keywords" in call.messages[0].content


def test_bad_questions_are_refused_before_the_model() -> None:
    llm = ScriptedLLM([])
    for bad in ("", "   ", "x" * (MAX_QUERY_CHARS + 1)):
        with pytest.raises(InvalidInput):
            expand_query(llm, bad)
    assert llm.calls == []


def _script(tmp_path: Path, replies: list[str]) -> str:
    p = tmp_path / "script.json"
    p.write_text(json.dumps(replies), encoding="utf-8")
    return f"scripted:{p}"


def test_cli_recall_deep_finds_what_the_question_does_not_name(
    home: MemoryHome, tmp_path: Path
) -> None:
    h = str(home.root)
    for text in ("I went to a gallery opening downtown.", "I fixed the kitchen sink."):
        assert runner.invoke(app, ["remember", text, "--home", h, "--keyword-only"]).exit_code == 0
    q = "which art events did I attend?"
    plain = runner.invoke(app, ["recall", q, "--home", h, "--json", "--keyword-only"])
    assert plain.exit_code == 0 and json.loads(plain.stdout)["hits"] == []
    model = _script(tmp_path, ["gallery, exhibition, museum"])
    res = runner.invoke(
        app, ["recall", q, "--home", h, "--json", "--keyword-only", "--deep", "--model", model]
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["expansion"] == ["gallery", "exhibition", "museum"]
    assert "gallery opening" in out["hits"][0]["content"]


def test_cli_recall_deep_falls_back_when_the_model_fails(home: MemoryHome, tmp_path: Path) -> None:
    h = str(home.root)
    runner.invoke(app, ["remember", "The dog is called Biscuit.", "--home", h, "--keyword-only"])
    model = _script(tmp_path, [])  # exhausted at once: the model fails
    res = runner.invoke(
        app, ["recall", "dog", "--home", h, "--json", "--keyword-only", "--deep", "--model", model]
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["expansion"] == [] and "Biscuit" in out["hits"][0]["content"]
    assert "plain recall" in res.stderr


def test_cli_model_without_deep_and_bad_model_specs(home: MemoryHome) -> None:
    h = str(home.root)
    res = runner.invoke(app, ["recall", "x", "--home", h, "--model", "embedded"])
    assert res.exit_code == 1 and "--deep" in res.stderr
    res = runner.invoke(app, ["recall", "x", "--home", h, "--deep", "--model", "nope:zzz"])
    assert res.exit_code == 1 and "model spec" in res.stderr


def test_scripted_failure_is_an_llm_error() -> None:
    with pytest.raises(LLMError):
        expand_query(ScriptedLLM([]), "anything")
