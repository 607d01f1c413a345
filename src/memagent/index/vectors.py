"""Vector search behind a small interface, so an ANN library can take over when
it pays. Today: exact cosine search with numpy over an in-memory matrix.

The matrix is loaded from the index's float32 blobs once and then kept up to
date by the calls that change vectors, so a query never re-reads every blob.
A version number stored in the index tells a process when another process has
changed the vectors, and only then is the matrix reloaded.
"""

from __future__ import annotations

import sqlite3
from typing import Protocol

import numpy as np
import numpy.typing as npt
from threadpoolctl import ThreadpoolController

Vector = npt.NDArray[np.float32]
# A matrix-vector product is memory-bound: extra BLAS threads only spin, and on a
# small shared machine they starve the embedder (measured 5x slower queries).
_BLAS = ThreadpoolController()


class VectorSearch(Protocol):
    """Nearest neighbours by cosine similarity over unit vectors keyed by rowid."""

    def upsert(self, rowids: list[int], vectors: Vector) -> None: ...

    def remove(self, rowids: list[int]) -> None: ...

    def search(
        self, query: Vector, k: int, allowed: npt.NDArray[np.int64] | None = None
    ) -> list[tuple[int, float]]: ...

    def __len__(self) -> int: ...


class ExactVectors:
    """Exact search: one matrix product per query. O(n·d), fine to ~10^6 rows.

    Rows live in a buffer with spare capacity, so adding one vector is amortised
    O(1) (no copy of the whole matrix per insert). Searching within an `allowed`
    set gathers just those rows when the set is small, so a bounded candidate
    set costs the same whatever the store size.
    """

    def __init__(self, conn: sqlite3.Connection, dim: int) -> None:
        self._conn = conn
        self.dim = dim
        self._ids: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self._buf: Vector = np.zeros((0, dim), dtype=np.float32)
        self._n = 0
        self._pos: dict[int, int] = {}
        self._version: int | None = None

    # -- persistence -----------------------------------------------------------
    def _stored_version(self) -> int:
        row = self._conn.execute("SELECT value FROM meta WHERE key='vec_version'").fetchone()
        return int(row[0]) if row else 0

    def _bump_only(self) -> None:
        self._conn.execute(
            "INSERT INTO meta(key, value) VALUES('vec_version', '1') "
            "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
        )

    def _bump(self) -> None:
        self._conn.execute(
            "INSERT INTO meta(key, value) VALUES('vec_version', '1') "
            "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
        )
        self._version = self._stored_version()

    def _ensure_loaded(self) -> None:
        version = self._stored_version()
        if self._version == version:
            return
        rows = self._conn.execute("SELECT rowid, vec FROM vectors ORDER BY rowid").fetchall()
        n = len(rows)
        cap = max(16, int(n * 1.25))
        self._ids = np.zeros(cap, dtype=np.int64)
        self._buf = np.zeros((cap, self.dim), dtype=np.float32)
        if rows:
            self._ids[:n] = [r[0] for r in rows]
            self._buf[:n] = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(
                n, self.dim
            )
        self._n = n
        self._pos = {int(r): i for i, r in enumerate(self._ids[:n])}
        self._version = version

    def _grow(self, need: int) -> None:
        if need <= len(self._ids):
            return
        cap = max(need, int(len(self._ids) * 1.5) + 16)
        ids = np.zeros(cap, dtype=np.int64)
        buf = np.zeros((cap, self.dim), dtype=np.float32)
        ids[: self._n] = self._ids[: self._n]
        buf[: self._n] = self._buf[: self._n]
        self._ids, self._buf = ids, buf

    # -- VectorSearch ------------------------------------------------------------
    def _cache_current(self) -> bool:
        """Whether the in-memory matrix is loaded and up to date. Writes never
        load it: only a search does, so a writer-only process stays small."""
        return self._version is not None and self._version == self._stored_version()

    def upsert(self, rowids: list[int], vectors: Vector) -> None:
        if not rowids:
            return
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self._conn.executemany(
            "INSERT OR REPLACE INTO vectors(rowid, vec) VALUES (?, ?)",
            [(r, vectors[i].tobytes()) for i, r in enumerate(rowids)],
        )
        if not self._cache_current():
            self._version = None
            self._bump_only()
            return
        self._grow(self._n + len(rowids))
        for i, r in enumerate(rowids):
            pos = self._pos.get(r)
            if pos is None:
                pos = self._n
                self._n += 1
                self._pos[r] = pos
                self._ids[pos] = r
            self._buf[pos] = vectors[i]
        self._bump()

    def remove(self, rowids: list[int]) -> None:
        if not rowids:
            return
        cur = self._conn.executemany("DELETE FROM vectors WHERE rowid = ?", [(r,) for r in rowids])
        if cur.rowcount == 0:
            return
        if not self._cache_current():
            self._version = None
            self._bump_only()
            return
        for r in rowids:
            pos = self._pos.pop(r, None)
            if pos is None:
                continue
            last = self._n - 1
            if pos != last:  # move the last row into the hole: O(1)
                moved = int(self._ids[last])
                self._ids[pos] = moved
                self._buf[pos] = self._buf[last]
                self._pos[moved] = pos
            self._n = last
        self._bump()

    def search(
        self, query: Vector, k: int, allowed: npt.NDArray[np.int64] | None = None
    ) -> list[tuple[int, float]]:
        if k <= 0:
            return []
        if allowed is not None and len(allowed) <= 5000 and not self._cache_current():
            # A small candidate set in a process without the matrix (one CLI call):
            # read just those blobs rather than loading every vector.
            return self._search_blobs(query, k, allowed)
        self._ensure_loaded()
        if self._n == 0:
            return []
        rowids, matrix = self._ids[: self._n], self._buf[: self._n]
        if allowed is not None:
            if len(allowed) * 8 < self._n:
                pos = [p for p in (self._pos.get(int(r)) for r in allowed) if p is not None]
                idx = np.array(pos, dtype=np.int64)
                rowids, matrix = rowids[idx], matrix[idx]
            else:
                mask = np.isin(rowids, allowed)
                rowids, matrix = rowids[mask], matrix[mask]
            if len(rowids) == 0:
                return []
        with _BLAS.limit(limits=1, user_api="blas"):
            sims = matrix @ np.asarray(query, dtype=np.float32)
        k = min(k, len(sims))
        top = np.argpartition(-sims, k - 1)[:k]
        top = top[np.argsort(-sims[top])]
        return [(int(rowids[i]), float(sims[i])) for i in top]

    def _search_blobs(
        self, query: Vector, k: int, allowed: npt.NDArray[np.int64]
    ) -> list[tuple[int, float]]:
        ids = [int(r) for r in allowed]
        rows: list[tuple[int, bytes]] = []
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            sql = f"SELECT rowid, vec FROM vectors WHERE rowid IN ({','.join('?' * len(part))})"
            rows += self._conn.execute(sql, part).fetchall()
        if not rows:
            return []
        matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(
            len(rows), self.dim
        )
        sims = matrix @ np.asarray(query, dtype=np.float32)
        order = np.argsort(-sims)[:k]
        return [(rows[i][0], float(sims[i])) for i in order]

    def __len__(self) -> int:
        self._ensure_loaded()
        return self._n
