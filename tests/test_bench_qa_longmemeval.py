"""bench.qa_longmemeval and its offline judge (bench.qa_judge) with the scripted
model: the judge's rules (stemming, numbers as words, alternatives, abstention),
the oracle's evidence-only context, preference reported apart, the cache, and
one-line errors for malformed arguments and data."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from bench import qa_longmemeval as lme
from bench.qa_judge import content_words, gold_alternatives, judge, number_word
from bench.qa_scoring import stem

from memagent.core import MemoryHome
from memagent.memory.chunks import ChunkDraft, ChunkStore
from memagent.setup import init_home


# -- the judge --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "answer, gold, correct",
    [
        ("I ran two marathons", "a marathon", True),  # stemming: marathons ~ marathon
        ("You own 3 bikes.", "three", True),  # numbers as words or digits
        ("three", "3", True),
        ("twenty-five", "25", True),
        ("We met twice.", "We've met up twice.", True),
        ("You paid 3750 dollars", "$3,750", True),  # currency sign, thousands comma
        ("$12 each", "$12", True),
        ("at 6:00 pm", "6:00 pm", True),
        ("6:30 pm", "6:00 pm", False),
        ("Los Angeles", "University of California, Los Angeles (UCLA)", False),
        ("UCLA", "University of California, Los Angeles (UCLA)", True),  # an abbreviation
        ("the University of California in Los Angeles",
         "University of California, Los Angeles (UCLA)", True),
        ("10 days", "9 days ago. 10 days (including the last day) is also acceptable.", True),
        ("11 days", "9 days ago. 10 days (including the last day) is also acceptable.", False),
        ("lavender fizz", "lavender gin fizz", False),  # every content word is needed
        ("I don't have that in memory.", "Instant Pot", False),  # a refusal is wrong here
    ],
)  # fmt: skip
def test_judge_cases(answer: str, gold: str, correct: bool) -> None:
    assert judge("q1", answer, gold) is correct


def test_abstention_questions_are_scored_as_refusals() -> None:
    assert judge("q1_abs", "I don't have that in memory.", "You did not mention it") is True
    assert judge("q1_abs", "Your cat is Pixel.", "You did not mention it") is False


def test_judge_helpers() -> None:
    assert number_word("forty-two") == "42" and number_word("dozen") == "12"
    assert number_word("fortytwo") == "fortytwo"
    assert content_words("The cats are running") == {"cat", "run"}
    assert gold_alternatives("Yes") == [{stem("yes")}]  # stop words only: all of them needed
    assert judge("q", "Yes, you did.", "Yes") and not judge("q", "No.", "Yes")
    assert gold_alternatives("") == [] and judge("q", "anything", "") is False


# -- the oracle -------------------------------------------------------------------------
def question(qid: str = "q1", qtype: str = "single-session-user", **kw: Any) -> dict[str, Any]:
    q = {
        "question_id": qid,
        "question_type": qtype,
        "question": "What is my cat called?",
        "question_date": "2023/05/30 (Tue) 10:00",
        "answer": "Pixel",
        "haystack_session_ids": ["s1", "s2"],
        "haystack_dates": ["2023/05/01 (Mon) 09:00", "2023/05/02 (Tue) 09:00"],
        "haystack_sessions": [
            [{"role": "user", "content": "I like tea."},
             {"role": "assistant", "content": "Tea is nice."}],
            [{"role": "user", "content": "My cat is called Pixel.", "has_answer": True},
             {"role": "assistant", "content": "What a lovely name " + "x" * 400}],
        ],
        "answer_session_ids": ["s2"],
    }  # fmt: skip
    return q | kw


def test_oracle_holds_only_the_evidence_sessions_and_trims_to_its_budget() -> None:
    text, trimmed = lme.oracle_lines(question(), 5000)
    assert "Pixel" in text and "tea" not in text.lower() and not trimmed
    assert text.startswith("- (2 May 2023) You said: My cat is called Pixel.")
    short, trimmed = lme.oracle_lines(question(), 200)
    assert trimmed and "My cat is called Pixel." in short and len(short) <= 200


def test_import_lines_are_the_user_import_format() -> None:
    lines = lme.import_lines(question())
    assert set(lines[0]) == {"id", "role", "content", "timestamp", "conversation_id"}
    assert [x["conversation_id"] for x in lines] == ["q1:s1"] * 2 + ["q1:s2"] * 2
    assert lines[1]["timestamp"] == "2023-05-01T09:00:01+00:00"  # ordered within a session
    assert lme.asked_at(question()) == "2023-05-30T10:00:00+00:00"


# -- end to end -------------------------------------------------------------------------
def _setup(tmp: Path) -> tuple[Path, Path]:
    qs = [
        question("q1"),
        question("q2_abs", question="What is my dog called?", answer="not mentioned"),
        question("q3", "single-session-preference", question="Suggest a film.",
                 answer="The user would prefer films about cats."),
    ]  # fmt: skip
    data = tmp / "lme.json"
    data.write_text(json.dumps(qs), encoding="utf-8")
    work = tmp / "work"
    for q in qs:  # homes built ahead, keyword only (the import is `memagent import`'s)
        home = MemoryHome.open(work / q["question_id"])
        init_home(home)
        cfg = home.layout.config
        cfg.write_text(cfg.read_text().replace("enabled = true", "enabled = false"))
        store = ChunkStore(MemoryHome.open(home.root), embeddings=False)
        store.create_many([ChunkDraft(content=x["content"], created_at=x["timestamp"],
                                      conversation_id=x["conversation_id"])
                           for x in lme.import_lines(q)])  # fmt: skip
        store.close()
    return data, work


def _script(tmp: Path, name: str, n: int) -> str:
    path = tmp / name
    replies = [json.dumps({"reply": "Pixel"})] * n
    path.write_text(json.dumps({"replies": replies, "verdicts": ["yes"] * n}), encoding="utf-8")
    return f"scripted:{path}"


def test_run_reports_per_type_with_preference_apart_and_reruns_from_cache(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, work = _setup(tmp_path)
    common = ["--data", str(data), "--workdir", str(work), "--cache", str(tmp_path / "c.jsonl")]
    assert lme.main([*common, "--model", _script(tmp_path, "a.json", 30)]) == 0
    first = capsys.readouterr()
    rows = [x for x in first.out.splitlines() if x.startswith("| ")]
    assert rows[0].startswith("| arm |") and "single-session-preference" in rows[0]
    by_arm = {r.split("|")[1].strip(): r for r in rows[1:]}
    assert set(by_arm) == {"memory", "floor", "oracle"}
    # "Pixel" for all three: right for q1, wrong for q2_abs (no refusal); the preference
    # question stays out of overall (n=2)
    assert "0.5 [" in by_arm["oracle"] and "(n=2)" in by_arm["oracle"] and "†" in by_arm["oracle"]
    batch = (work / "q1.batch.jsonl").read_text()
    assert '"asked_at": "2023-05-30T10:00:00+00:00"' in batch
    # again with no replies left: every answer comes from the cache
    assert lme.main([*common, "--model", _script(tmp_path, "b.json", 0)]) == 0
    second = capsys.readouterr().out
    assert next(x for x in second.splitlines() if x.startswith("| ")) == rows[0]
    calls = re.search(r"(\d+) model calls, (\d+) from the cache", second)
    assert calls and calls[1] == calls[2] and int(calls[1]) >= 6  # every call a hit


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--limit", "0"], "--limit 0: must be at least 1"),
        (["--oracle-chars", "10"], "--oracle-chars 10"),
        (["--arms"], "--arms: give at least one"),
    ],
)
def test_malformed_arguments_give_one_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    data, _ = _setup(tmp_path)
    cache = tmp_path / "c.jsonl"
    rc = lme.main(["--data", str(data), "--cache", str(cache), *argv])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and err == f"error: {err[7:]}" and message in err and "\n" not in err
    assert not cache.exists()


@pytest.mark.parametrize(
    "content", ["", "{not json", json.dumps({"a": 1}), json.dumps([{"question_id": "x"}])]
)
def test_malformed_data_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str
) -> None:
    path = tmp_path / "d.json"
    path.write_text(content, encoding="utf-8")
    assert lme.main(["--data", str(path), "--cache", str(tmp_path / "c.jsonl")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err
    assert lme.main(["--data", str(tmp_path / "missing.json")]) == 2
    assert "cannot read" in capsys.readouterr().err
