"""The tables of `index.sqlite` (`SCHEMA`), the check that a file holds only what
they should (`check_schema`), and the one migration an older file needs
(`add_context_column`). `Index` runs them when it opens a file."""

from __future__ import annotations

import contextlib
import functools
import sqlite3

from memagent.core import CorruptFile

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS docs (
    rowid INTEGER PRIMARY KEY,
    doc_id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    path TEXT NOT NULL,
    content TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '',
    type TEXT,
    created REAL NOT NULL DEFAULT 0,
    created_at TEXT,
    conversation_id TEXT,
    session_id TEXT,
    user_id TEXT,
    agent_id TEXT,
    speaker TEXT,
    deleted INTEGER NOT NULL DEFAULT 0,
    access_count INTEGER NOT NULL DEFAULT 0,
    accessed REAL,
    source TEXT,
    context TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS docs_path ON docs(path);
CREATE INDEX IF NOT EXISTS docs_conv ON docs(conversation_id, created);
CREATE INDEX IF NOT EXISTS docs_created ON docs(kind, created);
CREATE VIRTUAL TABLE IF NOT EXISTS docs_fts USING fts5(
    content, tags, context, content='docs', content_rowid='rowid',
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TABLE IF NOT EXISTS vectors (rowid INTEGER PRIMARY KEY, vec BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS ctx_vectors (rowid INTEGER PRIMARY KEY, vec BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS tags (rowid INTEGER NOT NULL, tag TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS tags_tag ON tags(tag, rowid);
CREATE INDEX IF NOT EXISTS tags_row ON tags(rowid);
CREATE TABLE IF NOT EXISTS links (src TEXT NOT NULL, dst TEXT NOT NULL, type TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS links_src ON links(src);
CREATE INDEX IF NOT EXISTS links_dst ON links(dst);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY, kind TEXT NOT NULL, mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS dirs (path TEXT PRIMARY KEY, mtime_ns INTEGER NOT NULL);
"""


@functools.cache
def _expected_schema() -> dict[str, tuple[str, tuple[str, ...]]]:
    """What `SCHEMA` creates: name -> (type, column names), from an empty database."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.executescript(SCHEMA)
        return _schema_of(conn)
    finally:
        conn.close()


def _schema_of(conn: sqlite3.Connection) -> dict[str, tuple[str, tuple[str, ...]]]:
    out: dict[str, tuple[str, tuple[str, ...]]] = {}
    for name, kind in conn.execute("SELECT name, type FROM sqlite_master").fetchall():
        cols: tuple[str, ...] = ()
        if kind == "table":
            cols = tuple(r[1] for r in conn.execute(f'PRAGMA table_info("{name}")'))
        out[name] = (kind, cols)
    return out


def check_schema(conn: sqlite3.Connection, shown: str) -> None:
    """`CorruptFile` unless every object the index uses is what it should be: tables
    are tables with the expected columns, and no view or trigger is anywhere (a
    view named like a table could recurse forever; a trigger could run anything).
    Missing tables are fine: opening creates them."""
    actual = _schema_of(conn)
    for name, (kind, _) in actual.items():
        if kind in ("view", "trigger"):
            raise CorruptFile(shown, f"unexpected {kind} {name!r} in the index")
    for name, (kind, cols) in _expected_schema().items():
        found = actual.get(name)
        if found is None:
            continue
        if found[0] != kind:
            raise CorruptFile(shown, f"{name!r} is a {found[0]}, expected a {kind}")
        if kind == "table" and found[1] != cols:
            raise CorruptFile(shown, f"table {name!r} has columns {list(found[1])}")


_OLD_DOC_COLUMNS = (
    "rowid", "doc_id", "kind", "path", "content", "tags", "type", "created", "created_at",
    "conversation_id", "session_id", "user_id", "agent_id", "speaker", "deleted",
    "access_count", "accessed", "source",
)  # fmt: skip


def add_context_column(conn: sqlite3.Connection) -> bool:
    """An index written before turns had a context: add the column and drop the
    two-column FTS table (re-created and refilled once opened). True if done."""

    def old_layout() -> bool:
        kind = conn.execute("SELECT type FROM sqlite_master WHERE name = 'docs'").fetchone()
        cols = tuple(r[1] for r in conn.execute('PRAGMA table_info("docs")'))
        # Anything else (the new layout, or a damaged one) is left to check_schema.
        return kind is not None and kind[0] == "table" and cols == _OLD_DOC_COLUMNS

    if not old_layout():
        return False
    conn.execute("BEGIN IMMEDIATE")  # another process may be migrating it too
    try:
        if not old_layout():
            conn.execute("ROLLBACK")
            return False
        conn.execute("ALTER TABLE docs ADD COLUMN context TEXT NOT NULL DEFAULT ''")
        conn.execute("DROP TABLE IF EXISTS docs_fts")
        conn.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
        raise
    return True
