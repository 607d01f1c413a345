"""The auto-linker and manual links: types, windows, both directions, no scans."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memagent.core import InvalidInput, MemoryHome, NotFound
from memagent.memory.chunks import ChunkStore


@pytest.fixture
def store(home: MemoryHome) -> ChunkStore:
    return ChunkStore(home, embeddings=False)


def _links(chunk) -> set[tuple[str, str]]:
    return {(link.type, link.target) for link in chunk.links}


def test_context_of_same_conversation(store: ChunkStore) -> None:
    a = store.create("Hi", conversation_id="c1", created_at="2024-01-01T10:00:00Z")
    other = store.create("Elsewhere", conversation_id="c2", created_at="2024-01-01T10:00:30Z")
    b = store.create("Hello back", conversation_id="c1", created_at="2024-01-01T11:00:00Z")
    assert ("context_of", a.id) in _links(b)
    assert all(t != other.id for _, t in _links(b) if _ == "context_of")


def test_follows_within_five_minutes_only(store: ChunkStore) -> None:
    a = store.create("First thought", created_at="2024-01-01T10:00:00Z")
    b = store.create("Second thought", created_at="2024-01-01T10:04:00Z")
    c = store.create("Much later", created_at="2024-01-01T10:20:00Z")
    assert ("follows", a.id) in _links(b)
    assert not any(kind == "follows" for kind, _ in _links(c))


def test_related_by_shared_tags(store: ChunkStore) -> None:
    a = store.create("Postgres tuning", tags=["db"], created_at="2024-01-01T00:00:00Z")
    b = store.create("Index bloat", tags=["db", "ops"], created_at="2024-02-01T00:00:00Z")
    assert ("related_to", a.id) in _links(b)


def test_links_are_indexed_both_ways(store: ChunkStore) -> None:
    a = store.create("Claim: tea helps focus")
    b = store.create("Study shows tea helps focus")
    store.link(b.id, "supports", a.id)
    assert {"type": "supports", "source": b.id} in store.links(a.id)["incoming"]
    assert {"type": "supports", "target": a.id} in store.links(b.id)["outgoing"]
    store.link(b.id, "supports", a.id, remove=True)
    assert {"type": "supports", "source": b.id} not in store.links(a.id)["incoming"]


def test_manual_link_validation(store: ChunkStore) -> None:
    a = store.create("A")
    with pytest.raises(InvalidInput):
        store.link(a.id, "follows", a.id)
    with pytest.raises(InvalidInput):
        store.link(a.id, "supports", a.id)
    with pytest.raises(InvalidInput):
        store.link(a.id, "supports", "../../x")
    with pytest.raises(NotFound):
        store.link(a.id, "contradicts", "chunk-20240101-0123456789ab")


def test_similarity_links_with_embeddings(home: MemoryHome) -> None:
    store = ChunkStore(home, embeddings=True)
    if store.embedder is None:
        pytest.skip("embeddings not installed")
    a = store.create(
        "I adopted a golden retriever puppy named Max.", created_at="2024-01-01T00:00:00Z"
    )
    store.create("The quarterly tax filing is due in April.", created_at="2024-02-01T00:00:00Z")
    c = store.create(
        "My golden retriever puppy Max loves the park.", created_at="2024-03-01T00:00:00Z"
    )
    assert ("related_to", a.id) in _links(c)


def test_linking_never_scans_chunk_files(
    store: ChunkStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(20):
        store.create(f"Earlier note {i}", conversation_id="c", tags=["t"])
    store.index  # opened and synced once  # noqa: B018

    def no_scan(*_a: object, **_k: object) -> object:
        raise AssertionError("the linker listed a folder")

    monkeypatch.setattr(os, "scandir", no_scan)
    monkeypatch.setattr(os, "listdir", no_scan)
    monkeypatch.setattr(Path, "iterdir", no_scan)
    monkeypatch.setattr(Path, "glob", no_scan)
    monkeypatch.setattr(Path, "rglob", no_scan)
    c = store.create("Newest note", conversation_id="c", tags=["t"])
    assert any(kind == "context_of" for kind, _ in _links(c))
