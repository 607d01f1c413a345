"""Chunk edits: re-indexed, logged with before/after, undoable, refused when stale."""

from __future__ import annotations

import json

import pytest

from memagent.core import Conflict, InvalidInput, MemoryHome, NotFound
from memagent.memory.chunks import ChunkStore


@pytest.fixture
def store(home: MemoryHome) -> ChunkStore:
    return ChunkStore(home, embeddings=False)


def _ids(store: ChunkStore, query: str) -> list[str]:
    return [h.row.doc_id for h in store.recall(query, k=5)]


def test_update_reindexes_and_logs_before_after(store: ChunkStore, home: MemoryHome) -> None:
    c = store.create("The cat is called Miso.", tags=["pets"])
    store.update(c.id, content="The dog is called Biscuit.", tags=["pets", "dog"])
    assert _ids(store, "Biscuit") == [c.id]
    assert c.id not in _ids(store, "Miso")
    rec = home.ops(actor="chunks")[-1]
    assert rec.op == "update" and rec.meta is not None
    assert rec.meta["before"]["content"] == "The cat is called Miso."
    assert rec.meta["after"]["content"] == "The dog is called Biscuit."
    assert rec.meta["after"]["tags"] == ["pets", "dog"]
    assert store.get(c.id, record_access=False).tokens > 0


def test_undo_reverts_and_is_itself_undoable(store: ChunkStore) -> None:
    c = store.create("Meeting moved to Tuesday.", tags=["work"])
    store.update(c.id, content="Meeting moved to Thursday.")
    undo = store.undo(c.id)
    assert undo.op == "undo" and undo.after["content"] == "Meeting moved to Tuesday."
    assert store.get(c.id, record_access=False).content == "Meeting moved to Tuesday."
    assert _ids(store, "Tuesday") == [c.id]
    hist = store.history(c.id)
    assert [e.op for e in hist] == ["update", "undo"]
    assert hist[0].undone is True
    with pytest.raises(NotFound):
        store.undo(c.id)
    with pytest.raises(Conflict):
        store.undo(edit=hist[0].edit)
    store.undo(edit=undo.edit)  # redo
    assert store.get(c.id, record_access=False).content == "Meeting moved to Thursday."


def test_soft_delete_and_restore_are_edits(store: ChunkStore) -> None:
    c = store.create("Parking is on level 3.")
    store.soft_delete(c.id)
    assert _ids(store, "parking") == []
    store.undo(c.id)
    assert _ids(store, "parking") == [c.id]


def test_undo_refuses_when_changed_since(store: ChunkStore) -> None:
    c = store.create("Budget is 100 euros.")
    store.update(c.id, content="Budget is 200 euros.")
    first = store.history(c.id)[-1].edit
    store.update(c.id, tags=["money"])
    with pytest.raises(Conflict, match="changed since"):
        store.undo(edit=first)
    assert store.get(c.id, record_access=False).tags == ["money"]


def test_no_change_writes_nothing(store: ChunkStore, home: MemoryHome) -> None:
    c = store.create("Same text.", tags=["a"])
    n = len(home.ops())
    store.update(c.id, content="Same text.", tags=["a"])
    assert len(home.ops()) == n


@pytest.mark.parametrize(
    "kwargs",
    [
        {"content": ""},
        {"content": "   \n"},
        {"content": "x" * 2_000_000},
        {"content": 5},
        {"tags": ["<script>"]},
        {"tags": "notalist"},
        {"tags": ["ok"] * 0 + [f"t{i}" for i in range(40)]},
        {"type": "gossip"},
        {"confidence": 7.0},
    ],
)
def test_bad_updates_write_nothing(store: ChunkStore, home: MemoryHome, kwargs: dict) -> None:
    c = store.create("Keep me as I am.", tags=["keep"])
    path = home.root / c.rel_path
    before = path.read_bytes()
    n = len(home.ops())
    with pytest.raises(InvalidInput):
        store.update(c.id, **kwargs)
    assert path.read_bytes() == before and len(home.ops()) == n


@pytest.mark.parametrize("bad", ["../etc/passwd", "chunk-2024", "edit-zz", "edit-" + "0" * 15])
def test_hostile_ids_for_undo(store: ChunkStore, bad: str) -> None:
    with pytest.raises(InvalidInput):
        store.undo(edit=bad)
    with pytest.raises(InvalidInput):
        store.undo(bad)


def test_unknown_targets(store: ChunkStore) -> None:
    with pytest.raises(NotFound):
        store.update("chunk-20240101-000000000000", content="x")
    with pytest.raises(NotFound):
        store.undo(edit="edit-" + "0" * 16)
    with pytest.raises(InvalidInput):
        store.undo()


def test_log_record_is_plain_json(store: ChunkStore, home: MemoryHome) -> None:
    c = store.create("Line one.")
    store.update(c.id, content="Line <b>two</b>.")
    line = home.layout.ops_log.read_text().strip().splitlines()[-1]
    assert json.loads(line)["meta"]["after"]["content"] == "Line <b>two</b>."


def test_history_ignores_other_chunks_that_mention_the_id(store: ChunkStore) -> None:
    a = store.create("Ana's flat is in Porto.")
    b = store.create("A note about something else.")
    store.update(b.id, content=f"See {a.id} for where Ana lives.")  # b's edit names a's id
    store.update(a.id, content="Ana's flat is in Lisbon.")
    assert [(e.op, e.chunk_id) for e in store.history(a.id)] == [("update", a.id)]
    assert store.undo(a.id).chunk_id == a.id
    assert store.get(a.id, record_access=False).content == "Ana's flat is in Porto."
    assert store.get(b.id, record_access=False).content == f"See {a.id} for where Ana lives."


def test_a_logged_edit_without_the_editable_fields_is_not_an_edit(store: ChunkStore) -> None:
    from memagent.core import OpRecord
    from memagent.memory.chunks.edits import edits_of

    c = store.create("Lunch with Ana on Friday.")
    store.update(c.id, content="Lunch with Ana on Saturday.")
    good = store.op_records(mentioning=c.id)[-1]
    assert good.meta is not None
    broken = [
        OpRecord(**{**good.model_dump(), "meta": {**good.meta, "before": {"content": "x"}}}),
        OpRecord(
            **{
                **good.model_dump(),
                "meta": {**good.meta, "after": {**good.meta["after"], "tags": "pets"}},
            }
        ),
    ]
    assert edits_of(broken, c.id) == []
    (edit,) = edits_of([good], c.id)
    assert edit.before["content"] == "Lunch with Ana on Friday."
    assert edit.after["content"] == "Lunch with Ana on Saturday."
