"""ExactVectors: the in-memory matrix stays identical to brute force over the blobs."""

from __future__ import annotations

import sqlite3

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from memagent.index import ExactVectors, Index


def _brute(conn: sqlite3.Connection, q: np.ndarray, k: int) -> list[int]:
    rows = conn.execute("SELECT rowid, vec FROM vectors").fetchall()
    sims = [(float(np.frombuffer(v, dtype=np.float32) @ q), r) for r, v in rows]
    return [r for _, r in sorted(sims, key=lambda x: (-x[0], x[1]))[:k]]


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["add", "remove"]), st.integers(1, 40)), min_size=1, max_size=60
    ),
    st.integers(0, 2**31 - 1),
)
def test_matrix_matches_blobs_after_any_edits(tmp_path_factory, ops, seed) -> None:
    rng = np.random.default_rng(seed)
    idx = Index(tmp_path_factory.mktemp("v") / "i.sqlite")
    vs = ExactVectors(idx.conn, 8)
    for op, rowid in ops:
        with idx.conn:
            if op == "add":
                v = rng.standard_normal((1, 8)).astype(np.float32)
                vs.upsert([rowid], v / np.linalg.norm(v))
            else:
                vs.remove([rowid])
    q = rng.standard_normal(8).astype(np.float32)
    n = idx.conn.execute("SELECT count(*) FROM vectors").fetchone()[0]
    assert len(vs) == n
    got = [r for r, _ in vs.search(q, 5)]
    assert got == _brute(idx.conn, q, 5) or n == 0
    fresh = ExactVectors(idx.conn, 8)  # another process's view, loaded from blobs
    assert [r for r, _ in fresh.search(q, 5)] == got
    allowed = np.array(sorted({r for _, r in ops})[:3], dtype=np.int64)
    in_memory = [r for r, _ in vs.search(q, 10, allowed)]
    assert set(in_memory) <= set(allowed.tolist())
    unloaded = ExactVectors(idx.conn, 8)  # reads only the allowed blobs
    assert [r for r, _ in unloaded.search(q, 10, allowed)] == in_memory
