"""The index: FTS5 + vectors, hybrid ranking, filters, hostile queries, cache."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fakes import BagOfWords
from memagent.core import CorruptFile, InvalidInput
from memagent.index import Doc, ExactVectors, Filters, Index, SearchParams, query_terms, search


def _doc(i: int, content: str, **kw: object) -> Doc:
    return Doc(doc_id=f"d{i}", kind="chunk", path=f"chunks/x/d{i}.json", content=content, **kw)  # type: ignore[arg-type]


@pytest.fixture
def index(tmp_path: Path) -> Index:
    idx = Index(tmp_path / "index.sqlite")
    idx.upsert(
        [
            _doc(1, "We decided to use Postgres for billing", tags=["db"], created=100.0),
            _doc(
                2, "Maria prefers tea in the morning", tags=["food"], created=200.0, speaker="Maria"
            ),
            _doc(3, "The billing service had an outage in March", created=300.0, user_id="u"),
        ]
    )
    return idx


def test_keyword_search_ranks_and_explains(index: Index) -> None:
    hits = search(index, "billing outage", keyword_only_reason="test")
    assert [h.row.doc_id for h in hits][:2] == ["d3", "d1"]
    assert hits[0].why["keyword"]["rank"] == 1
    assert hits[0].why["mode"] == "keyword-only (test)"
    assert "dense" not in hits[0].why


def test_question_words_do_not_block_matches(index: Index) -> None:
    # FTS5 would AND every word; the rewritten query ORs content words only.
    hits = search(index, "What does Maria drink in the morning?")
    assert hits[0].row.doc_id == "d2"
    assert query_terms("What did Maria's team decide?") == ["maria", "team", "decide"]


def test_filters_apply(index: Index) -> None:
    assert [h.row.doc_id for h in search(index, "billing", filters=Filters(tags=["db"]))] == ["d1"]
    assert [h.row.doc_id for h in search(index, "billing", filters=Filters(user_id="u"))] == ["d3"]
    assert [h.row.doc_id for h in search(index, "billing", filters=Filters(since=250.0))] == ["d3"]
    assert search(index, "billing", filters=Filters(kinds=["note"])) == []


def test_remove_and_replace(index: Index) -> None:
    index.remove_docs(["d3"])
    assert [h.row.doc_id for h in search(index, "outage")] == []
    index.upsert([_doc(1, "We decided to use SQLite for billing")])
    assert [h.row.doc_id for h in search(index, "sqlite")] == ["d1"]
    assert search(index, "postgres") == []
    assert index.count() == 2


@pytest.mark.parametrize(
    "query",
    [
        '"',
        "NEAR(a b)",
        "a AND OR NOT",
        "*",
        "col:val",
        "-x",
        "^start",
        "(((",
        "a\x00b",
        "🙂 emoji",
        "DROP TABLE docs;--",
    ],
)
def test_hostile_queries_never_crash(index: Index, query: str) -> None:
    hits = search(index, query)
    assert isinstance(hits, list)
    assert index.count() == 3


@pytest.mark.parametrize("query", ["", "   ", "x" * 5000])
def test_bad_queries_are_invalid_input(index: Index, query: str) -> None:
    with pytest.raises(InvalidInput):
        search(index, query)


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=200))
def test_any_text_query_is_safe(tmp_path_factory: pytest.TempPathFactory, text: str) -> None:
    idx = Index(tmp_path_factory.mktemp("h") / "i.sqlite")
    idx.upsert([_doc(1, "hello world")])
    if text.strip():
        assert isinstance(search(idx, text), list)


def test_hybrid_uses_vectors_and_says_so(tmp_path: Path) -> None:
    idx = Index(tmp_path / "i.sqlite", BagOfWords())
    idx.upsert([_doc(1, "red apple pie"), _doc(2, "blue sky above"), _doc(3, "green grass")])
    hits = search(idx, "blue sky")
    assert hits[0].row.doc_id == "d2"
    assert hits[0].why["mode"] == "hybrid"
    assert hits[0].why["dense"]["rank"] == 1 and hits[0].why["keyword"]["rank"] == 1


def test_vector_cache_follows_other_connections(tmp_path: Path) -> None:
    emb = BagOfWords()
    a = Index(tmp_path / "i.sqlite", emb)
    b = Index(tmp_path / "i.sqlite", emb)
    a.upsert([_doc(1, "alpha beta")])
    assert len(b.vectors) == 1
    a.upsert([_doc(2, "gamma delta")])
    assert len(b.vectors) == 2
    a.remove_docs(["d1"])
    assert len(b.vectors) == 1
    assert [h.row.doc_id for h in search(b, "gamma")] == ["d2"]


def test_exact_vectors_with_allowed_set(tmp_path: Path) -> None:
    idx = Index(tmp_path / "i.sqlite")
    vs = ExactVectors(idx.conn, 4)
    with idx.conn:
        vs.upsert([1, 2, 3], np.eye(3, 4, dtype=np.float32))
    q = np.array([1, 0, 0, 0], dtype=np.float32)
    assert vs.search(q, 1)[0][0] == 1
    assert vs.search(q, 1, np.array([2, 3]))[0][0] in (2, 3)
    assert vs.search(q, 5, np.array([], dtype=np.int64)) == []


def test_neighbour_and_speaker_boosts(tmp_path: Path) -> None:
    idx = Index(tmp_path / "i.sqlite")
    idx.upsert(
        [
            _doc(
                1,
                "Ann: where did you go hiking last weekend?",
                conversation_id="c",
                created=1.0,
                speaker="Ann",
            ),
            _doc(
                2, "Bob: up the old mountain trail", conversation_id="c", created=2.0, speaker="Bob"
            ),
            _doc(3, "Bob: nothing much", conversation_id="c", created=3.0, speaker="Bob"),
        ]
    )
    p = SearchParams(neighbour_weight=0.5)
    hits = {h.row.doc_id: h for h in search(idx, "Where did Bob go hiking?", params=p)}
    assert "neighbour" in hits["d2"].why["boosts"]
    p = SearchParams(speaker_boost=1.0)
    hits = {h.row.doc_id: h for h in search(idx, "Where did Bob go hiking?", params=p)}
    assert hits["d2"].why["boosts"]["speaker"] == 1.0


def test_quantity_question_favours_memories_stating_one(tmp_path: Path) -> None:
    idx = Index(tmp_path / "i.sqlite")
    idx.upsert(
        [
            _doc(1, "I love my aquarium fish, they are so calm", created=1.0),
            _doc(2, "My aquarium has 10 neon tetras", created=2.0),
        ]
    )
    quiet = SearchParams(quantity_boost=0.0)
    base = {h.row.doc_id: h for h in search(idx, "How many fish in my aquarium?", params=quiet)}
    assert all("quantity" not in h.why.get("boosts", {}) for h in base.values())
    hits = {h.row.doc_id: h for h in search(idx, "How many fish in my aquarium?")}
    assert hits["d2"].why["boosts"]["quantity"] == SearchParams().quantity_boost
    assert hits["d2"].score == pytest.approx(base["d2"].score * 1.5)
    assert "quantity" not in hits["d1"].why.get("boosts", {})
    # not a quantity question, or a span of time (answered from when it was said)
    for query in ("Which fish are in my aquarium?", "How many days ago did I set up the aquarium?"):
        assert all("quantity" not in h.why.get("boosts", {}) for h in search(idx, query))


def test_quantity_reads_only_what_could_reach_the_ranked_window() -> None:
    from types import SimpleNamespace

    from memagent.index import QueryFacts
    from memagent.index.signals import Quantity, Scored

    rows = {r: SimpleNamespace(content="I have 7 cats") for r in (1, 2, 3, 4)}
    facts = QueryFacts.read("How many cats do I have?")
    # 4 was ranked down by another signal (not a fact): never lifted
    scored = Scored({1: 10.0, 2: 5.0, 3: 1.0, 4: 9.0}, rows, window=3, lowered={4})  # type: ignore[arg-type]
    Quantity(quantity_boost=0.5).rescore(scored, facts)
    # 2 (5 → 7.5) can keep its place in the best three; 3 (1 → 1.5) never reaches 5
    assert scored.score == {1: 15.0, 2: 7.5, 3: 1.0, 4: 9.0}
    assert [b.name for b in scored.boosts[2]] == ["quantity"] and {3, 4}.isdisjoint(scored.boosts)
    scored.window = 10  # fewer than the window: all read
    Quantity(quantity_boost=0.5).rescore(scored, facts)
    assert scored.score[3] == 1.5


def test_recency_boost_prefers_new(tmp_path: Path) -> None:
    idx = Index(tmp_path / "i.sqlite")
    idx.upsert(
        [_doc(1, "coffee beans", created=0.0), _doc(2, "coffee beans", created=86400.0 * 100)]
    )
    plain = search(idx, "coffee", now=86400.0 * 100)
    boosted = search(idx, "coffee", params=SearchParams(recency_weight=1.0), now=86400.0 * 100)
    assert boosted[0].row.doc_id == "d2"
    assert boosted[0].score > plain[0].score


def test_corrupt_index_file_is_reported(tmp_path: Path) -> None:
    bad = tmp_path / "index.sqlite"
    bad.write_bytes(b"this is not a database" * 100)
    with pytest.raises(CorruptFile):
        Index(bad)


def test_clear_invalidates_other_connections_cache(tmp_path: Path) -> None:
    emb = BagOfWords()
    a = Index(tmp_path / "i.sqlite", emb)
    b = Index(tmp_path / "i.sqlite", emb)
    a.upsert([_doc(1, "alpha"), _doc(2, "beta")])
    assert len(b.vectors) == 2
    a.clear()
    assert len(b.vectors) == 0
    a.upsert([_doc(3, "gamma")])
    assert [h.row.doc_id for h in search(b, "gamma")] == ["d3"]


def test_documents_written_keyword_only_get_vectors_later(tmp_path: Path) -> None:
    Index(tmp_path / "i.sqlite").upsert([_doc(1, "written without a model")])
    with_model = Index(tmp_path / "i.sqlite", BagOfWords())
    assert len(with_model.vectors) == 1
    assert search(with_model, "model")[0].why["mode"] == "hybrid"


def test_neighbours_follow_time_then_insertion_order(tmp_path: Path) -> None:
    from memagent.index.candidates import neighbours

    idx = Index(tmp_path / "i.sqlite")
    rowids = idx.upsert(
        [_doc(k, "x", created=1.0 if k < 3 else 2.0, conversation_id="c") for k in range(5)]
        + [_doc(9, "x", created=1.5, conversation_id="other")]
    )
    got = neighbours(idx, rowids)
    r = rowids
    assert got[r[0]] == [r[1]] and got[r[2]] == [r[1], r[3]] and got[r[4]] == [r[3]]
    assert got[r[5]] == []


def test_repeated_query_is_embedded_once(tmp_path: Path) -> None:
    emb = BagOfWords()
    idx = Index(tmp_path / "i.sqlite", emb)  # type: ignore[arg-type]
    idx.upsert([_doc(1, "the billing outage in March"), _doc(2, "tea in the morning")])
    first = search(idx, "billing outage", k=2)
    queries = [c for c in emb.calls if c == ["billing outage"]]
    assert len(queries) == 1
    again = search(idx, "billing outage", k=2)
    assert [c for c in emb.calls if c == ["billing outage"]] == queries  # no second embed
    assert [h.to_json() for h in again] == [h.to_json() for h in first]
    assert first[0].why["mode"] == "hybrid"


def test_query_vector_cache_is_bounded_and_read_only(tmp_path: Path, monkeypatch) -> None:
    import memagent.index.sqlite as sqlite_module

    monkeypatch.setattr(sqlite_module, "QUERY_CACHE_SIZE", 3)
    emb = BagOfWords()
    idx = Index(tmp_path / "i.sqlite", emb)  # type: ignore[arg-type]
    v = idx.query_vector("alpha")
    assert np.allclose(v, emb.embed(["alpha"])[0])
    with pytest.raises(ValueError):
        v[0] = 5.0  # a caller cannot corrupt the cached vector
    for q in ("beta", "gamma", "delta"):
        idx.query_vector(q)
    emb.calls.clear()
    idx.query_vector("delta")
    assert emb.calls == []  # still cached
    assert np.allclose(idx.query_vector_soon("alpha").result(), v)
    assert emb.calls == [["alpha"]]  # evicted (least recently used), embedded again
    assert len(idx._query_vectors) == 3


def test_query_vector_needs_a_model(tmp_path: Path) -> None:
    idx = Index(tmp_path / "i.sqlite")
    with pytest.raises(RuntimeError):
        idx.query_vector("anything")


class SlowEmbedder(BagOfWords):
    """Slow enough that the keyword side finishes while the query is embedded."""

    def embed(self, texts: list[str]) -> np.ndarray:
        if len(texts) == 1:
            import time

            time.sleep(0.05)
        return super().embed(texts)


def test_rows_read_during_embedding_change_nothing(tmp_path: Path) -> None:
    """Rows of keyword candidates read while the query embeds (the overlap) give
    the same hits as reading the fused pool afterwards; candidates outside the
    pool never leak into the result (a boosted one would otherwise win)."""
    import random

    rng = random.Random(4)
    idx = Index(tmp_path / "i.sqlite", SlowEmbedder())  # type: ignore[arg-type]
    vocab = [f"w{i}" for i in range(25)]
    idx.upsert(
        [
            _doc(
                i,
                " ".join(rng.choice(vocab) for _ in range(rng.randint(3, 9))),
                conversation_id=f"c{i % 4}",
                created=float(i),
                speaker=rng.choice(["Maria", "John", None]),
            )
            for i in range(150)
        ]
    )
    params = SearchParams(candidates=5)  # a pool far smaller than the keyword matches
    for _ in range(12):
        query = " ".join(rng.sample(vocab, 2)) + rng.choice([" maria", " john", ""])
        overlapped = search(idx, query, k=5, params=params)  # embeds: rows read meanwhile
        assert idx.query_vector_soon(query).done()  # now cached: no overlap on the rerun
        plain = search(idx, query, k=5, params=params)
        assert [h.to_json() for h in overlapped] == [h.to_json() for h in plain], query
        assert overlapped and overlapped[0].why["mode"] == "hybrid"


def test_keyword_candidate_outside_the_pool_does_not_leak(tmp_path: Path) -> None:
    # Query vector (fake embedder): the x3, alpha, maria. D1/D2 match only densely
    # ("the" is a stop word for BM25) and fill the pool of 2; K1 is the best keyword
    # match, read during the embedding, outside the pool. Were its row handed to
    # `finish`, Maria's speaker boost (x1.5: 0.77) would lift it over D2 (0.67).
    idx = Index(tmp_path / "i.sqlite", SlowEmbedder())  # type: ignore[arg-type]
    idx.upsert(
        [
            _doc(1, "the"),
            _doc(2, "the beta"),
            _doc(3, "alpha alpha", speaker="Maria"),
            _doc(4, "alpha beta gamma"),
        ]
    )
    params = SearchParams(candidates=2, dense_weight=2.0)
    hits = search(idx, "the the the alpha maria", k=2, params=params)
    assert [h.row.doc_id for h in hits] == ["d1", "d2"]


@pytest.mark.parametrize(
    "filters",
    [
        Filters(),  # soft-deleted rows sit on top: the over-fetch falls short
        Filters(kinds=["chunk"]),  # broad: answered from the over-fetched rows
        Filters(tags=["rare"]),  # selective: the whole allowed set is searched
        Filters(kinds=["note"], include_deleted=True),
    ],
    ids=["unfiltered", "broad", "selective", "deleted-included"],
)
def test_filtered_dense_search_is_exact(tmp_path: Path, filters: Filters) -> None:
    from memagent.index.candidates import dense_search as dense_of

    rng = np.random.default_rng(8)
    q = rng.standard_normal(384).astype(np.float32)
    q /= np.linalg.norm(q)
    vecs = rng.standard_normal((400, 384)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    top = set(np.argsort(-(vecs @ q))[:40].tolist())  # the 40 best rows overall ...
    docs = [
        Doc(
            doc_id=f"d{i}",
            kind="note" if i % 10 == 0 else "chunk",
            path=f"x/d{i}",
            content=f"doc {i}",
            tags=["rare"] if i % 17 == 0 else [],
            deleted=i in top,  # ... are soft-deleted
        )
        for i in range(400)
    ]
    idx = Index(tmp_path / "i.sqlite", BagOfWords())  # type: ignore[arg-type]
    rowids = idx.upsert(docs, vecs)
    ok = [
        i
        for i, d in enumerate(docs)
        if (filters.include_deleted or not d.deleted)
        and (not filters.kinds or d.kind in filters.kinds)
        and all(t in d.tags for t in filters.tags)
    ]
    sims = vecs[ok] @ q
    want = [rowids[ok[j]] for j in np.argsort(-sims)[:10]]
    got = dense_of(idx, q, filters, 10)
    assert [r for r, _ in got] == want


def test_sessions_of_one_conversation_count_apart_for_diversity(tmp_path: Path) -> None:
    """An import splits a conversation into sessions (`session_id`); the head of
    distinct conversations then spans its sessions, as it spans conversations."""

    def top2(sessions: list[str | None]) -> list[str]:
        idx = Index(tmp_path / f"i{len(list(tmp_path.iterdir()))}.sqlite")
        texts = ["kayak kayak kayak rental", "kayak kayak kayak paddle", "a kayak trip long ago"]
        idx.upsert(
            [
                _doc(i, t, conversation_id="c", session_id=s, created=float(i))
                for i, (t, s) in enumerate(zip(texts, sessions, strict=True))
            ]
        )
        params = SearchParams(session_head=2, session_head_always=True, mmr_weight=0.0)
        return [h.row.doc_id for h in search(idx, "kayak", k=2, params=params)]

    assert top2([None, None, None]) == ["d0", "d1"]
    assert top2(["s1", "s1", "s2"]) == ["d0", "d2"]
