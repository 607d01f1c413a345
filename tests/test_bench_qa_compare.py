"""bench.qa_compare: two runs paired by question, each figure's difference with a
paired bootstrap interval, and a one-line error for a file that is not a run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from bench import qa_compare
from bench.qa_compare import Answer, compare

WEIGHTS = {1: 0.5, 5: 0.5}


def _run(path: Path, rows: list[tuple[str, int, str, float]]) -> Path:
    outcomes: list[dict[str, Any]] = [
        {"conv": "conv-1", "qid": qid, "category": cat, "answer": ans, "score": score}
        for qid, cat, ans, score in rows
    ]
    path.write_text(json.dumps({"memagent defaults": outcomes}), encoding="utf-8")
    return path


def test_a_change_on_every_question_has_an_interval_away_from_zero() -> None:
    base = [Answer(1, 0.2, False) for _ in range(40)] + [Answer(5, 0.0, False)] * 10
    new = [Answer(1, 0.6, False) for _ in range(40)] + [Answer(5, 1.0, True)] * 10
    got = compare(list(zip(base, new, strict=True)), WEIGHTS)
    d = got["F1 cats 1-4"][2]
    assert d.value == pytest.approx(0.4) and d.low == pytest.approx(0.4)
    refusal = got["adversarial refusal"]
    assert refusal[0].value == 0.0 and refusal[1].value == 1.0 and refusal[2].low == 1.0
    assert got["overall (paper)"][2].value == pytest.approx(100 * (0.5 * 0.4 + 0.5 * 1.0))


def test_no_change_gives_a_difference_of_zero() -> None:
    same = [Answer(1 if x % 2 else 5, x / 30, x % 3 == 0) for x in range(30)]
    got = compare(list(zip(same, same, strict=True)), WEIGHTS)
    for _, _, d in got.values():
        assert d.value == 0 and d.low == 0 and d.high == 0


def test_runs_are_paired_by_question_and_refusals_read_from_the_answer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = _run(tmp_path / "a.json", [("q1", 1, "Paris", 1.0), ("q2", 5, "Rome", 0.0),
                                   ("q3", 1, "x", 0.0)])  # fmt: skip
    b = _run(tmp_path / "b.json", [("q2", 5, "I don't have that in memory.", 1.0),
                                   ("q1", 1, "Paris", 1.0)])  # fmt: skip
    assert qa_compare.answers(b)[("conv-1", "q2")].refused
    assert qa_compare.main([str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "2 questions in both runs (3 in base, 2 in new)" in out
    assert "| adversarial refusal | 0.0 [0.0–0.0] | 1.0 [1.0–1.0] | 1.0 [1.0–1.0] |" in out


@pytest.mark.parametrize("text", ["[]", "{}", "not json", '{"arm": [{"conv": "c"}]}'])
def test_a_file_that_is_not_a_run_is_a_one_line_error(
    tmp_path: Path, text: str, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(text, encoding="utf-8")
    good = _run(tmp_path / "good.json", [("q1", 1, "Paris", 1.0)])
    assert qa_compare.main([str(bad), str(good)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and err.count("\n") == 1


def test_runs_with_no_question_in_common_are_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = _run(tmp_path / "a.json", [("q1", 1, "Paris", 1.0)])
    b = _run(tmp_path / "b.json", [("q9", 1, "Paris", 1.0)])
    assert qa_compare.main([str(a), str(b)]) == 2
    assert "share no question" in capsys.readouterr().err


def test_cost_per_question_is_compared_when_both_runs_count_it() -> None:
    base = [Answer(1, 0.5, False, calls=3, evaluated=900, generated=15) for _ in range(20)]
    new = [Answer(1, 0.5, False, calls=3, evaluated=600, generated=15) for _ in range(20)]
    got = compare(list(zip(base, new, strict=True)), WEIGHTS)
    assert got["prompt tokens evaluated/question"][2].value == pytest.approx(-300)
    assert got["model calls/question"][2].value == 0
    assert got["generated tokens/question"][1].value == 15
    old = [Answer(1, 0.5, False) for _ in range(20)]  # a file from before the counts
    assert "model calls/question" not in compare(list(zip(old, new, strict=True)), WEIGHTS)
