"""Where a search's candidates come from: the `Candidates` interface every
backend implements, and `LocalCandidates`, the SQLite index's.

A backend answers four questions for one query, and `search.rank` does the
rest (fusion, the signals, diversity) the same way for all of them:
- `keyword(terms, n, params)`: the best `n` row keys by BM25 for any of the
  terms, `(key, score)` best first;
- `dense(n)`: the best `n` by cosine to the query's vector (the backend starts
  embedding the query when it is made, to overlap it with the keyword search);
  [] in keyword-only mode;
- `mode`: "hybrid", or "keyword-only" and the reason;
- `pool(keys, neighbours=, vectors=)`: the rows of the fused pool, each turn's
  conversation neighbours (previous and next) and the vectors MMR compares.

Row keys are the backend's: the SQLite rowid; in PostgreSQL a chunk's `seq`,
negative for a note's or profile fact's row (`memagent.postgres.chunks`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import numpy.typing as npt

from memagent.core import InvalidInput
from memagent.index.filters import Filters
from memagent.index.sqlite import Index, Row, fts_rank

if TYPE_CHECKING:
    from memagent.index.params import SearchParams

Vector = npt.NDArray[np.float32]
Listing = list[tuple[int, float]]
"""Candidates as (row key, raw score), best first."""


@dataclass
class Pool:
    """What ranking needs of the fused pool."""

    rows: dict[int, Row]
    near: dict[int, list[int]] = field(default_factory=dict)
    """Each turn's previous and next live turn of its conversation (row keys)."""
    vectors: Mapping[int, Vector] | None = None
    """The vectors MMR compares (None: not asked for, or keyword-only)."""


class Candidates(Protocol):
    """One backend's side of one search (module doc)."""

    @property
    def mode(self) -> str: ...

    def keyword(self, terms: Sequence[str], n: int, params: SearchParams) -> Listing: ...

    def dense(self, n: int) -> Listing: ...

    def pool(self, keys: list[int], *, neighbours: bool, vectors: bool) -> Pool: ...


def _quoted(terms: Sequence[str]) -> str:
    return " OR ".join('"' + t.replace('"', "") + '"' for t in terms)


def fts_query(terms: Sequence[str], *, context: bool | set[str] = True) -> str:
    """The FTS5 query: any of the terms; searched in the turns' context as well
    as their own words and tags if `context` is True (or, a set, for those terms
    in it), else in the own words and tags only."""
    if context is True:
        return _quoted(terms)
    own = [t for t in terms if context is False or t not in context]
    anywhere = [t for t in terms if t not in own]
    parts = ([f"{{content tags}} : ({_quoted(own)})"] if own else []) + (
        [_quoted(anywhere)] if anywhere else []
    )
    return " OR ".join(parts)


def context_terms(index: Index, terms: Sequence[str], max_docs: int) -> set[str]:
    """The terms said in the own words of at most `max_docs` documents: those
    worth matching in the turns' context. A word said in many turns says little
    about which exchange a question means, and its context matches would be
    many more rows to rank (the cost of FTS5 grows with the rows that match).
    Each count stops at `max_docs` + 1 rows, so it costs little."""
    out: set[str] = set()
    for t in terms:
        own = f'{{content tags}} : "{t.replace(chr(34), "")}"'
        found = index.conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM docs_fts WHERE docs_fts MATCH ? LIMIT ?)",
            (own, max_docs + 1),
        ).fetchone()[0]
        if found <= max_docs:
            out.add(t)
    return out


def keyword_search(
    index: Index, terms: Sequence[str], filters: Filters, n: int, p: SearchParams
) -> Listing:
    """The best `n` rows by BM25 (FTS5) matching any of `terms`, filtered."""
    if not terms:
        return []
    where, params = filters.sql("d")
    context: bool | set[str] = False
    if p.context_weight > 0:
        context = context_terms(index, terms, p.context_max_docs)
    match = fts_query(terms, context=context)
    rank = fts_rank(p.context_weight)
    if filters.narrowing:
        sql = (
            "SELECT f.rowid, -f.rank AS s FROM docs_fts f "
            "JOIN docs d ON d.rowid = f.rowid WHERE docs_fts MATCH ? AND f.rank MATCH ? "
            f"AND {where} ORDER BY f.rank LIMIT ?"
        )
        args: tuple[Any, ...] = (match, rank, *params, n)
    else:
        # FTS5 ranks fastest on its own; soft-deleted rows are dropped afterwards
        # (over-fetching a little), which keeps p95 at 10^6 documents in bounds.
        sql = (
            "SELECT f.rowid, f.s FROM (SELECT rowid, -rank AS s FROM docs_fts "
            "WHERE docs_fts MATCH ? AND rank MATCH ? ORDER BY rank LIMIT ?) f "
            f"JOIN docs d ON d.rowid = f.rowid WHERE {where} ORDER BY f.s DESC LIMIT ?"
        )
        args = (match, rank, n + 16, *params, n)
    try:
        rows = index.conn.execute(sql, args).fetchall()
    except sqlite3.OperationalError as exc:
        raise InvalidInput(f"query could not be searched: {exc}") from exc
    return [(int(r), float(s)) for r, s in rows]


def dense_search(index: Index, qv: Vector, filters: Filters, n: int) -> Listing:
    """The best `n` rows by cosine among those the filters allow.

    The vector index knows nothing of filters, so the best rows overall are
    fetched first (a few more than `n`; four times as many under a narrowing
    filter) and checked in SQL. When at least `n` pass, or the store holds no
    more, they are exactly the best `n` allowed rows. Only otherwise (a selective
    filter, or many soft-deleted rows on top) is the whole allowed set read and
    searched: reading it costs ~0.7 ms per thousand rows.
    """
    where, params = filters.sql("docs")
    want = 4 * n if filters.narrowing else n + 16
    found = index.vectors.search(qv, want)
    if not found:
        return []
    ids = [r for r, _ in found]
    keep: set[int] = set()
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        # NOT INDEXED: look the rows up by rowid, never scan a filter's index.
        marks = ",".join("?" * len(part))
        sql = f"SELECT rowid FROM docs NOT INDEXED WHERE rowid IN ({marks}) AND {where}"
        keep.update(r[0] for r in index.conn.execute(sql, [*part, *params]))
    hits = [(r, s) for r, s in found if r in keep]
    if len(hits) >= n or len(found) < want:
        return hits[:n]
    allowed = np.fromiter(
        (r[0] for r in index.conn.execute(f"SELECT rowid FROM docs WHERE {where}", params)),
        dtype=np.int64,
    )
    return index.vectors.search(qv, n, allowed)


def neighbours(index: Index, rowids: list[int]) -> dict[int, list[int]]:
    """The previous and next document of the same conversation, for each rowid."""
    return {r: [x for x in pn if x is not None] for r, pn in index.neighbours(rowids).items()}


class LocalCandidates:
    """`Candidates` from the SQLite index (FTS5 and the vector matrix).

    Made for one query: the query's embedding starts on a worker thread at once
    (when the index has vectors), and while it is still running `dense` first
    reads the keyword candidates' rows, so the wait is not lost; each row and
    its neighbours are read once however often they are asked for."""

    def __init__(
        self,
        index: Index,
        query: str,
        filters: Filters,
        keyword_only_reason: str | None = None,
    ) -> None:
        self.index = index
        self.filters = filters
        hybrid = index.embedder is not None and len(index.vectors) > 0
        self._vector: Future[Vector] | None = index.query_vector_soon(query) if hybrid else None
        reason = f" ({keyword_only_reason})" if keyword_only_reason else ""
        self._mode = "hybrid" if hybrid else f"keyword-only{reason}"
        self._first: Listing | None = None
        self._read: set[int] = set()
        self._rows: dict[int, Row] = {}
        self._near: dict[int, list[int]] = {}
        self._with_near: bool | None = None

    @property
    def mode(self) -> str:
        return self._mode

    def keyword(self, terms: Sequence[str], n: int, params: SearchParams) -> Listing:
        found = keyword_search(self.index, terms, self.filters, n, params)
        if self._first is None:
            self._first = found
            self._with_near = params.neighbour_weight > 0
        return found

    def dense(self, n: int) -> Listing:
        if self._vector is None:
            return []
        if not self._vector.done() and self._first:
            # Still embedding: read what ranking needs of the keyword candidates now;
            # after fusion only the rest of the pool is read.
            self._fetch([r for r, _ in self._first], bool(self._with_near))
        return dense_search(self.index, self._vector.result(), self.filters, n)

    def pool(self, keys: list[int], *, neighbours: bool, vectors: bool) -> Pool:
        self._fetch(keys, neighbours)
        return Pool(
            rows={r: self._rows[r] for r in keys if r in self._rows},
            near={r: self._near[r] for r in keys if r in self._near},
            vectors=self.index.vectors.get(keys) if vectors and self._vector is not None else None,
        )

    def _fetch(self, rowids: list[int], with_neighbours: bool) -> None:
        todo = [r for r in rowids if r not in self._read]
        if not todo:
            return
        self._rows.update(self.index.rows(todo))
        if with_neighbours:
            self._near.update(neighbours(self.index, todo))
        self._read.update(todo)
