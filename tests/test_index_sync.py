"""Opening a home repairs the index from files: notes, profile facts, chunks."""

from __future__ import annotations

import json
import os
import shutil
from datetime import date

import numpy as np

from fakes import BagOfWords
from memagent.core import MemoryHome
from memagent.index import Index, sync
from memagent.index.documents import fact_docs
from memagent.memory.chunks import ChunkStore


def _ids(store: ChunkStore, query: str) -> list[str]:
    return [h.row.doc_id for h in store.recall(query)]


def test_vault_notes_are_indexed_and_hand_edits_picked_up(home: MemoryHome) -> None:
    note = home.layout.vault / "entities" / "jane_doe.md"
    note.write_text("# Jane Doe\n\nJane plays the cello. #music\n", encoding="utf-8")
    store = ChunkStore(home, embeddings=False)
    hits = store.recall("cello")
    assert [h.row.doc_id for h in hits] == ["note:vault/entities/jane_doe.md"]
    assert hits[0].row.tags == ["music"]
    note.write_text("# Jane Doe\n\nJane plays the violin.\n", encoding="utf-8")
    os.utime(note, ns=(1, 1))  # a different mtime even on coarse clocks
    store = ChunkStore(home, embeddings=False)
    assert _ids(store, "cello") == []
    assert _ids(store, "violin") == ["note:vault/entities/jane_doe.md"]
    note.unlink()
    assert _ids(ChunkStore(home, embeddings=False), "violin") == []


def _resource(expiry: str | None) -> dict:
    return {
        "_metadata": {"resource_id": "user_food_prefs", "tags": ["food"], "description": "food"},
        "likes": {
            "items": [
                {
                    "item": "sushi",
                    "display": "Loves salmon sushi",
                    "added": "2024-01-01",
                    "expiry": None,
                },
                {
                    "item": "mango",
                    "display": "Eats mango daily",
                    "added": "2024-01-01",
                    "expiry": expiry,
                },
            ]
        },
    }


def test_profile_facts_are_indexed_skipping_expired_and_broken(home: MemoryHome) -> None:
    (home.layout.profile / "resource_user_food_prefs.json").write_text(
        json.dumps(_resource("2000-01-01")), encoding="utf-8"
    )
    (home.layout.profile / "resource_broken.json").write_text("{oops", encoding="utf-8")
    store = ChunkStore(home, embeddings=False)
    hits = store.recall("sushi")
    assert [h.row.kind for h in hits] == ["fact"]
    assert hits[0].row.tags == ["food"]
    assert hits[0].row.source == {
        "kind": "profile",
        "resource_id": "user_food_prefs",
        "section": "likes",
        "list": "items",
        "item": "sushi",
    }
    assert store.recall("mango") == []


def test_fact_docs_tolerate_odd_shapes() -> None:
    odd = {
        "_metadata": "nope",
        "s": {"l": [1, "x", {"display": ""}, {"item": "k", "display": "ok"}]},
        "t": 3,
    }
    docs = fact_docs("profile/resource_x.json", odd, 0.0, today=date(2024, 1, 1))
    assert [d.content for d in docs] == ["ok"]
    assert fact_docs("p", ["not", "a", "dict"], 0.0) == []


def test_chunk_files_from_elsewhere_are_picked_up_and_removed(home: MemoryHome, tmp_path) -> None:
    other = MemoryHome.open(tmp_path / "other")
    other.init()
    made = ChunkStore(other, embeddings=False).create(
        "The lighthouse keeper waved.", created_at="2023-05-01T00:00:00Z"
    )
    store = ChunkStore(home, embeddings=False)
    assert _ids(store, "lighthouse") == []
    shutil.copytree(other.layout.chunks / "2023-05-01", home.layout.chunks / "2023-05-01")
    store = ChunkStore(home, embeddings=False)
    assert _ids(store, "lighthouse") == [made.id]
    shutil.rmtree(home.layout.chunks / "2023-05-01")
    assert _ids(ChunkStore(home, embeddings=False), "lighthouse") == []


def test_unchanged_home_syncs_nothing(home: MemoryHome) -> None:
    store = ChunkStore(home, embeddings=False)
    store.create("One.")
    store.create("Two.")
    again = sync(store.index, home.root)
    again = sync(store.index, home.root)
    assert not again.changed


def test_deleted_index_is_rebuilt_from_files(home: MemoryHome) -> None:
    store = ChunkStore(home, embeddings=False)
    c = store.create("Rebuild me from files.")
    store.close()
    for suffix in ("", "-wal", "-shm"):
        p = home.root / f"index.sqlite{suffix}"
        if p.exists():
            p.unlink()
    assert _ids(ChunkStore(home, embeddings=False), "rebuild") == [c.id]


def test_rebuild_keeps_links_and_counts(home: MemoryHome) -> None:
    store = ChunkStore(home, embeddings=False)
    a = store.create("First", conversation_id="c")
    b = store.create("Second", conversation_id="c")
    report = store.rebuild()
    assert sorted(r for r in report.indexed if r.startswith("chunks/")) == sorted(
        [a.rel_path, b.rel_path]
    )
    assert "vault/user.md" in report.indexed
    assert ("context_of", a.id) in Index(home.layout.index).links(b.id)[0]


def test_a_copied_home_keeps_its_vectors_and_embeds_only_changed_text(tmp_path) -> None:
    root = tmp_path / "home"
    (root / "vault").mkdir(parents=True)
    for name, text in [("a", "The lighthouse keeper waved."), ("b", "Tea at five.")]:
        (root / "vault" / f"{name}.md").write_text(text, encoding="utf-8")
    emb = BagOfWords()
    index = Index(root / "index.sqlite", emb)  # type: ignore[arg-type]
    sync(index, root)
    assert len(emb.texts) == 2
    before = {r.doc_id: index.vectors.get([r.rowid])[r.rowid].copy() for r in _rows(index)}
    # A copy without its times: every date moves; one note was also edited.
    for p in (root / "vault").iterdir():
        os.utime(p, ns=(1_000_000_000, 1_000_000_000))
    (root / "vault" / "b.md").write_text("Coffee at six.", encoding="utf-8")
    emb.calls.clear()
    report = sync(index, root)
    assert sorted(report.indexed) == ["vault/a.md", "vault/b.md"]
    assert len(emb.texts) == 1 and "Coffee at six." in emb.texts[0]
    after = {r.doc_id: index.vectors.get([r.rowid])[r.rowid] for r in _rows(index)}
    assert after.keys() == before.keys()
    kept = [d for d in after if np.array_equal(after[d], before[d])]
    changed = [d for d in after if not np.array_equal(after[d], before[d])]
    assert len(kept) == 1 and len(changed) == 1
    np.testing.assert_allclose(after[changed[0]], emb.embed([emb.texts[0]])[0], atol=1e-6)


def _rows(index: Index) -> list:
    rowids = [r[0] for r in index.conn.execute("SELECT rowid FROM docs ORDER BY rowid")]
    return list(index.rows(rowids).values())
