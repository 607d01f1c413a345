"""The chunk store: files through Storage, ops log, index agreement, validation."""

from __future__ import annotations

import json

import pytest

from memagent.core import InvalidInput, MemoryHome, NotFound
from memagent.index import Filters
from memagent.memory.chunks import Chunk, ChunkStore


@pytest.fixture
def store(home: MemoryHome) -> ChunkStore:
    return ChunkStore(home, embeddings=False)


def _chunk_files(home: MemoryHome) -> list[str]:
    return sorted(p.name for p in home.layout.chunks.rglob("*.json"))


def test_create_writes_file_in_date_folder_and_logs(store: ChunkStore, home: MemoryHome) -> None:
    c = store.create(
        "We decided to ship on Friday.", tags=["Release"], created_at="2024-03-05T10:00:00Z"
    )
    path = home.root / "chunks" / "2024-03-05" / f"{c.id}.json"
    data = json.loads(path.read_text())
    assert data["content"] == "We decided to ship on Friday."
    assert data["tags"] == ["release"]
    assert data["type"] == "decision"
    assert data["metadata"]["created"].startswith("2024-03-05T10:00:00")
    ops = home.ops(actor="chunks")
    assert ops[-1].op == "create" and ops[-1].path == f"chunks/2024-03-05/{c.id}.json"
    assert Chunk.model_validate(data).id == c.id


def test_get_records_access(store: ChunkStore) -> None:
    c = store.create("Tea at four.")
    assert store.get(c.id).metadata.access_count == 1
    again = store.get(c.id)
    assert again.metadata.access_count == 2 and again.metadata.accessed is not None
    assert store.get(c.id, record_access=False).metadata.access_count == 2
    row = store.index.get(c.id)
    assert row is not None and row.access_count == 2


def test_update_changes_content_and_search(store: ChunkStore) -> None:
    c = store.create("The cat is called Miso.", tags=["pets"])
    store.update(c.id, content="The cat is called Tofu.", tags=["pets", "home"], confidence=0.5)
    got = store.get(c.id, record_access=False)
    assert got.content == "The cat is called Tofu." and got.tags == ["pets", "home"]
    assert got.metadata.confidence == 0.5
    assert [h.row.doc_id for h in store.recall("Tofu")] == [c.id]
    assert store.recall("Miso") == []
    with pytest.raises(InvalidInput):
        store.update(c.id, type="gossip")
    with pytest.raises(InvalidInput):
        store.update(c.id, confidence=3.0)


def test_soft_delete_hides_and_restore_brings_back(store: ChunkStore) -> None:
    c = store.create("Passport number is in the blue folder.")
    store.soft_delete(c.id)
    assert store.recall("passport") == []
    assert store.list() == []
    assert [i["id"] for i in store.list(Filters(include_deleted=True))] == [c.id]
    store.restore(c.id)
    assert [h.row.doc_id for h in store.recall("passport")] == [c.id]


def test_hard_delete_removes_file_keeps_content_in_log(store: ChunkStore, home: MemoryHome) -> None:
    c = store.create("Temporary thought.")
    store.hard_delete(c.id)
    assert _chunk_files(home) == []
    assert store.recall("temporary") == []
    last = home.ops(actor="chunks")[-1]
    assert last.op == "delete" and last.meta == {"id": c.id, "content": "Temporary thought."}
    with pytest.raises(NotFound):
        store.get(c.id)


def test_list_filters(store: ChunkStore) -> None:
    a = store.create("Alpha", tags=["x"], created_at="2024-01-01T00:00:00Z", user_id="u1")
    b = store.create("Beta", tags=["y"], created_at="2024-02-01T00:00:00Z", conversation_id="c1")
    c = store.create("I prefer tea", created_at="2024-03-01T00:00:00Z")
    ids = lambda f: [i["id"] for i in store.list(f)]  # noqa: E731
    assert ids(None) == [c.id, b.id, a.id]
    assert ids(Filters(tags=["x"])) == [a.id]
    assert ids(Filters(type="preference")) == [c.id]
    assert ids(Filters(since=1706745600.0)) == [c.id, b.id]
    assert ids(Filters(until=1706745600.0)) == [a.id]
    assert ids(Filters(user_id="u1")) == [a.id]
    assert ids(Filters(conversation_id="c1")) == [b.id]


def test_remember_splits_long_text(store: ChunkStore) -> None:
    text = "\n\n".join(f"Paragraph {i}. " + "Words that go on and on. " * 60 for i in range(4))
    chunks = store.remember(text, tags=["long"])
    assert len(chunks) >= 2
    assert all(c.tokens <= 800 for c in chunks)
    assert "".join(c.content for c in chunks).count("Paragraph") == 4


@pytest.mark.parametrize(
    "kwargs",
    [
        {"content": ""},
        {"content": "   \n"},
        {"content": "ok", "tags": ["../etc"]},
        {"content": "ok", "tags": ["a b"]},
        {"content": "ok", "tags": [f"t{i}" for i in range(40)]},
        {"content": "ok", "created_at": "yesterday"},
        {"content": "ok", "type": "rumour"},
        {"content": "ok", "conversation_id": "c" * 500},
        {"content": "x" * (600 * 1024)},
    ],
)
def test_bad_input_is_rejected_and_nothing_written(
    store: ChunkStore, home: MemoryHome, kwargs: dict
) -> None:
    content = kwargs.pop("content")
    before = len(home.ops(limit=10_000))
    with pytest.raises(InvalidInput):
        store.create(content, **kwargs)
    assert _chunk_files(home) == []
    assert len(home.ops(limit=10_000)) == before


def test_batch_with_one_bad_draft_writes_nothing(store: ChunkStore, home: MemoryHome) -> None:
    from memagent.memory.chunks import ChunkDraft

    drafts = [
        ChunkDraft(content="fine"),
        ChunkDraft(content="also fine", tags=["no spaces allowed"]),
    ]
    with pytest.raises(InvalidInput):
        store.create_many(drafts)
    assert _chunk_files(home) == []


@pytest.mark.parametrize(
    "bad_id",
    [
        "../../etc/passwd",
        "chunk-2024-abc",
        "chunk-20240101-zzzzzzzzzzzz",
        "",
        "chunk-20240101-0123456789ab/..",
    ],
)
def test_hostile_ids_are_rejected(store: ChunkStore, bad_id: str) -> None:
    for op in (store.get, store.soft_delete, store.restore, store.hard_delete):
        with pytest.raises(InvalidInput):
            op(bad_id)


def test_unknown_id_is_not_found(store: ChunkStore) -> None:
    with pytest.raises(NotFound):
        store.get("chunk-20240101-0123456789ab")


def test_corrupt_chunk_file_is_reported_not_overwritten(
    store: ChunkStore, home: MemoryHome
) -> None:
    from memagent.core import CorruptFile

    c = store.create("Something real.")
    path = home.root / c.rel_path
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(CorruptFile):
        store.get(c.id)
    assert path.read_text() == "{not json"


def test_second_store_sees_writes_of_first(home: MemoryHome) -> None:
    one = ChunkStore(home, embeddings=False)
    two = ChunkStore(home, embeddings=False)
    assert two.recall("zebra") == []
    one.create("A zebra crossed the road.")
    three = ChunkStore(home, embeddings=False)
    assert [h.row.content for h in three.recall("zebra")] == ["A zebra crossed the road."]


def test_concurrent_processes_lose_nothing(home: MemoryHome) -> None:
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from memagent.core import MemoryHome\n"
        "from memagent.memory.chunks import ChunkStore\n"
        "s = ChunkStore(MemoryHome.open(sys.argv[1]), embeddings=False)\n"
        "for i in range(15):\n"
        "    s.create(f'writer {sys.argv[2]} note {i}', tags=['race'], conversation_id='c')\n"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", script, str(home.root), str(n)]) for n in range(3)
    ]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    assert len(_chunk_files(home)) == 45
    store = ChunkStore(home, embeddings=False)
    assert len(store.list(Filters(tags=["race"]), limit=100)) == 45
    assert store.index.count("chunk") == 45


def test_save_writes_a_whole_chunk_as_it_is(store: ChunkStore, home: MemoryHome) -> None:
    """`save` is how a copy from another home keeps a chunk's id, dates and links."""
    other_home = MemoryHome.open(home.root.parent / "other")
    other_home.init()
    other = ChunkStore(other_home, embeddings=False)
    original = store.create("Ana moved to Lisbon in May.", created_at="2024-05-02T09:00:00Z")
    with other.lock():
        other.save(original, op="import")
    copied = other.get(original.id, record_access=False)
    assert copied == original
    assert [h.row.doc_id for h in other.recall("Lisbon", k=3)] == [original.id]
    with pytest.raises(NotFound):
        other.get("chunk-20240502-000000000000", record_access=False)
