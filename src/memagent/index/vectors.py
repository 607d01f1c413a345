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

Vector = npt.NDArray[np.float32]


class VectorSearch(Protocol):
    """Nearest neighbours by cosine similarity over unit vectors keyed by rowid."""

    def upsert(self, rowids: list[int], vectors: Vector) -> None: ...

    def remove(self, rowids: list[int]) -> None: ...

    def search(
        self, query: Vector, k: int, allowed: npt.NDArray[np.int64] | None = None
    ) -> list[tuple[int, float]]: ...

    def __len__(self) -> int: ...


class ExactVectors:
    """Exact search: one matrix product per query. O(n·d), fine to ~10^6 rows."""

    def __init__(self, conn: sqlite3.Connection, dim: int) -> None:
        self._conn = conn
        self.dim = dim
        self._rowids: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self._matrix: Vector = np.zeros((0, dim), dtype=np.float32)
        self._pos: dict[int, int] = {}
        self._version: int | None = None

    # -- persistence -----------------------------------------------------------
    def _stored_version(self) -> int:
        row = self._conn.execute("SELECT value FROM meta WHERE key='vec_version'").fetchone()
        return int(row[0]) if row else 0

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
        self._rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        if rows:
            self._matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(
                len(rows), self.dim
            )
        else:
            self._matrix = np.zeros((0, self.dim), dtype=np.float32)
        self._pos = {int(r): i for i, r in enumerate(self._rowids)}
        self._version = version

    # -- VectorSearch ------------------------------------------------------------
    def upsert(self, rowids: list[int], vectors: Vector) -> None:
        if not rowids:
            return
        self._ensure_loaded()
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self._conn.executemany(
            "INSERT OR REPLACE INTO vectors(rowid, vec) VALUES (?, ?)",
            [(r, vectors[i].tobytes()) for i, r in enumerate(rowids)],
        )
        new_ids: list[int] = []
        new_rows: list[Vector] = []
        matrix = self._matrix if self._matrix.flags.writeable else self._matrix.copy()
        for i, r in enumerate(rowids):
            pos = self._pos.get(r)
            if pos is None:
                new_ids.append(r)
                new_rows.append(vectors[i])
            else:
                matrix[pos] = vectors[i]
        if new_ids:
            start = len(self._rowids)
            matrix = np.vstack([matrix, np.stack(new_rows)])
            self._rowids = np.concatenate([self._rowids, np.array(new_ids, dtype=np.int64)])
            for j, r in enumerate(new_ids):
                self._pos[r] = start + j
        self._matrix = matrix
        self._bump()

    def remove(self, rowids: list[int]) -> None:
        if not rowids:
            return
        self._ensure_loaded()
        self._conn.executemany("DELETE FROM vectors WHERE rowid = ?", [(r,) for r in rowids])
        gone = [self._pos[r] for r in rowids if r in self._pos]
        if gone:
            keep = np.ones(len(self._rowids), dtype=bool)
            keep[gone] = False
            self._rowids = self._rowids[keep]
            self._matrix = self._matrix[keep]
            self._pos = {int(r): i for i, r in enumerate(self._rowids)}
        self._bump()

    def search(
        self, query: Vector, k: int, allowed: npt.NDArray[np.int64] | None = None
    ) -> list[tuple[int, float]]:
        self._ensure_loaded()
        if len(self._rowids) == 0 or k <= 0:
            return []
        rowids, matrix = self._rowids, self._matrix
        if allowed is not None:
            mask = np.isin(rowids, allowed)
            rowids, matrix = rowids[mask], matrix[mask]
            if len(rowids) == 0:
                return []
        sims = matrix @ np.asarray(query, dtype=np.float32)
        k = min(k, len(sims))
        top = np.argpartition(-sims, k - 1)[:k]
        top = top[np.argsort(-sims[top])]
        return [(int(rowids[i]), float(sims[i])) for i in top]

    def __len__(self) -> int:
        self._ensure_loaded()
        return len(self._rowids)
