"""`index.sqlite`: the derived, rebuildable index of every memory document.

Tables: `docs` (one row per document, filters and access stats, and the
`context` a conversation turn borrows from its neighbours, see `context`),
`docs_fts` (FTS5 over content, tags and context, external content), `vectors`
(float32 blobs, as embedded), `ctx_vectors` (a turn's vector mixed with its
neighbours', which dense search uses, see `context`),
`tags`, `links` (indexed both ways), `files`/`dirs` (what was indexed, by
mtime and size, so opening a home can cheaply tell what changed) and `meta`;
their definition, check and migration are `memagent.index.schema`.

The file is a cache, so it is written with sqlite3 directly (WAL mode), not
through `Storage`; deleting it loses nothing (`memagent reindex`).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from memagent.core import CorruptFile
from memagent.core.deadline import deadline, remaining_time
from memagent.core.jsontext import JsonObject
from memagent.embeddings import Embedder, embed_query
from memagent.index.context import (
    around,
    beside,
    beside_docs,
    fill_contexts,
    fill_vectors,
    neighbours,
    refresh_contexts,
    refresh_vectors,
)
from memagent.index.documents import Doc
from memagent.index.schema import SCHEMA, add_context_column, check_schema
from memagent.index.vectors import ExactVectors, Vector, VectorSearch

SCHEMA_VERSION = "1"
CONTEXT_WEIGHT = 0.4
"""How much a query word in a turn's context counts against one in the turn itself."""
CONTEXT_MAX_DOCS = 100
"""A query word said in more memories than this is not matched in their context."""


def fts_rank(context_weight: float) -> str:
    """The FTS5 ranking: BM25 with the tags at half and the context at `context_weight`."""
    return f"bm25(1.0, 0.5, {float(context_weight)!r})"


FTS_RANK = fts_rank(CONTEXT_WEIGHT)
"""The table's default ranking (a query states its own, see `search`)."""


_DOC_COLS = (
    "doc_id, kind, path, content, tags, type, created, created_at, conversation_id, "
    "session_id, user_id, agent_id, speaker, deleted, access_count, accessed, source"
)


@dataclass(frozen=True)
class Row:
    """A document as the index returns it (what a search hit is built from)."""

    rowid: int
    doc_id: str
    kind: str
    path: str
    content: str
    tags: list[str]
    type: str | None
    created: float
    created_at: str | None
    conversation_id: str | None
    session_id: str | None
    user_id: str | None
    agent_id: str | None
    speaker: str | None
    deleted: bool
    access_count: int
    accessed: float | None
    source: JsonObject | None

    @classmethod
    def from_sql(cls, r: Sequence[Any]) -> Row:
        return cls(
            rowid=r[0],
            doc_id=r[1],
            kind=r[2],
            path=r[3],
            content=r[4],
            tags=r[5].split() if r[5] else [],
            type=r[6],
            created=r[7],
            created_at=r[8],
            conversation_id=r[9],
            session_id=r[10],
            user_id=r[11],
            agent_id=r[12],
            speaker=r[13],
            deleted=bool(r[14]),
            access_count=r[15],
            accessed=r[16],
            source=json.loads(r[17]) if r[17] else None,
        )


SELECT_ROW = f"SELECT rowid, {_DOC_COLS} FROM docs"

QUERY_CACHE_SIZE = 256
_POOL: list[ThreadPoolExecutor] = []
_POOL_LOCK = threading.Lock()


def embed_pool() -> ThreadPoolExecutor:
    """Threads that embed queries while the caller runs the keyword search
    (onnxruntime and sqlite both release the GIL, so the two overlap)."""
    with _POOL_LOCK:
        if not _POOL:
            _POOL.append(ThreadPoolExecutor(max_workers=2, thread_name_prefix="memagent-embed"))
        return _POOL[0]


PROGRESS_EVERY = 10_000
"""SQLite virtual-machine steps between two deadline checks."""
OPEN_BUDGET_S = 30.0
"""Opening (schema check, version, flags) must finish in this time."""


def _past_deadline() -> int:
    """SQLite progress handler: non-zero interrupts the running statement."""
    left = remaining_time()
    return 1 if left is not None and left <= 0 else 0


def read_only_index_copy(path: Path) -> Path:
    """A private, writable copy of `path` (and its WAL) in a new temporary folder,
    for a memory home this process cannot write. The caller removes the folder."""
    scratch = Path(tempfile.mkdtemp(prefix="memagent-ro-index-"))
    copy = scratch / path.name
    for suffix in ("", "-wal"):
        src = Path(f"{path}{suffix}")
        try:
            shutil.copyfile(src, Path(f"{copy}{suffix}"))
        except OSError:
            if suffix == "":
                break  # no readable index: the copy starts empty and sync fills it
    return copy


def _tag_text(tags: Iterable[str]) -> str:
    return " ".join(t.replace(" ", "_") for t in tags)


class Index:
    """One connection to `index.sqlite` plus the vector matrix cache.

    `embedder=None` means keyword-only: documents get no vectors and dense
    search is skipped (the search result says so).
    """

    def __init__(
        self,
        path: Path,
        embedder: Embedder | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> None:
        """`progress(done, total)` follows the embedding of documents a keyword-only
        writer left without vectors (the first open with embeddings after one)."""
        self.path = path
        self.embedder = embedder
        try:
            self.conn = sqlite3.connect(str(path), timeout=30.0, check_same_thread=False)
            # Every statement stops at the caller's deadline (a request's budget, or
            # the opening budget below) instead of running forever.
            self.conn.set_progress_handler(_past_deadline, PROGRESS_EVERY)
            with deadline(OPEN_BUDGET_S):
                self.conn.execute("PRAGMA journal_mode=WAL")
                self.conn.execute("PRAGMA synchronous=NORMAL")
                migrated = add_context_column(self.conn)
                check_schema(self.conn, str(path))
                self.conn.executescript(SCHEMA)
                self._check_version()
            # Filling in what an older index lacks reads every row: it is done
            # once, outside the opening budget.
            if migrated:
                self._fill_contexts()
            self._fill_vectors_once()
        except sqlite3.DatabaseError as exc:
            with contextlib.suppress(Exception):
                self.conn.close()
            raise CorruptFile(
                str(path), f"index is unreadable ({exc}); run `memagent reindex`"
            ) from exc
        except CorruptFile:
            with contextlib.suppress(Exception):
                self.conn.close()
            raise
        dim = embedder.dim if embedder is not None else 384
        self.vectors: VectorSearch = ExactVectors(self.conn, dim)
        self._query_vectors: OrderedDict[str, Vector] = OrderedDict()
        self._query_lock = threading.Lock()
        if embedder is not None:
            self._backfill_vectors(progress=progress)

    def _backfill_vectors(
        self, batch: int = 256, progress: Callable[[int, int], None] | None = None
    ) -> None:
        """Embed documents a keyword-only writer left without vectors (flagged in meta)."""
        flag = self.conn.execute("SELECT value FROM meta WHERE key='missing_vectors'").fetchone()
        if flag is None:
            return
        assert self.embedder is not None
        rows = self.conn.execute(
            "SELECT rowid, content FROM docs WHERE rowid NOT IN (SELECT rowid FROM vectors)"
        ).fetchall()
        for start in range(0, len(rows), batch):
            part = rows[start : start + batch]
            vecs = self.embedder.embed([r[1] for r in part])
            with self.conn:
                self.vectors.upsert([r[0] for r in part], vecs)
                refresh_vectors(self.conn, self.vectors, around(self.conn, [r[0] for r in part]))
            if progress is not None:
                progress(start + len(part), len(rows))
        with self.conn:
            self.conn.execute("DELETE FROM meta WHERE key='missing_vectors'")

    def _check_version(self) -> None:
        rank = self.conn.execute("SELECT v FROM docs_fts_config WHERE k='rank'").fetchone()
        if rank is None or rank[0] != FTS_RANK:
            # Content counts double the tags; `ORDER BY rank` then uses these weights.
            with self.conn:
                self.conn.execute(
                    "INSERT INTO docs_fts(docs_fts, rank) VALUES('rank', ?)", (FTS_RANK,)
                )
        row = self.conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        if row is None:
            with self.conn:
                self.conn.execute("INSERT INTO meta VALUES('schema', ?)", (SCHEMA_VERSION,))
        model = self.embedder.name if self.embedder is not None else None
        stored = self.conn.execute("SELECT value FROM meta WHERE key='model'").fetchone()
        if model is not None and stored is not None and stored[0] != model:
            # Vectors from another model are not comparable: drop them; sync re-embeds.
            with self.conn:
                self.conn.execute("DELETE FROM vectors")
                self.conn.execute("DELETE FROM ctx_vectors")
                self.conn.execute("DELETE FROM files")
                self.conn.execute("DELETE FROM dirs")
                self.conn.execute(
                    "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'vec_version'"
                )
        if model is not None and (stored is None or stored[0] != model):
            with self.conn:
                self.conn.execute("INSERT OR REPLACE INTO meta VALUES('model', ?)", (model,))

    def close(self) -> None:
        self.conn.close()

    # -- writes --------------------------------------------------------------------
    def upsert(self, docs: Sequence[Doc], vectors: Vector | None = None) -> list[int]:
        """Insert or replace documents (by `doc_id`); embeds them unless `vectors`
        are given. Returns their rowids. Commits."""
        if not docs:
            return []
        if vectors is None and self.embedder is not None:
            vectors = self.embedder.embed([d.content for d in docs])
        with self.conn:
            # A re-stored turn may have moved (another conversation or time): the
            # turns it sat beside lose its words and vector.
            left = beside_docs(self.conn, [d.doc_id for d in docs])
            rowids = [self._upsert_one(d) for d in docs]
            hood = around(self.conn, rowids, left)
            refresh_contexts(self.conn, hood, new=set(rowids))
            if vectors is not None:
                self.vectors.upsert(rowids, vectors)
            else:
                # No model here: drop any now-stale vector; a process with the model
                # embeds these documents when it opens the index.
                self.vectors.remove(rowids)
                self.conn.execute("INSERT OR REPLACE INTO meta VALUES('missing_vectors', '1')")
            refresh_vectors(self.conn, self.vectors, hood)
        return rowids

    def _upsert_one(self, d: Doc) -> int:
        """The `docs`, tag and link rows of one document; its FTS row is written by
        `refresh_contexts`, once its neighbours are known."""
        c = self.conn
        old = c.execute("SELECT rowid FROM docs WHERE doc_id = ?", (d.doc_id,)).fetchone()
        if old is not None:
            self._delete_rows([old[0]], keep_vectors=True)
        values = (
            d.doc_id, d.kind, d.path, d.content, _tag_text(d.tags), d.type, d.created,
            d.created_at, d.conversation_id, d.session_id, d.user_id, d.agent_id, d.speaker,
            int(d.deleted), d.access_count, d.accessed,
            json.dumps(d.source, ensure_ascii=False) if d.source is not None else None,
        )  # fmt: skip
        if old is not None:
            c.execute(
                f"INSERT INTO docs(rowid, {_DOC_COLS}) VALUES ({'?,' * 17}?)", (old[0], *values)
            )
            rowid = int(old[0])
        else:
            cur = c.execute(f"INSERT INTO docs({_DOC_COLS}) VALUES ({'?,' * 16}?)", values)
            rowid = int(cur.lastrowid or 0)
        c.executemany("INSERT INTO tags VALUES (?, ?)", [(rowid, t) for t in set(d.tags)])
        c.executemany(
            "INSERT INTO links VALUES (?, ?, ?)", [(d.doc_id, dst, t) for t, dst in d.links]
        )
        return rowid

    def _delete_rows(self, rowids: list[int], *, keep_vectors: bool = False) -> None:
        c = self.conn
        for rowid in rowids:
            r = c.execute(
                "SELECT doc_id, content, tags, context FROM docs WHERE rowid=?", (rowid,)
            ).fetchone()
            if r is None:
                continue
            c.execute(
                "INSERT INTO docs_fts(docs_fts, rowid, content, tags, context) "
                "VALUES('delete', ?, ?, ?, ?)",
                (rowid, r[1], r[2], r[3]),
            )
            c.execute("DELETE FROM docs WHERE rowid = ?", (rowid,))
            c.execute("DELETE FROM tags WHERE rowid = ?", (rowid,))
            c.execute("DELETE FROM links WHERE src = ?", (r[0],))
        if not keep_vectors:
            self.vectors.remove(rowids)

    def remove_docs(self, doc_ids: Iterable[str]) -> int:
        ids = list(doc_ids)
        with self.conn:
            rows = [
                r[0]
                for d in ids
                for r in self.conn.execute("SELECT rowid FROM docs WHERE doc_id=?", (d,))
            ]
            self._delete_with_context(rows)
        return len(rows)

    def _delete_with_context(self, rowids: list[int]) -> None:
        """Delete rows; the turns that were next to them get a new context."""
        near = beside(self.conn, rowids)
        self._delete_rows(rowids)
        hood = around(self.conn, sorted(near - set(rowids)))
        refresh_contexts(self.conn, hood, new=set())
        refresh_vectors(self.conn, self.vectors, hood)

    def remove_path(self, rel_path: str) -> None:
        """Forget every document of one file, and the file's recorded state."""
        with self.conn:
            rows = [
                r[0] for r in self.conn.execute("SELECT rowid FROM docs WHERE path=?", (rel_path,))
            ]
            self._delete_with_context(rows)
            self.conn.execute("DELETE FROM files WHERE path = ?", (rel_path,))

    # -- context (document expansion, see `memagent.index.context`) ------------------
    def neighbours(self, rowids: Sequence[int]) -> dict[int, tuple[int | None, int | None]]:
        """(previous, next) live document of the same conversation, for each rowid
        that has a conversation."""
        return neighbours(self.conn, rowids)

    def _fill_contexts(self) -> None:
        with self.conn:
            fill_contexts(self.conn)

    def _fill_vectors_once(self) -> None:
        """Conversation-aware vectors for an index made before them (once)."""
        if self.conn.execute("SELECT 1 FROM meta WHERE key='ctx_vectors'").fetchone():
            return
        with self.conn:
            self.conn.execute("BEGIN IMMEDIATE")
            if self.conn.execute("SELECT 1 FROM meta WHERE key='ctx_vectors'").fetchone():
                return
            fill_vectors(self.conn)
            self.conn.execute("INSERT OR REPLACE INTO meta VALUES('ctx_vectors', '1')")
            self.conn.execute(
                "INSERT INTO meta(key, value) VALUES('vec_version', '1') "
                "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
            )

    def record_file(self, rel_path: str, kind: str, mtime_ns: int, size: int) -> None:
        with self.conn:
            self.conn.execute(
                "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?)", (rel_path, kind, mtime_ns, size)
            )

    def record_dir(self, rel_path: str, mtime_ns: int) -> None:
        with self.conn:
            self.conn.execute("INSERT OR REPLACE INTO dirs VALUES (?, ?)", (rel_path, mtime_ns))

    def forget_dir(self, rel_path: str) -> None:
        with self.conn:
            self.conn.execute("DELETE FROM dirs WHERE path = ?", (rel_path,))

    def record_access(self, doc_id: str, when: float) -> None:
        with self.conn:
            self.conn.execute(
                "UPDATE docs SET access_count = access_count + 1, accessed = ? WHERE doc_id = ?",
                (when, doc_id),
            )

    def clear(self) -> None:
        """Drop every document (used by a full rebuild)."""
        with self.conn:
            for table in ("docs", "tags", "links", "files", "dirs", "vectors", "ctx_vectors"):
                self.conn.execute(f"DELETE FROM {table}")
            self.conn.execute("INSERT INTO docs_fts(docs_fts) VALUES('delete-all')")
            # A new version makes every process's matrix cache reload (now empty).
            self.conn.execute(
                "INSERT INTO meta(key, value) VALUES('vec_version', '1') "
                "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
            )
        self.vectors = ExactVectors(self.conn, self.vectors_dim)

    @property
    def vectors_dim(self) -> int:
        return self.embedder.dim if self.embedder is not None else 384

    # -- query embeddings --------------------------------------------------------------
    def query_vector(self, text: str) -> Vector:
        """The embedding of a search query. The last `QUERY_CACHE_SIZE` queries
        are kept (read-only), so an agent asking the same thing again skips the
        model, which is the largest share of one hybrid search."""
        if self.embedder is None:
            raise RuntimeError("query_vector needs an embedder (keyword-only index)")
        with self._query_lock:
            cached = self._query_vectors.get(text)
            if cached is not None:
                self._query_vectors.move_to_end(text)
                return cached
        vec = np.array(embed_query(self.embedder, text), dtype=np.float32)
        vec.flags.writeable = False
        with self._query_lock:
            self._query_vectors[text] = vec
            self._query_vectors.move_to_end(text)
            while len(self._query_vectors) > QUERY_CACHE_SIZE:
                self._query_vectors.popitem(last=False)
        return vec

    def query_vector_soon(self, text: str) -> Future[Vector]:
        """`query_vector` started on a worker thread, for the caller to overlap
        with other work (a cached vector comes back as a finished future)."""
        with self._query_lock:
            cached = self._query_vectors.get(text)
        if cached is not None:
            done: Future[Vector] = Future()
            done.set_result(cached)
            return done
        return embed_pool().submit(self.query_vector, text)

    # -- reads ---------------------------------------------------------------------
    def files(self, kind: str) -> dict[str, tuple[int, int]]:
        rows = self.conn.execute("SELECT path, mtime_ns, size FROM files WHERE kind=?", (kind,))
        return {p: (m, s) for p, m, s in rows}

    def files_under(self, prefix: str) -> dict[str, tuple[int, int]]:
        rows = self.conn.execute(
            "SELECT path, mtime_ns, size FROM files WHERE path >= ? AND path < ?",
            (prefix, prefix + "\uffff"),
        )
        return {p: (m, s) for p, m, s in rows}

    def dirs(self) -> dict[str, int]:
        return dict(self.conn.execute("SELECT path, mtime_ns FROM dirs").fetchall())

    def get(self, doc_id: str) -> Row | None:
        r = self.conn.execute(f"{SELECT_ROW} WHERE doc_id = ?", (doc_id,)).fetchone()
        return Row.from_sql(r) if r else None

    def rows(self, rowids: Sequence[int]) -> dict[int, Row]:
        out: dict[int, Row] = {}
        ids = list(rowids)
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            q = f"{SELECT_ROW} WHERE rowid IN ({','.join('?' * len(part))})"
            for r in self.conn.execute(q, part):
                out[r[0]] = Row.from_sql(r)
        return out

    def query(
        self, where: str, params: Sequence[Any], *, order: str = "", limit: int = 100
    ) -> list[Row]:
        """Rows matching a WHERE clause built by this package (never user SQL)."""
        sql = f"{SELECT_ROW} WHERE {where} {order} LIMIT ?"
        return [Row.from_sql(r) for r in self.conn.execute(sql, (*params, limit))]

    def links(self, doc_id: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        """(outgoing [(type, dst)], incoming [(type, src)])."""
        out = self.conn.execute("SELECT type, dst FROM links WHERE src=?", (doc_id,)).fetchall()
        inc = self.conn.execute("SELECT type, src FROM links WHERE dst=?", (doc_id,)).fetchall()
        return [(r[0], r[1]) for r in out], [(r[0], r[1]) for r in inc]

    def vector_of(self, rowid: int) -> Vector | None:
        r = self.conn.execute("SELECT vec FROM vectors WHERE rowid=?", (rowid,)).fetchone()
        return np.frombuffer(r[0], dtype=np.float32) if r else None

    def count(self, kind: str | None = None) -> int:
        if kind is None:
            return int(self.conn.execute("SELECT count(*) FROM docs").fetchone()[0])
        return int(
            self.conn.execute("SELECT count(*) FROM docs WHERE kind=?", (kind,)).fetchone()[0]
        )
