"""A long-lived chunk store (a server's) sees every write made after it opened —
vault notes, profile facts, chunks from another process — through the ops log."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from memagent.core import MemoryHome, read_ops_since
from memagent.memory.chunks import ChunkStore
from memagent.memory.vault import Vault


def _ids(store: ChunkStore, query: str) -> list[str]:
    return [h.row.doc_id for h in store.recall(query)]


def test_notes_written_after_open_are_found_and_deleted_ones_forgotten(home: MemoryHome) -> None:
    store = ChunkStore(home, embeddings=False)
    assert _ids(store, "saxophone") == []
    vault = Vault(home)
    vault.create("entities/bob.md", "# Bob\n\nBob plays the saxophone.\n")
    assert _ids(store, "saxophone") == ["note:vault/entities/bob.md"]
    vault.update("entities/bob.md", "saxophone", "trombone")
    assert _ids(store, "saxophone") == []
    assert _ids(store, "trombone") == ["note:vault/entities/bob.md"]
    vault.delete("entities/bob.md")
    assert _ids(store, "trombone") == []


def test_profile_facts_applied_after_open_are_found(home: MemoryHome) -> None:
    from memagent.memory.profile import ProfileStore, apply_operations, parse_operation

    store = ChunkStore(home, embeddings=False)
    assert store.recall("rambutan") == []
    apply_operations(
        ProfileStore(home),
        [
            parse_operation(
                {
                    "operation": "append",
                    "file": "resource_user_food_prefs.json",
                    "path": "food.likes",
                    "value": {"item": "rambutan", "display": "Rambutan"},
                }
            )
        ],
    )
    assert [h.row.kind for h in store.recall("rambutan")] == ["fact"]


def test_chunks_remembered_by_another_process_are_found(home: MemoryHome) -> None:
    store = ChunkStore(home, embeddings=False)
    assert _ids(store, "zeppelin") == []
    proc = subprocess.run(
        [
            *(sys.executable, "-m", "memagent", "remember", "--home", str(home.root)),
            *("--keyword-only", "I rode a zeppelin over Friedrichshafen"),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    hits = store.recall("zeppelin")
    assert len(hits) == 1 and hits[0].row.kind == "chunk"


def test_own_writes_are_not_indexed_twice(home: MemoryHome) -> None:
    store = ChunkStore(home, embeddings=False)
    store.remember("The boat is called Marlin")
    before = store.index.count()
    store.remember("The car is called Comet")
    assert store.index.count() == before + 1
    assert len(store.recall("Marlin")) == 1


def test_read_ops_since_leaves_a_partial_line_and_restarts_on_shrink(tmp_path: Path) -> None:
    log = tmp_path / "ops.jsonl"
    assert read_ops_since(log, 0) == ([], 0)
    line = json.dumps({"ts": "t", "actor": "a", "op": "create", "path": "vault/x.md"})
    log.write_text(line + "\n" + '{"ts": "t", "act')
    records, offset = read_ops_since(log, 0)
    assert [r.path for r in records] == ["vault/x.md"] and offset == len(line) + 1
    assert read_ops_since(log, offset)[0] == []
    log.write_text("garbage\n")
    records, offset = read_ops_since(log, 10_000)
    assert records == [] and offset == len("garbage\n")
