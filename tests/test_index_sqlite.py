"""`index.sqlite` that fights back: a schema that is not ours (a recursive view
named like a table, a trigger, wrong columns) is seen as corrupt and rebuilt
from the files, and every statement stops at the caller's deadline."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memagent.core import CorruptFile, MemoryHome, deadline
from memagent.index import Index
from memagent.memory.chunks.store import ChunkStore

RECURSIVE_META = (
    "CREATE VIEW meta AS WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) "
    "SELECT CAST(x AS TEXT) AS key, 'v' AS value FROM r"
)


def _tamper(path: Path, *statements: str) -> None:
    conn = sqlite3.connect(path)
    with conn:
        for sql in statements:
            conn.execute(sql)
    conn.close()


@pytest.mark.parametrize(
    "statements",
    [
        ("DROP TABLE meta", RECURSIVE_META),
        ("DROP TABLE tags", "CREATE TABLE tags (rowid INTEGER, label TEXT)"),
        ("CREATE TRIGGER t AFTER INSERT ON docs BEGIN DELETE FROM docs; END",),
        ("DROP TABLE files", "CREATE VIEW files AS SELECT 1 AS path"),
    ],
    ids=["recursive-view-meta", "wrong-columns", "trigger", "view-files"],
)
def test_foreign_schema_is_corrupt_and_recall_rebuilds(
    home: MemoryHome, statements: tuple[str, ...]
) -> None:
    store = ChunkStore(home, embeddings=False)
    store.remember("Kestrels hover over the dunes.")
    store.close()
    _tamper(home.layout.index, *statements)
    with pytest.raises(CorruptFile, match="index"):
        Index(home.layout.index)
    again = ChunkStore(home, embeddings=False)
    hits = again.recall("kestrels")
    assert hits and "Kestrels" in hits[0].row.content
    again.close()
    Index(home.layout.index).close()  # rebuilt: our schema again


def test_statements_stop_at_the_deadline(tmp_path: Path) -> None:
    index = Index(tmp_path / "index.sqlite")
    endless = "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT max(x) FROM r"
    with deadline(0.2), pytest.raises(sqlite3.OperationalError, match="interrupt"):
        index.conn.execute(endless).fetchone()
    assert index.conn.execute("SELECT count(*) FROM docs").fetchone() == (0,)
    index.close()
