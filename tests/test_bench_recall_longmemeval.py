"""The LongMemEval bench's pieces: metrics, question order, times, the
embedding cache (bench.recall_longmemeval, bench.embcache)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from bench.embcache import CachedEmbedder, fill, text_key
from bench.recall_longmemeval import Turn, lme_time, score, stratified, turns_of

from fakes import BagOfWords


def _turns() -> dict[str, Turn]:
    out = {}
    for s, n in (("s1", 3), ("s2", 3), ("s3", 3)):
        for i in range(n):
            tid = f"{s}:{i}"
            out[tid] = Turn(tid, s, "user", f"text {tid}", "2023-05-01T00:00:00+00:00",
                            evidence=tid in ("s1:1", "s3:2"))  # fmt: skip
    return out


def test_session_and_turn_metrics() -> None:
    turns = _turns()
    gold = {"s1", "s3"}
    ranked = ["s1:0", "s1:1", "s1:2", "s2:0", "s2:1", "s3:2", "s2:2", "s3:0", "s3:1", "s2:2"]
    got = score(ranked, turns, gold)
    assert got["any@5"] == 1.0 and got["all@5"] == 0.0  # s3 first appears at rank 6
    assert got["all@10"] == 1.0
    assert got["s.all@5"] == 1.0  # the paper's metric: 5 distinct sessions reach s3
    assert got["turn@5"] == 0.5 and got["turn@10"] == 1.0 and got["t.all@10"] == 1.0
    ideal = 1 + 1 / np.log2(3)
    assert got["ndcg@10"] == pytest.approx((1 / np.log2(3) + 1 / np.log2(7)) / ideal)


def test_unknown_ids_take_a_slot_but_no_session() -> None:
    turns = _turns()
    got = score(["None", "s1:1"], turns, {"s1"})
    assert got["any@5"] == 1.0 and got["turn@5"] == 0.5


def test_no_evidence_turns_means_no_turn_metrics() -> None:
    turns = {t: Turn(x.tid, x.session, x.role, x.content, x.created_at, False)
             for t, x in _turns().items()}  # fmt: skip
    got = score(["s1:0"], turns, {"s1"})
    assert "turn@10" not in got and "ndcg@10" not in got and got["all@5"] == 1.0


def test_stratified_order_covers_every_type_first() -> None:
    qs = [{"question_type": t, "i": i} for i, t in enumerate("aaabbc")]
    order = stratified(qs)
    assert [q["question_type"] for q in order[:3]] == ["a", "b", "c"]
    assert sorted(q["i"] for q in order) == list(range(6))


def test_times_and_turns() -> None:
    assert lme_time("2023/05/20 (Sat) 02:21").isoformat() == "2023-05-20T02:21:00+00:00"
    q = {
        "haystack_session_ids": ["x", "y"],
        "haystack_dates": ["2023/05/20 (Sat) 02:21", "2023/05/21 (Sun) 10:00"],
        "haystack_sessions": [
            [{"role": "user", "content": "hi", "has_answer": True}, {"role": "assistant"}],
            [{"role": "assistant", "content": "  "}, {"role": "user", "content": "yo"}],
        ],
    }
    got = turns_of(q)
    assert [(t.tid, t.session, t.evidence) for t in got] == [
        ("0:0", "x", True),
        ("1:1", "y", False),
    ]
    assert got[1].created_at == "2023-05-21T10:00:01+00:00"


def test_cache_embeds_each_text_once_across_runs(tmp_path: Path) -> None:
    base = BagOfWords(dim=4)
    first = CachedEmbedder(base, tmp_path, "t-")
    fill(first, ["a", "bb", "a"], batch=1)
    assert base.texts == ["a", "bb"]
    again = CachedEmbedder(base, tmp_path, "t-")  # a new run reads the files
    vecs = again.embed(["bb", "a", "ccc"])
    assert base.texts == ["a", "bb", "ccc"]
    assert np.array_equal(vecs, base.vectors(["bb", "a", "ccc"]))  # in the order asked
    assert again.save() is not None and again.save() is None  # nothing new the second time
    assert len(CachedEmbedder(base, tmp_path, "t-").vectors) == 3
    assert CachedEmbedder(base, tmp_path, "other-").vectors == {}
    assert again.embed([]).shape == (0, 4)
    assert text_key("a") != text_key("a ")


def test_cross_validation_picks_on_other_folds() -> None:
    from bench.recall_longmemeval import cross_validate, in_order

    # Config "good" wins on every fold but the last, where only "bad" scores.
    def row(v: float) -> dict[str, float]:
        return {"all@5": v, "turn@10": v, "any@5": v, "ndcg@10": v}

    per_q = {
        "default": [row(0.5)] * 10,
        "good": [row(1.0)] * 8 + [row(0.0)] * 2,
    }
    splits = cross_validate(per_q, "default", folds=5)
    assert len(splits) == 5
    assert all(s["picked"] == "good" for s in splits)  # 0.75+ on every 8-question train
    assert splits[0]["test"]["all@5"] == 1.0 and splits[0]["default"]["all@5"] == 0.5
    # Ties go to the default.
    tie = cross_validate({"default": [row(1.0)] * 4, "other": [row(1.0)] * 4}, "default", 2)
    assert {s["picked"] for s in tie} == {"default"}
    qs = [{"question_type": t} for t in "aba"]
    assert in_order({"a": [row(1), row(3)], "b": [row(2)]}, qs) == [row(1), row(2), row(3)]


def test_expansions_are_made_once_and_cached(tmp_path: Path) -> None:
    import json

    from bench.recall_longmemeval import expansions

    qs = [
        {"question_id": "a", "question": "How many art events did I attend?"},
        {"question_id": "b", "question": "Where do I work?"},
    ]
    script = tmp_path / "s.json"
    script.write_text(json.dumps(["gallery, museum", "office, job"]), encoding="utf-8")
    cache = tmp_path / "exp.json"
    got = expansions(qs, f"scripted:{script}", cache, quiet=True)
    assert got["a"].terms == ["gallery", "museum"] and got["b"].terms == ["office", "job"]
    assert got["a"].expanded == "How many art events did I attend? gallery, museum"
    # A second run reads the file: an empty script would fail if asked.
    script.write_text("[]", encoding="utf-8")
    again = expansions(qs, f"scripted:{script}", cache, quiet=True)
    assert {k: v.terms for k, v in again.items()} == {k: v.terms for k, v in got.items()}
    # Another model is another key: it is asked (and this one has nothing to say).
    from memagent.llm import LLMError

    other = tmp_path / "other.json"
    other.write_text("[]", encoding="utf-8")
    with pytest.raises(LLMError):
        expansions(qs[:1], f"scripted:{other}", cache, quiet=True)
