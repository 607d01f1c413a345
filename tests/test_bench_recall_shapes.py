"""bench.recall_shapes: the session-gap check, the ablation variants and the
bootstrap interval behave as their docstrings say (no embeddings needed)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from bench.recall_shapes import Variant, bootstrap, boundary_f1, messages_of
from bench.shapes import write_import

CONV = {
    "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": [
        {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a cat."},
        {"speaker": "Ben", "dia_id": "D1:2", "text": "Nice!"},
    ],
    "session_2_date_time": "2:30 pm on 8 May, 2023",
    "session_2": [{"speaker": "Ben", "dia_id": "D2:1", "text": "How is the cat?"}],
    "session_3_date_time": "9:00 am on 20 May, 2023",
    "session_3": [{"speaker": "Ana", "dia_id": "D3:1", "text": "Fine."}],
}


def test_boundary_f1_scores_the_gap_split_against_the_sessions() -> None:
    assert boundary_f1(CONV, timedelta(minutes=30)) == 1.0  # 34 min and 12 days apart
    assert boundary_f1(CONV, timedelta(hours=1)) == 2 * 1 / (2 + 1)  # the 34-minute one missed


def test_variants_turn_inference_off(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    write_import(CONV, path, "minimal")
    every = messages_of(path, Variant())
    assert [m.speaker for m in every] == ["Ana", "Ben", "Ben", "Ana"]
    assert len({m.session_id for m in every}) == 3
    sessions_only = messages_of(path, Variant(infer="session"))
    assert {m.speaker for m in sessions_only} == {None}
    assert len({m.session_id for m in sessions_only}) == 3
    speakers_only = messages_of(path, Variant(infer="speaker"))
    assert {m.session_id for m in speakers_only} == {None} and speakers_only[0].speaker == "Ana"
    merged = messages_of(path, Variant(gap_minutes=24 * 60))
    assert len({m.session_id for m in merged}) == 2
    assert Variant().tag == "" and Variant(infer="none").tag == "-none-default"


def test_bootstrap_interval_holds_the_mean() -> None:
    lo, hi = bootstrap([0.0, 1.0] * 50)
    assert lo < 0.5 < hi and hi - lo < 0.3
    assert bootstrap([1.0] * 10) == (1.0, 1.0)
