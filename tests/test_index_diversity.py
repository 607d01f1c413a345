"""Diversity in the top k (memagent.index.diversity) and its use in search."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from memagent.index import Doc, Index, SearchParams, search
from memagent.index.diversity import diversify


def unit(*xs: float) -> np.ndarray:
    v = np.array(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_off_by_default_is_plain_ranking() -> None:
    score = {1: 0.9, 2: 0.8, 3: 0.7, 4: 0.1}
    conv = {1: "a", 2: "a", 3: "a", 4: "b"}
    assert [p.key for p in diversify([1, 2, 3, 4], score, conv, 3)] == [1, 2, 3]


def test_conversation_decay_brings_in_another_conversation() -> None:
    score = {1: 1.0, 2: 0.9, 3: 0.8, 4: 0.6}
    conv = {1: "a", 2: "a", 3: "a", 4: "b"}
    picks = diversify([1, 2, 3, 4], score, conv, 3, decay=0.5)
    assert [p.key for p in picks] == [1, 4, 2]
    assert [p.same_conversation for p in picks] == [0, 0, 1]


def test_free_picks_per_conversation_come_before_the_decay() -> None:
    score = {1: 1.0, 2: 0.9, 3: 0.8, 4: 0.6}
    conv = {1: "a", 2: "a", 3: "a", 4: "b"}
    # One repeat free: the third from "a" is halved (0.4) and "b" (0.6) goes first.
    picks = diversify([1, 2, 3, 4], score, conv, 4, decay=0.5, free=1)
    assert [p.key for p in picks] == [1, 2, 4, 3]
    # Two repeats free: "a" keeps three undecayed hits.
    picks = diversify([1, 2, 3, 4], score, conv, 4, decay=0.5, free=2)
    assert [p.key for p in picks] == [1, 2, 3, 4]


def test_documents_without_a_conversation_are_never_decayed() -> None:
    score = {1: 1.0, 2: 0.9, 3: 0.5}
    conv: dict[int, str | None] = {1: None, 2: None, 3: "b"}
    assert [p.key for p in diversify([1, 2, 3], score, conv, 2, decay=0.1)] == [1, 2]


def test_mmr_holds_back_a_near_duplicate() -> None:
    score = {1: 1.0, 2: 0.95, 3: 0.7}
    conv: dict[int, str | None] = {1: None, 2: None, 3: None}
    vecs = {1: unit(1, 0, 0), 2: unit(1, 0.05, 0), 3: unit(0, 1, 0)}
    plain = diversify([1, 2, 3], score, conv, 2, mmr_weight=0.5)  # no vectors: no MMR
    assert [p.key for p in plain] == [1, 2]
    picks = diversify([1, 2, 3], score, conv, 2, mmr_weight=0.5, vectors=vecs)
    assert [p.key for p in picks] == [1, 3]
    assert picks[1].max_similarity < 0.01


def test_mmr_ignores_candidates_without_a_vector() -> None:
    score = {1: 1.0, 2: 0.9, 3: 0.8}
    conv: dict[int, str | None] = {1: None, 2: None, 3: None}
    vecs = {1: unit(1, 0), 3: unit(1, 0)}
    picks = diversify([1, 2, 3], score, conv, 3, mmr_weight=1.0, vectors=vecs)
    assert [p.key for p in picks] == [1, 2, 3]


def test_edge_cases() -> None:
    assert diversify([], {}, {}, 5) == []
    assert diversify([1], {1: 1.0}, {1: "a"}, 0) == []
    # Unknown keys are skipped; k beyond the pool returns the pool.
    got = diversify([1, 9, 2], {1: 0.0, 2: -1.0}, {}, 10, decay=0.5)
    assert [p.key for p in got] == [1, 2]


def test_search_spreads_the_top_over_conversations(tmp_path: Path) -> None:
    idx = Index(tmp_path / "index.sqlite")
    docs = [
        Doc(f"a{i}", "chunk", f"chunks/a{i}.json", f"coffee mug price talk {i}",
            created=float(i), conversation_id="a")
        for i in range(4)
    ]  # fmt: skip
    docs.append(Doc("b0", "chunk", "chunks/b0.json", "the coffee mug", created=9.0,
                    conversation_id="b"))  # fmt: skip
    idx.upsert(docs)
    q = "coffee mug price"
    plain = search(idx, q, k=3, params=SearchParams(neighbour_weight=0.0, session_decay=1.0))
    assert {h.row.conversation_id for h in plain} == {"a"}
    spread = search(
        idx, q, k=3, params=SearchParams(neighbour_weight=0.0, session_decay=0.5, session_free=0)
    )
    assert {h.row.conversation_id for h in spread} == {"a", "b"}
    later = [h for h in spread if "diversity" in h.why]
    assert later and all(h.why["diversity"]["same_conversation"] >= 1 for h in later)
    with pytest.raises(ValidationError):
        SearchParams(session_decay=1.5)
    with pytest.raises(ValidationError):
        SearchParams(mmr_weight=-1)


def test_head_takes_one_pick_per_conversation_first() -> None:
    score = {1: 1.0, 2: 0.95, 3: 0.9, 4: 0.5, 5: 0.4, 6: 0.3}
    conv: dict[int, str | None] = {1: "a", 2: "a", 3: "a", 4: "b", 5: "b", 6: "c"}
    assert [p.key for p in diversify(list(score), score, conv, 6)] == [1, 2, 3, 4, 5, 6]
    picks = diversify(list(score), score, conv, 6, head=3)
    # The head: the best of a, of b, of c; then the rest by score.
    assert [p.key for p in picks] == [1, 4, 6, 2, 3, 5]
    assert [p.same_conversation for p in picks[:3]] == [0, 0, 0]


def test_head_longer_than_the_conversations_falls_back_to_score() -> None:
    score = {1: 1.0, 2: 0.9, 3: 0.2}
    conv: dict[int, str | None] = {1: "a", 2: "a", 3: "b"}
    assert [p.key for p in diversify([1, 2, 3], score, conv, 3, head=10)] == [1, 3, 2]
    # Documents without a conversation are always fresh.
    conv_none: dict[int, str | None] = {1: "a", 2: "a", 3: None}
    assert [p.key for p in diversify([1, 2, 3], score, conv_none, 2, head=2)] == [1, 3]


def test_search_head_only_for_questions_that_need_several(tmp_path: Path) -> None:
    idx = Index(tmp_path / "index.sqlite")
    docs = [
        Doc(f"a{i}", "chunk", f"chunks/a{i}.json", f"charity run raised money {i}",
            created=float(i), conversation_id="a")
        for i in range(4)
    ]  # fmt: skip
    docs.append(Doc("b0", "chunk", "chunks/b0.json", "a bake sale for charity", created=9.0,
                    conversation_id="b"))  # fmt: skip
    idx.upsert(docs)
    p = SearchParams(neighbour_weight=0.0, session_decay=1.0, mmr_weight=0.0)
    single = search(idx, "charity run raised money", k=2, params=p)
    assert {h.row.conversation_id for h in single} == {"a"}
    many = search(idx, "how much money did I raise for charity in total", k=2, params=p)
    assert {h.row.conversation_id for h in many} == {"a", "b"}
    off = p.model_copy(update={"session_head": 0})
    assert {h.row.conversation_id for h in search(idx, "how much charity money in total", k=2,
                                                  params=off)} == {"a"}  # fmt: skip
    always = p.model_copy(update={"session_head_always": True})
    assert {h.row.conversation_id for h in search(idx, "charity run raised money", k=2,
                                                  params=always)} == {"a", "b"}  # fmt: skip
    with pytest.raises(ValidationError):
        SearchParams(session_head=-1)
