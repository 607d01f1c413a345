"""The chunk store on PostgreSQL: the same `ChunkStore` (validation, chunking,
auto-linking, ranking), with rows instead of files and SQL instead of the
SQLite index.

Search: keyword candidates from `tsvector` ranked by BM25 (`bm25.py`), dense
candidates from pgvector (HNSW, cosine), given to the one ranking every backend
shares (`memagent.index.rank`: fusion, the signals, diversity) through the
`Candidates` interface (`PgCandidates`). A
conversation turn carries its neighbours' words and is searched by a vector
mixed with theirs, as in the local index (`context.py`): kept right on every
write and delete, in the write's transaction.
Writes of one user are serialised by an advisory transaction lock (the twin of
the home's file lock) and committed before the call returns.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from typing import Any

import numpy as np
import numpy.typing as npt

from memagent.core import Config, InvalidInput, MemagentError, NotFound, OpRecord
from memagent.core.jsontext import JsonObject
from memagent.embeddings import embed_query
from memagent.index import (
    Filters,
    Hit,
    Pool,
    QueryFacts,
    Row,
    SearchParams,
    SyncReport,
    check_query,
    rank,
)
from memagent.index.candidates import Listing
from memagent.index.documents import chunk_doc
from memagent.index.filters import PostgresFilterSQL
from memagent.index.sqlite import embed_pool
from memagent.memory.chunks.model import Chunk, check_id, chunk_rel_path
from memagent.memory.chunks.store import ACTOR, ChunkStore, Progress
from memagent.postgres import context as pgcontext
from memagent.postgres import docs as pgdocs
from memagent.postgres.bm25 import bm25, context_lexemes
from memagent.postgres.db import Database
from memagent.postgres.ops import PgOpsLog, digest, json_bytes
from memagent.postgres.vectors import parse_vector, unpack_vector, vector_text

DIM = 384
EXACT_MAX_ROWS = 20_000
"""Users with at most this many vectors get exact dense top-k (see `_dense`)."""


def _exact_sql(where: str, gate: str = "") -> str:
    """The user's exact dense top-n as (seq, cosine distance), nearest first.
    `OFFSET 0` keeps the subquery whole, so each row's distance is computed once
    (selected and sorted on); `+ 0`: an ordering the HNSW index cannot serve,
    so the planner scans the user's rows (through the btree on `user_id`)."""
    return (
        "SELECT s.seq, s.d FROM (SELECT c.seq, c.search_vec <=> %s::vector AS d FROM chunks c "
        f"WHERE c.user_id = %s AND c.search_vec IS NOT NULL AND {where}{gate} OFFSET 0) s "
        "ORDER BY s.d + 0, s.seq LIMIT %s"
    )


_ROW_COLS = (
    "seq, id, content, tags, type, created, created_at, conversation_id, session_id, "
    "scope_user_id, agent_id, speaker, deleted, access_count, accessed, source"
)
"""What a `Row` is made of (not the chunk's JSON: its path follows from its id)."""
_NEAR_COLS = (
    "(SELECT p.seq FROM chunks p WHERE p.user_id = c.user_id "
    "AND p.conversation_id = c.conversation_id AND NOT p.deleted "
    "AND (p.created, p.seq) < (c.created, c.seq) ORDER BY p.created DESC, p.seq DESC LIMIT 1), "
    "(SELECT x.seq FROM chunks x WHERE x.user_id = c.user_id "
    "AND x.conversation_id = c.conversation_id AND NOT x.deleted "
    "AND (x.created, x.seq) > (c.created, c.seq) ORDER BY x.created, x.seq LIMIT 1)"
)
"""A chunk's previous and next live turn of its conversation (NULL without one),
as `context.neighbours` finds them, read with the pool's rows."""


def _row(r: tuple[Any, ...]) -> Row:
    chunk_id = r[1]
    return Row(
        rowid=int(r[0]),
        doc_id=chunk_id,
        kind="chunk",
        path=chunk_rel_path(chunk_id),
        content=r[2],
        tags=list(r[3]),
        type=r[4],
        created=float(r[5]),
        created_at=r[6],
        conversation_id=r[7],
        session_id=r[8],
        user_id=r[9],
        agent_id=r[10],
        speaker=r[11],
        deleted=bool(r[12]),
        access_count=int(r[13]),
        accessed=r[14],
        source=r[15],
    )


CHUNKS_SQL = PostgresFilterSQL(table_kinds=("chunk",))


def filter_sql(f: Filters, alias: str = "c") -> tuple[str, list[Any]]:
    """`Filters` as a WHERE fragment over the chunks table (the user is added by
    the caller): the one filter builder, in its PostgreSQL dialect."""
    return f.sql(alias, CHUNKS_SQL)


class PgLinkSource:
    """`LinkSource` over one user's chunks in PostgreSQL (inside a write, the
    questions run in that write's transaction)."""

    def __init__(self, db: Database, user: str) -> None:
        self.db = db
        self.user = user

    def _rows(self, sql: str, params: tuple[Any, ...]) -> list[Any]:
        rows: list[Any] = self.db.run(self.user, lambda c: c.execute(sql, params).fetchall())
        return rows

    def _ids(self, sql: str, params: tuple[Any, ...]) -> list[str]:
        return [r[0] for r in self._rows(sql, params)]

    def conversation_chunks(self, conversation_id: str, created: float, limit: int) -> list[str]:
        return self._ids(
            "SELECT id FROM chunks WHERE user_id = %s AND conversation_id = %s "
            "AND created <= %s AND NOT deleted ORDER BY created DESC, seq DESC LIMIT %s",
            (self.user, conversation_id, created, limit),
        )

    def previous_chunks(
        self, created: float, window_s: float, user_id: str | None, limit: int
    ) -> list[str]:
        return self._ids(
            "SELECT id FROM chunks WHERE user_id = %s AND NOT deleted AND created <= %s "
            "AND created >= %s AND scope_user_id IS NOT DISTINCT FROM %s "
            "ORDER BY created DESC, seq DESC LIMIT %s",
            (self.user, created, created - window_s, user_id, limit),
        )

    def tagged_chunks(self, tag: str, limit: int) -> list[str]:
        return self._ids(
            "SELECT id FROM chunks WHERE user_id = %s AND tags @> ARRAY[%s] AND NOT deleted "
            "ORDER BY seq DESC LIMIT %s",
            (self.user, tag, limit),
        )

    def similar_chunks(
        self, vector: npt.NDArray[np.float32], limit: int, window: int
    ) -> list[tuple[str, float]]:
        rows = self._rows(
            "SELECT id, 1 - (embedding <=> %s::vector) AS s FROM ("
            "  SELECT id, embedding FROM chunks WHERE user_id = %s AND NOT deleted "
            "  AND embedding IS NOT NULL ORDER BY created DESC, seq DESC LIMIT %s) r "
            "ORDER BY embedding <=> %s::vector LIMIT %s",
            (vector_text(vector), self.user, window, vector_text(vector), limit),
        )
        return [(r[0], float(r[1])) for r in rows]


class PgChunkStore(ChunkStore):
    """One user's chunks in a shared PostgreSQL database."""

    def __init__(
        self,
        db: Database,
        user: str,
        *,
        config: Config | None = None,
        embeddings: bool | None = None,
    ) -> None:
        self.db = db
        self.user = user
        self.ops = PgOpsLog(db, user)
        self._init_common(config or Config(), embeddings)
        if self.embedder is not None and self.embedder.dim != DIM:
            raise MemagentError(
                f"the PostgreSQL schema stores {DIM}-dimensional vectors; "
                f"the embedder makes {self.embedder.dim}"
            )

    # -- no derived index here ---------------------------------------------------------
    @property
    def index(self) -> Any:
        raise InvalidInput("the PostgreSQL backend has no local index (the database is it)")

    def sync(self, progress: Progress | None = None) -> SyncReport:
        return SyncReport()

    def rebuild(self, progress: Progress | None = None) -> SyncReport:
        return SyncReport()

    def close(self) -> None:
        """The database is shared (closed by its owner)."""

    # -- backend hooks -------------------------------------------------------------------
    @contextmanager
    def _lock(self) -> Iterator[None]:
        with self.db.locked(self.user, "chunks"):
            yield

    def _link_source(self) -> PgLinkSource:
        return PgLinkSource(self.db, self.user)

    def _read(self, chunk_id: str) -> Chunk:
        check_id(chunk_id)

        def go(conn: Any) -> Any:
            return conn.execute(
                "SELECT data FROM chunks WHERE user_id = %s AND id = %s", (self.user, chunk_id)
            ).fetchone()

        row = self.db.run(self.user, go)
        if row is None:
            raise NotFound(f"no chunk {chunk_id}")
        return Chunk.model_validate(row[0])

    def _vector(self, chunk_id: str) -> npt.NDArray[np.float32] | None:
        def go(conn: Any) -> Any:
            return conn.execute(
                "SELECT embedding::text FROM chunks WHERE user_id = %s AND id = %s",
                (self.user, chunk_id),
            ).fetchone()

        row = self.db.run(self.user, go)
        vec = parse_vector(row[0]) if row is not None else None
        return vec[None, :] if vec is not None else None

    def op_records(self, mentioning: str | None = None) -> list[OpRecord]:
        return self.ops.read(actor=ACTOR, mentioning=mentioning)

    def _store(
        self,
        chunk: Chunk,
        *,
        op: str,
        vec: npt.NDArray[np.float32] | None,
        meta: JsonObject | None = None,
    ) -> None:
        data = chunk.model_dump(mode="json")
        rel = chunk.rel_path
        doc = chunk_doc(rel, data)
        assert doc is not None
        if vec is None and self.embedder is not None:
            vec = self.embedder.embed([chunk.content])
        emb = vector_text(vec[0]) if vec is not None else None
        body = json_bytes(data)
        with self.db.transaction(self.user) as conn:
            old = conn.execute(
                "SELECT data, seq FROM chunks WHERE user_id = %s AND id = %s FOR UPDATE",
                (self.user, chunk.id),
            ).fetchone()
            touched = pgcontext.around(conn, self.user, old[1] if old is not None else None)
            values = (
                json.dumps(data, ensure_ascii=False), doc.content, doc.tags, doc.type,
                doc.created, doc.created_at, doc.conversation_id, doc.session_id, doc.user_id,
                doc.agent_id, doc.speaker, doc.deleted, doc.access_count, doc.accessed,
                json.dumps(doc.source, ensure_ascii=False) if doc.source is not None else None,
                doc.content, " ".join(doc.tags), emb,
            )  # fmt: skip
            if old is None:
                seq = conn.execute(
                    "INSERT INTO chunks(user_id, id, data, content, tags, type, created, "
                    "created_at, conversation_id, session_id, scope_user_id, agent_id, speaker, "
                    "deleted, access_count, accessed, source, tsv, embedding) VALUES "
                    "(%s, %s, %s::jsonb, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, "
                    "%s::jsonb, setweight(to_tsvector('english', %s), 'A') || "
                    "setweight(to_tsvector('english', %s), 'B'), %s::vector) RETURNING seq",
                    (self.user, chunk.id, *values),
                ).fetchone()
            else:
                seq = conn.execute(
                    "UPDATE chunks SET data = %s::jsonb, content = %s, tags = %s, type = %s, "
                    "created = %s, created_at = %s, conversation_id = %s, session_id = %s, "
                    "scope_user_id = %s, agent_id = %s, speaker = %s, deleted = %s, "
                    "access_count = %s, accessed = %s, source = %s::jsonb, "
                    "tsv = setweight(to_tsvector('english', %s), 'A') || "
                    "setweight(to_tsvector('english', %s), 'B'), embedding = %s::vector "
                    "WHERE user_id = %s AND id = %s RETURNING seq",
                    (*values, self.user, chunk.id),
                ).fetchone()
            # the turn's and its old and new neighbours' context (`context.py`)
            pgcontext.refresh(conn, self.user, [*touched, int(seq[0])])
            conn.execute(
                "DELETE FROM chunk_links WHERE user_id = %s AND src = %s", (self.user, chunk.id)
            )
            if doc.links:
                with conn.cursor() as cur:
                    cur.executemany(
                        "INSERT INTO chunk_links(user_id, src, dst, type) VALUES (%s, %s, %s, %s) "
                        "ON CONFLICT DO NOTHING",
                        [(self.user, chunk.id, dst, t) for t, dst in doc.links],
                    )
            self.ops.append(
                actor=ACTOR,
                op=op,
                path=rel,
                before=digest(json_bytes(old[0])) if old is not None else None,
                after=digest(body),
                meta={"id": chunk.id, **(meta or {})},
            )

    def _remove(self, chunk: Chunk) -> None:
        with self.db.transaction(self.user) as conn:
            at = conn.execute(
                "SELECT seq FROM chunks WHERE user_id = %s AND id = %s FOR UPDATE",
                (self.user, chunk.id),
            ).fetchone()
            touched = pgcontext.around(conn, self.user, at[0] if at is not None else None)
            old = conn.execute(
                "DELETE FROM chunks WHERE user_id = %s AND id = %s RETURNING data",
                (self.user, chunk.id),
            ).fetchone()
            if old is None:
                raise NotFound(f"no chunk {chunk.id}")
            pgcontext.refresh(conn, self.user, touched)
            conn.execute(
                "DELETE FROM chunk_links WHERE user_id = %s AND src = %s", (self.user, chunk.id)
            )
            self.ops.append(
                actor=ACTOR,
                op="delete",
                path=chunk.rel_path,
                before=digest(json_bytes(old[0])),
                after=None,
                meta={"id": chunk.id, "content": chunk.content},
            )

    def _links_of(self, chunk_id: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        def go(conn: Any) -> tuple[list[Any], list[Any]]:
            out = conn.execute(
                "SELECT type, dst FROM chunk_links WHERE user_id = %s AND src = %s",
                (self.user, chunk_id),
            ).fetchall()
            inc = conn.execute(
                "SELECT type, src FROM chunk_links WHERE user_id = %s AND dst = %s",
                (self.user, chunk_id),
            ).fetchall()
            return out, inc

        out, inc = self.db.run(self.user, go)
        return [(r[0], r[1]) for r in out], [(r[0], r[1]) for r in inc]

    def _list(self, filters: Filters, limit: int) -> list[Row]:
        where, params = filter_sql(filters)

        def go(conn: Any) -> list[Any]:
            return conn.execute(
                f"SELECT {_ROW_COLS} FROM chunks c WHERE c.user_id = %s AND {where} "
                "ORDER BY c.created DESC, c.seq DESC LIMIT %s",
                (self.user, *params, limit),
            ).fetchall()

        return [_row(r) for r in self.db.run(self.user, go)]

    def all_chunks(self) -> Iterator[Chunk]:
        """Every chunk of the user (soft-deleted too), oldest first: for export."""
        rows = self.db.run(
            self.user,
            lambda conn: conn.execute(
                "SELECT data FROM chunks WHERE user_id = %s ORDER BY created, seq", (self.user,)
            ).fetchall(),
        )
        for (data,) in rows:
            yield Chunk.model_validate(data)

    # -- search ----------------------------------------------------------------------------
    def _search(
        self, facts: QueryFacts, k: int, filters: Filters | None, params: SearchParams
    ) -> list[Hit]:
        check_query(facts.text, k)
        f = filters or Filters()
        where, wparams = filter_sql(f)  # a bad filter fails before anything starts
        # The query is embedded on a worker thread while the keyword SQL runs (as
        # the local index overlaps it with FTS5): onnxruntime and the socket wait
        # both release the GIL.
        embedder = self.embedder
        soon = embed_pool().submit(embed_query, embedder, facts.text) if embedder else None
        try:
            return self.db.run(
                self.user,
                lambda conn: rank(
                    PgCandidates(self, conn, f, where, wparams, soon), facts, k=k, params=params
                ),
            )
        finally:
            if soon is not None:
                soon.cancel()

    def _pool(
        self, conn: Any, pool: list[int], with_near: bool, with_vectors: bool
    ) -> tuple[dict[int, Row], dict[int, list[int]], dict[int, npt.NDArray[np.float32]]]:
        """What ranking needs of the pool, in one statement per table: the rows,
        each chunk's conversation neighbours (previous, next) and the vectors MMR
        compares (`search_vec`; a note's or fact's embedding), read in pgvector's
        binary form."""
        extra = (f", {_NEAR_COLS}" if with_near else "") + (
            ", vector_send(c.search_vec)" if with_vectors else ""
        )
        rows: dict[int, Row] = {}
        near: dict[int, list[int]] = {}
        vectors: dict[int, npt.NDArray[np.float32]] = {}
        if any(key > 0 for key in pool):
            cols = ", ".join(f"c.{col.strip()}" for col in _ROW_COLS.split(","))
            found = conn.execute(
                f"SELECT {cols}{extra} FROM chunks c WHERE c.user_id = %s AND c.seq = ANY(%s)",
                (self.user, pool),
            ).fetchall()
            width = len(_ROW_COLS.split(","))
            for r in found:
                seq = int(r[0])
                rows[seq] = _row(r)
                rest = r[width:]
                if with_near:
                    if r[7] is not None:  # conversation_id: only a turn has neighbours
                        near[seq] = [int(v) for v in rest[:2] if v is not None]
                    rest = rest[2:]
                if with_vectors and rest[0] is not None:
                    vec = unpack_vector(rest[0])
                    if vec is not None:
                        vectors[seq] = vec
        if any(key < 0 for key in pool):
            docs, doc_vectors = pgdocs.rows(conn, self.user, pool, with_vectors=with_vectors)
            rows.update(docs)
            vectors.update(doc_vectors)
        return rows, near, vectors

    def dense_candidates(
        self, vector: npt.NDArray[np.float32], n: int, filters: Filters | None = None
    ) -> list[tuple[int, float]]:
        """The user's `n` chunks nearest to `vector` as (seq, cosine similarity),
        nearest first: the dense half of search."""
        where, params = filter_sql(filters or Filters())
        return self.db.run(self.user, lambda conn: self._dense(conn, vector, where, params, n))

    def _dense(
        self,
        conn: Any,
        vector: npt.NDArray[np.float32],
        where: str,
        params: list[Any],
        n: int,
        *,
        text: str | None = None,
    ) -> list[tuple[int, float]]:
        """Exact per-user top-n for a user with at most `EXACT_MAX_ROWS` vectors (a
        scan of that user's rows through the btree on `user_id`; the HNSW graph
        is shared by all users and filters by user only after its scan, so it can
        return fewer than n of them, or miss their best). Bigger users go through
        HNSW (with iterative scans on pgvector 0.8+), and exactly again when it
        comes back short. `text`: the vector's `vector_text`, if the caller has it."""
        q = vector_text(vector) if text is None else text
        # One statement: the user's vectors counted (up to EXACT_MAX_ROWS + 1) and,
        # for a user no bigger than that, the exact top-n (skipped otherwise: a
        # one-time filter on the count).
        found = conn.execute(
            "WITH big AS MATERIALIZED (SELECT count(*) AS n FROM (SELECT 1 FROM chunks "
            "WHERE user_id = %s AND search_vec IS NOT NULL LIMIT %s) s) "
            "SELECT big.n, r.seq, r.d FROM big LEFT JOIN LATERAL "
            f"({_exact_sql(where, ' AND big.n <= %s')}) r ON true",
            (self.user, EXACT_MAX_ROWS + 1, q, self.user, *params, EXACT_MAX_ROWS, n),
        ).fetchall()
        if found[0][0] <= EXACT_MAX_ROWS:
            return [(int(r[1]), 1 - float(r[2])) for r in found if r[1] is not None]
        conn.execute("SELECT set_config('hnsw.ef_search', %s, true)", (str(min(max(n, 40), 1000)),))
        if self.db.iterative_scans:
            conn.execute("SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true)")
        rows = conn.execute(
            "SELECT c.seq, 1 - (c.search_vec <=> %s::vector) FROM chunks c "
            f"WHERE c.user_id = %s AND c.search_vec IS NOT NULL AND {where} "
            "ORDER BY c.search_vec <=> %s::vector LIMIT %s",
            (q, self.user, *params, q, n),
        ).fetchall()
        if len(rows) >= n:
            return sorted(((int(r[0]), float(r[1])) for r in rows), key=lambda x: -x[1])
        exact = conn.execute(_exact_sql(where), (q, self.user, *params, n)).fetchall()
        return [(int(r[0]), 1 - float(r[1])) for r in exact]

    def _keyword(
        self, conn: Any, terms: list[str], where: str, params: list[Any], n: int, p: SearchParams
    ) -> list[tuple[int, float]]:
        ctx: list[str] = []
        if p.context_weight > 0 and terms:
            ctx = context_lexemes(conn, self.user, terms, p.context_max_docs)
        return bm25(
            conn,
            "chunks",
            self.user,
            terms,
            where,
            params,
            n,
            alias="c",
            context=ctx,
            context_weight=p.context_weight,
        )


class PgCandidates:
    """`Candidates` of one user's search in PostgreSQL, inside one connection:
    keyword candidates by BM25 over the chunks and over the notes and profile
    facts (`search_docs`, negative keys) merged, dense ones from pgvector over
    both, and the pool's rows read in one statement per table (`_pool`)."""

    def __init__(
        self,
        store: PgChunkStore,
        conn: Any,
        filters: Filters,
        where: str,
        params: list[Any],
        vector: Future[npt.NDArray[np.float32]] | None,
    ) -> None:
        self.store, self.conn, self.filters = store, conn, filters
        self.where, self.params = where, params
        self._vector = vector
        reason = store.keyword_only_reason
        keyword_only = "keyword-only" + (f" ({reason})" if reason else "")
        self._mode = "hybrid" if vector is not None else keyword_only

    @property
    def mode(self) -> str:
        return self._mode

    def keyword(self, terms: Sequence[str], n: int, params: SearchParams) -> Listing:
        s, conn, used = self.store, self.conn, list(terms)
        chunks = s._keyword(conn, used, self.where, self.params, n, params)
        return pgdocs.merge(chunks, pgdocs.keyword(conn, s.user, used, self.filters, n), n)

    def dense(self, n: int) -> Listing:
        if self._vector is None:
            return []
        s, conn = self.store, self.conn
        qvec = self._vector.result()
        qtext = vector_text(qvec)  # formatted once for both tables
        return pgdocs.merge(
            s._dense(conn, qvec, self.where, self.params, n, text=qtext),
            pgdocs.dense(conn, s.user, qtext, self.filters, n),
            n,
        )

    def pool(self, keys: list[int], *, neighbours: bool, vectors: bool) -> Pool:
        want_vectors = vectors and self._vector is not None
        rows, near, vecs = self.store._pool(self.conn, keys, neighbours, want_vectors)
        return Pool(rows, near, vecs if want_vectors else None)
