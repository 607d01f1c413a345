"""One store test-suite, run against both backends: the local files + SQLite
index, and PostgreSQL + pgvector (started by the suite itself)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from memagent.api import Memory
from memagent.core import InvalidInput, MemoryHome, NotFound
from memagent.index import Filters
from memagent.memory.profile import apply_operations, history, parse_operation, undo

FOOD = "resource_user_food_prefs.json"


@pytest.fixture(scope="module")
def database(pg_url: str) -> Iterator[Any]:
    from memagent.postgres import Database

    db = Database.open(pg_url)
    yield db
    db.close()


@pytest.fixture(params=["local", "postgres"])
def memory(request: pytest.FixtureRequest, home: MemoryHome) -> Iterator[Memory]:
    if request.param == "local":
        mem = Memory(home, embeddings=False)
    else:
        db = request.getfixturevalue("database")
        mem = Memory(home, embeddings=False, db=db, user=f"u-{uuid.uuid4().hex[:12]}")
    yield mem
    mem.close()


def _append(item: str, path: str = "food.likes") -> Any:
    return parse_operation(
        {"operation": "append", "file": FOOD, "path": path, "value": {"item": item}}
    )


def test_chunk_crud_soft_delete_restore(memory: Memory) -> None:
    [chunk] = memory.remember("We decided to ship the parser on Friday.", tags=["release"])
    assert chunk.type == "decision"
    got = memory.chunks.get(chunk.id)
    assert got.content == chunk.content and got.metadata.access_count == 1
    updated = memory.chunks.update(chunk.id, content="We shipped the parser on Monday.", tags=["x"])
    assert updated.content.endswith("Monday.") and updated.tags == ["x"]
    memory.forget(chunk.id)
    assert memory.memories() == []
    assert [m["id"] for m in memory.memories(include_deleted=True)] == [chunk.id]
    assert memory.recall("parser Monday") == []
    memory.restore(chunk.id)
    assert [h.id for h in memory.recall("parser Monday")] == [chunk.id]
    memory.forget(chunk.id, hard=True)
    with pytest.raises(NotFound):
        memory.get(chunk.id)
    with pytest.raises(NotFound):
        memory.chunks.get("chunk-20240101-000000000000")
    with pytest.raises(InvalidInput):
        memory.chunks.get("../../etc/passwd")


def test_list_filters(memory: Memory) -> None:
    memory.chunks.create("alpha about tea", tags=["drink"], conversation_id="c1")
    memory.chunks.create("beta about coffee", tags=["drink", "hot"], conversation_id="c2")
    memory.chunks.create("gamma about bread", type="fact", created_at="2020-01-01T00:00:00Z")
    contents = lambda f: sorted(m["content"] for m in memory.chunks.list(f))  # noqa: E731
    assert contents(Filters(tags=["drink"])) == ["alpha about tea", "beta about coffee"]
    assert contents(Filters(tags=["drink", "hot"])) == ["beta about coffee"]
    assert contents(Filters(conversation_id="c1")) == ["alpha about tea"]
    assert contents(Filters(type="fact")) == ["gamma about bread"]
    assert contents(Filters(until=1_600_000_000)) == ["gamma about bread"]
    newest_first = [m["content"] for m in memory.chunks.list(None, limit=2)]
    assert len(newest_first) == 2 and "gamma about bread" not in newest_first


def test_search_ranks_and_rejects_bad_queries(memory: Memory) -> None:
    memory.remember("The deploy pipeline runs on Kubernetes in the Frankfurt region.")
    memory.remember("My sister's birthday is in March; she likes orchids.")
    memory.remember("Kubernetes upgrades happen every quarter.")
    hits = memory.recall("When is my sister's birthday?", k=3)
    assert hits and "sister" in hits[0].content
    assert "keyword" in hits[0].why and hits[0].why["mode"].startswith("keyword-only")
    hits = memory.recall("kubernetes", k=1)
    assert len(hits) == 1 and "Kubernetes" in hits[0].content
    assert memory.recall("zebra xylophone") == []
    for bad in ("", "   ", "x" * 5000):
        with pytest.raises(InvalidInput):
            memory.recall(bad)
    with pytest.raises(InvalidInput):
        memory.chunks.recall("ok", k=10_000)
    # Hostile text is just text: no SQL or FTS syntax gets through.
    memory.recall("'; DROP TABLE chunks; -- \" OR 1=1 NEAR(a b) *")
    assert memory.recall("kubernetes")


def test_links_manual_and_auto(memory: Memory) -> None:
    a = memory.chunks.create("first note about the garden", tags=["garden"])
    b = memory.chunks.create("second note about the garden", tags=["garden"])
    assert {(link.type, link.target) for link in b.links} >= {("follows", a.id)}
    memory.chunks.link(a.id, "supports", b.id)
    links = memory.chunks.links(b.id)
    assert {"type": "supports", "source": a.id} in links["incoming"]
    assert {"type": "follows", "target": a.id} in links["outgoing"]
    memory.chunks.link(a.id, "supports", b.id, remove=True)
    assert {"type": "supports", "source": a.id} not in memory.chunks.links(b.id)["incoming"]
    with pytest.raises(InvalidInput):
        memory.chunks.link(a.id, "follows", b.id)
    with pytest.raises(InvalidInput):
        memory.chunks.link(a.id, "supports", a.id)
    with pytest.raises(NotFound):
        memory.chunks.link(a.id, "supports", "chunk-20240101-000000000000")


def test_oversized_and_malformed_chunks_write_nothing(memory: Memory) -> None:
    big = "word " * (memory.home.config.limits.max_file_bytes // 4)
    with pytest.raises(InvalidInput):
        memory.chunks.create(big)
    with pytest.raises(InvalidInput):
        memory.chunks.create("ok", tags=["bad tag!"])
    with pytest.raises(InvalidInput):
        memory.remember("")
    assert memory.memories(include_deleted=True) == []


def test_profile_apply_dedupe_atomic_history_undo(memory: Memory) -> None:
    store = memory.profile
    assert FOOD in store.names()
    first = apply_operations(store, [_append("Green tea")])
    assert first.ok and first.outcomes[0].status == "applied"
    again = apply_operations(store, [_append("green-tea"), _append("GREEN TEA")])
    assert again.ok and {o.status for o in again.outcomes} == {"no_change"}
    likes = store.load(FOOD).items_at("food.likes") or []
    assert [i.item for i in likes] == ["green_tea"]
    # One bad operation: the whole batch is refused and nothing changes.
    bad = parse_operation(
        {"operation": "remove", "file": FOOD, "path": "food.likes", "value": {"item": "nope"}}
    )
    before = store.load(FOOD).metadata.version
    result = apply_operations(store, [_append("ramen"), bad])
    assert not result.ok and result.outcomes[0].status == "not_applied"
    assert store.load(FOOD).metadata.version == before
    assert [i.item for i in store.load(FOOD).items_at("food.likes") or []] == ["green_tea"]
    # Exclusive sections: a dislike moves the item.
    moved = apply_operations(store, [_append("green tea", "food.dislikes")])
    assert moved.ok
    assert store.load(FOOD).items_at("food.likes") == []
    changes = [e.change for e in history(store, "green tea")]
    assert changes == ["append", "remove", "append"]
    done = undo(store)
    assert done.undoes == moved.batch
    assert [i.item for i in store.load(FOOD).items_at("food.likes") or []] == ["green_tea"]


def test_ops_log_records_every_write(memory: Memory) -> None:
    [chunk] = memory.remember("a fact worth logging")
    memory.forget(chunk.id)
    apply_operations(memory.profile, [_append("miso")])
    records = memory.profile.op_records()
    chunk_ops = [(r.op, r.path) for r in records if r.actor == "chunks"]
    assert ("create", chunk.rel_path) in chunk_ops and ("soft_delete", chunk.rel_path) in chunk_ops
    profile_ops = [r for r in records if r.actor == "profile" and r.op == "apply"]
    assert profile_ops and profile_ops[-1].meta and profile_ops[-1].meta["file"] == FOOD
    assert all(r.after for r in profile_ops)


@pytest.mark.parametrize("backend", ["local", "postgres"])
def test_a_query_of_stop_words_falls_back_alike_on_both_backends(
    backend: str, home: MemoryHome, request: pytest.FixtureRequest
) -> None:
    """Nothing but stop words ("what kind of thing"): the keyword list searches
    every word only when neither list found anything (one rule, `memagent.index.rank`)."""
    from memagent.embeddings import load_embedder

    if load_embedder(enabled=True) is None:
        pytest.fail("the MiniLM embedder is part of the test environment (scripts/setup)")
    db = request.getfixturevalue("database") if backend == "postgres" else None
    user = f"s-{uuid.uuid4().hex}" if db else None
    with Memory(home, db=db, user=user) as hybrid:
        hybrid.remember("A brush is the kind of thing you paint with.")
        hybrid.remember("The quarterly budget review is on Thursday.")
        hits = hybrid.recall("what kind of thing", k=2)
        # the meaning list found both: no keyword fallback
        assert len(hits) == 2 and all("keyword" not in h.why and "dense" in h.why for h in hits)
    with Memory(home, embeddings=False, db=db, user=user) as keyword_only:
        [found] = keyword_only.recall("what kind of thing", k=1)
        assert "brush" in found.content and "keyword" in found.why


@pytest.mark.parametrize("backend", ["local", "postgres"])
def test_hybrid_search_uses_vectors_on_both_backends(
    backend: str, home: MemoryHome, request: pytest.FixtureRequest
) -> None:
    from memagent.embeddings import load_embedder

    if load_embedder(enabled=True) is None:
        pytest.fail("the MiniLM embedder is part of the test environment (scripts/setup)")
    if backend == "local":
        mem = Memory(home)
    else:
        mem = Memory(home, db=request.getfixturevalue("database"), user=f"h-{uuid.uuid4().hex}")
    with mem:
        [rex] = mem.remember("My dog Rex loves chasing tennis balls in the park.")
        mem.remember("The quarterly budget review is on Thursday.")
        [pet] = mem.recall("which animal do I have as a pet?", k=1)
        assert "Rex" in pet.content
        assert pet.why["mode"] == "hybrid" and "dense" in pet.why
        related = mem.remember("Rex the dog also chases tennis balls on the beach.")[0]
        # The auto-linker's similarity question, answered by either backend.
        assert ("related_to", rex.id) in {(link.type, link.target) for link in related.links}


def test_recall_searches_notes_and_profile_facts_on_both_backends(memory: Memory) -> None:
    memory.remember("The deploy pipeline runs on Kubernetes.")
    memory.write_note("entities/jane.md", "# Jane\n\nJane's favourite colour is teal. #colleague\n")
    memory.profile_apply([_append("pomegranates")])
    [note] = memory.recall("favourite colour teal", k=1)
    assert (note.kind, note.id, note.path) == (
        "note",
        "note:vault/entities/jane.md",
        "vault/entities/jane.md",
    )
    assert "colleague" in note.tags
    fact = memory.recall("pomegranates", k=1)[0]
    assert fact.kind == "fact" and "pomegranates" in fact.content.lower()
    assert [h.kind for h in memory.recall("teal", kinds=["chunk"])] == []
    assert {h.kind for h in memory.recall("teal kubernetes", kinds=["note"])} == {"note"}
    assert [h.id for h in memory.recall("teal", tags=["colleague"])] == [note.id]
    memory.delete_note("entities/jane.md")
    assert all(h.kind != "note" for h in memory.recall("favourite colour teal"))
    memory.profile_apply(
        [
            parse_operation(
                {
                    "operation": "remove",
                    "file": FOOD,
                    "path": "food.likes",
                    "value": {"item": "pomegranates"},
                }
            )
        ]
    )
    assert memory.recall("pomegranates") == []
