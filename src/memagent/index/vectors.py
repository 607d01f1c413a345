"""Vector search behind a small interface, so an ANN library can take over when
it pays. Today: exact cosine search with numpy over an in-memory matrix.

The matrix is loaded from the index's float32 blobs once and then kept up to
date by the calls that change vectors, so a query never re-reads every blob.
A turn that has a conversation-aware vector (`ctx_vectors`, see `context`) is
searched by that one; its own (`vectors`, the embedder's output) is kept to mix
again when a neighbour changes. A version number stored in the index tells a
process when another process has changed the vectors, and only then is the
matrix reloaded.

Large stores are scanned in int8 first: a float32 matrix-vector product is
memory-bound (100k x 384 floats is 150 MB read per query, ~11 ms on one core),
so an int8 copy of the matrix (a quarter of the bytes, SIMD dot products from
`numkong`) picks the best few multiples of `k` rows and only those are scored
in float32. The answer is the float32 top `k` unless a row's int8 error
(~1e-3) exceeds the score gap between rank `k` and rank `4k`.
"""

from __future__ import annotations

import importlib
import sqlite3
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
from threadpoolctl import ThreadpoolController

Vector = npt.NDArray[np.float32]
# A matrix-vector product is memory-bound: extra BLAS threads only spin, and on a
# small shared machine they starve the embedder (measured 5x slower queries).
_BLAS = ThreadpoolController()

# Below this many rows the float32 product takes under ~1.5 ms: not worth a second pass.
QUANTIZE_MIN_ROWS = 10_000
# Rows re-scored in float32 per wanted result (and at least this many extra).
RESCORE_FACTOR = 4
RESCORE_EXTRA = 64
# `largest` partitions only the scores above a threshold read from every
# `_SAMPLE_STRIDE`-th score, when the array has at least this many.
_SAMPLE_MIN = 4096
_SAMPLE_STRIDE = 64


def largest(scores: npt.NDArray[np.float32], m: int) -> npt.NDArray[np.int64]:
    """The indices of the `m` largest `scores`, in no order: the set
    `np.argpartition` gives (ties at the boundary aside), without partitioning
    the whole array, which costs ~1 ms at 100k scores. A threshold taken from
    a strided sample (its best 3m/stride) keeps about three times `m` scores,
    and only those are partitioned (~0.1 ms). Exact for finite scores in any
    order: when fewer than `m` pass the threshold (or it is not finite), the
    whole array is partitioned instead."""
    n = len(scores)
    if m <= 0:
        return np.empty(0, dtype=np.int64)
    if m >= n:
        return np.arange(n, dtype=np.int64)
    if n >= _SAMPLE_MIN and m * _SAMPLE_STRIDE < n:
        sample = scores[::_SAMPLE_STRIDE]
        r = min(len(sample), -(-3 * m // _SAMPLE_STRIDE))
        cut = np.partition(sample, len(sample) - r)[len(sample) - r]
        if np.isfinite(cut):
            kept = np.flatnonzero(scores >= cut)
            if len(kept) >= m:
                sub = scores[kept]
                return kept[np.argpartition(sub, len(sub) - m)[len(sub) - m :]]
    return np.argpartition(scores, n - m)[n - m :].astype(np.int64)


# Each row's searchable vector: its conversation-aware one where it has one.
SEARCH_VECTORS = (
    "SELECT v.rowid, coalesce(c.vec, v.vec) FROM vectors v "
    "LEFT JOIN ctx_vectors c ON c.rowid = v.rowid"
)


_KERNEL: list[Any] = []


def int8_kernel() -> Any | None:
    """`numkong` (SIMD int8 dot products), or None when it is not installed.
    Imported on first use: only a large store's search needs it."""
    if not _KERNEL:
        try:
            _KERNEL.append(importlib.import_module("numkong"))
        except ImportError:
            _KERNEL.append(None)
    return _KERNEL[0]


def quantize(vectors: Vector) -> tuple[npt.NDArray[np.int8], Vector]:
    """Each row scaled so its largest component is +-127, rounded to int8, and
    the factor that takes the int8 row back (row ~= q8 * back)."""
    v = np.asarray(vectors, dtype=np.float32).reshape(-1, vectors.shape[-1])
    peak = np.abs(v).max(axis=1)
    back = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    q8 = np.rint(v / back[:, None]).clip(-127, 127).astype(np.int8)
    return q8, back


class VectorSearch(Protocol):
    """Nearest neighbours by cosine similarity over unit vectors keyed by rowid."""

    def upsert(self, rowids: list[int], vectors: Vector) -> None: ...

    def remove(self, rowids: list[int]) -> None: ...

    def set_rows(self, rowids: list[int], vectors: Vector) -> None: ...

    def search(
        self, query: Vector, k: int, allowed: npt.NDArray[np.int64] | None = None
    ) -> list[tuple[int, float]]: ...

    def get(self, rowids: list[int]) -> dict[int, Vector]: ...

    def __len__(self) -> int: ...


class ExactVectors:
    """Exact search: one matrix product per query. O(n·d), fine to ~10^6 rows.

    Rows live in a buffer with spare capacity, so adding one vector is amortised
    O(1) (no copy of the whole matrix per insert). Searching within an `allowed`
    set gathers just those rows when the set is small, so a bounded candidate
    set costs the same whatever the store size. From `quantize_min_rows` rows on
    (and with `numkong` installed) an int8 pass picks the rows that are then
    scored in float32 (see the module docstring).
    """

    def __init__(
        self, conn: sqlite3.Connection, dim: int, *, quantize_min_rows: int = QUANTIZE_MIN_ROWS
    ) -> None:
        self._conn = conn
        self.dim = dim
        self.quantize_min_rows = quantize_min_rows
        self._ids: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self._buf: Vector = np.zeros((0, dim), dtype=np.float32)
        self._q8: npt.NDArray[np.int8] = np.zeros((0, dim), dtype=np.int8)
        self._back: Vector = np.zeros(0, dtype=np.float32)
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
        rows = self._conn.execute(f"{SEARCH_VECTORS} ORDER BY v.rowid").fetchall()
        n = len(rows)
        cap = max(16, int(n * 1.25))
        self._ids = np.zeros(cap, dtype=np.int64)
        self._buf = np.zeros((cap, self.dim), dtype=np.float32)
        self._q8 = np.zeros((cap, self.dim), dtype=np.int8)
        self._back = np.zeros(cap, dtype=np.float32)
        if rows:
            self._ids[:n] = [r[0] for r in rows]
            self._buf[:n] = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(
                n, self.dim
            )
            for start in range(0, n, 65536):  # bounded temporaries
                end = min(n, start + 65536)
                self._q8[start:end], self._back[start:end] = quantize(self._buf[start:end])
        self._n = n
        self._pos = {int(r): i for i, r in enumerate(self._ids[:n])}
        self._version = version

    def _grow(self, need: int) -> None:
        if need <= len(self._ids):
            return
        cap = max(need, int(len(self._ids) * 1.5) + 16)
        ids = np.zeros(cap, dtype=np.int64)
        buf = np.zeros((cap, self.dim), dtype=np.float32)
        q8 = np.zeros((cap, self.dim), dtype=np.int8)
        back = np.zeros(cap, dtype=np.float32)
        ids[: self._n] = self._ids[: self._n]
        buf[: self._n] = self._buf[: self._n]
        q8[: self._n] = self._q8[: self._n]
        back[: self._n] = self._back[: self._n]
        self._ids, self._buf, self._q8, self._back = ids, buf, q8, back

    # -- VectorSearch ------------------------------------------------------------
    def _cache_current(self) -> bool:
        """Whether the in-memory matrix is loaded and up to date. Writes never
        load it: only a search does, so a writer-only process stays small."""
        return self._version is not None and self._version == self._stored_version()

    def _keeps_current(self) -> bool:
        """Whether a write should update the loaded matrix in place: it is loaded
        and current. If not, it is marked stale (the next search reloads it)."""
        if self._cache_current():
            return True
        self._version = None
        self._bump_only()
        return False

    def upsert(self, rowids: list[int], vectors: Vector) -> None:
        if not rowids:
            return
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self._conn.executemany(
            "INSERT OR REPLACE INTO vectors(rowid, vec) VALUES (?, ?)",
            [(r, vectors[i].tobytes()) for i, r in enumerate(rowids)],
        )
        self._place(rowids, vectors, append=True)

    def _place(self, rowids: list[int], vectors: Vector, *, append: bool) -> None:
        """Write `vectors` into the loaded matrix at `rowids`' rows (a row not in it
        is appended if `append`, else skipped); see `_keeps_current`."""
        if not self._keeps_current():
            return
        if append:
            self._grow(self._n + len(rowids))
        q8, back = quantize(vectors)
        for i, r in enumerate(rowids):
            pos = self._pos.get(r)
            if pos is None:
                if not append:
                    continue
                pos = self._n
                self._n += 1
                self._pos[r] = pos
                self._ids[pos] = r
            self._buf[pos] = vectors[i]
            self._q8[pos] = q8[i]
            self._back[pos] = back[i]
        self._bump()

    def remove(self, rowids: list[int]) -> None:
        if not rowids:
            return
        self._conn.executemany("DELETE FROM ctx_vectors WHERE rowid = ?", [(r,) for r in rowids])
        cur = self._conn.executemany("DELETE FROM vectors WHERE rowid = ?", [(r,) for r in rowids])
        if cur.rowcount == 0:
            return
        if not self._keeps_current():
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
                self._q8[pos] = self._q8[last]
                self._back[pos] = self._back[last]
                self._pos[moved] = pos
            self._n = last
        self._bump()

    def set_rows(self, rowids: list[int], vectors: Vector) -> None:
        """Search these stored rows by `vectors` from now on (their conversation-
        aware vectors, written to `ctx_vectors` by the caller, or their own again)."""
        if rowids:
            self._place(rowids, np.ascontiguousarray(vectors, dtype=np.float32), append=False)

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
        n = self._n
        if n == 0:
            return []
        q = np.ascontiguousarray(query, dtype=np.float32).reshape(self.dim)
        # `pos`: the buffer rows to consider (None: all); `mask`: a filter over all.
        pos: npt.NDArray[np.int64] | None = None
        mask: npt.NDArray[np.bool_] | None = None
        if allowed is not None:
            if len(allowed) * 8 < n:
                found = [p for p in (self._pos.get(int(r)) for r in allowed) if p is not None]
                pos = np.array(found, dtype=np.int64)
            else:
                mask = np.isin(self._ids[:n], allowed)
                pos = np.flatnonzero(mask)
            if len(pos) == 0:
                return []
        size = n if pos is None else len(pos)
        m = RESCORE_FACTOR * k + RESCORE_EXTRA
        kernel = int8_kernel() if size >= self.quantize_min_rows and size > m else None
        if kernel is not None:
            pos = self._int8_candidates(kernel, q, m, pos, mask)
        with _BLAS.limit(limits=1, user_api="blas"):
            if pos is None:
                sims, rowids = self._buf[:n] @ q, self._ids[:n]
            else:
                sims, rowids = self._buf[pos] @ q, self._ids[pos]
        k = min(k, len(sims))
        top = largest(sims, k)
        top = top[np.lexsort((rowids[top], -sims[top]))]
        return [(int(rowids[i]), float(sims[i])) for i in top]

    def _int8_candidates(
        self,
        kernel: Any,
        q: Vector,
        m: int,
        pos: npt.NDArray[np.int64] | None,
        mask: npt.NDArray[np.bool_] | None,
    ) -> npt.NDArray[np.int64]:
        """Buffer rows of the best `m` int8 scores among `pos` (None: all rows).
        A `mask` over all rows is applied to a full scan rather than gathering
        the rows it keeps (a scan is cheaper than a copy of most of the matrix)."""
        n = self._n
        q8, _ = quantize(q[None, :])
        if pos is not None and mask is None:
            rows, back = self._q8[pos], self._back[pos]
        else:
            rows, back = self._q8[:n], self._back[:n]
        approx = np.empty((1, len(rows)), dtype=np.float32)
        kernel.cdist(q8, rows, metric="dot", out=approx)
        scores = approx[0]
        scores *= back  # q8 . row8 * back_row ~ (q . row) / back_q: same order
        if mask is not None:
            scores[~mask] = -np.inf
            best = largest(scores, m)
            return best[mask[best]]
        best = largest(scores, m)
        return best if pos is None else pos[best]

    def _search_blobs(
        self, query: Vector, k: int, allowed: npt.NDArray[np.int64]
    ) -> list[tuple[int, float]]:
        ids = [int(r) for r in allowed]
        rows: list[tuple[int, bytes]] = []
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            sql = f"{SEARCH_VECTORS} WHERE v.rowid IN ({','.join('?' * len(part))})"
            rows += self._conn.execute(sql, part).fetchall()
        if not rows:
            return []
        matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(
            len(rows), self.dim
        )
        sims = matrix @ np.asarray(query, dtype=np.float32)
        order = np.argsort(-sims)[:k]
        return [(rows[i][0], float(sims[i])) for i in order]

    def get(self, rowids: list[int]) -> dict[int, Vector]:
        """The stored vectors of `rowids` (those that have one)."""
        if not rowids:
            return {}
        if self._cache_current() or len(rowids) > 5000:
            self._ensure_loaded()
            return {r: self._buf[p] for r in rowids if (p := self._pos.get(r)) is not None}
        out: dict[int, Vector] = {}
        for start in range(0, len(rowids), 500):
            part = rowids[start : start + 500]
            sql = f"{SEARCH_VECTORS} WHERE v.rowid IN ({','.join('?' * len(part))})"
            for r, blob in self._conn.execute(sql, part):
                out[int(r)] = np.frombuffer(blob, dtype=np.float32)
        return out

    def __len__(self) -> int:
        self._ensure_loaded()
        return self._n
