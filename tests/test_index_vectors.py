"""ExactVectors: the in-memory matrix stays identical to brute force over the blobs,
and the int8 first pass of large stores returns the float32 answer."""

from __future__ import annotations

import importlib
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memagent.index import ExactVectors, Index
from memagent.index.vectors import int8_kernel, largest, quantize

vectors_module = importlib.import_module("memagent.index.vectors")


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


def _unit(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    v = rng.standard_normal((n, d)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _exact(matrix: np.ndarray, rowids: list[int], q: np.ndarray, k: int) -> list[int]:
    sims = matrix @ q
    order = sorted(range(len(rowids)), key=lambda i: (-float(sims[i]), rowids[i]))
    return [rowids[i] for i in order[:k]]


def test_quantize_round_trips_within_half_a_step() -> None:
    rng = np.random.default_rng(3)
    v = _unit(rng, 50, 384)
    v[7] = 0.0  # a zero row must not divide by zero
    q8, back = quantize(v)
    assert q8.dtype == np.int8 and back.dtype == np.float32
    assert np.abs(q8.astype(np.int16)).max() <= 127
    err = np.abs(q8 * back[:, None] - v)
    assert (err <= back[:, None] / 2 + 1e-7).all()
    assert not q8[7].any()


@pytest.mark.parametrize("kernel", [True, False], ids=["int8-pass", "no-numkong"])
def test_large_store_search_equals_float32_brute_force(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kernel: bool
) -> None:
    if kernel and int8_kernel() is None:
        pytest.skip("numkong is not installed")
    scans: list[int] = []
    if kernel:
        real = int8_kernel()

        class Spy:
            def cdist(self, *a: object, **kw: object) -> object:
                scans.append(1)
                return real.cdist(*a, **kw)

        monkeypatch.setattr(vectors_module, "_KERNEL", [Spy()])
    else:
        monkeypatch.setattr(vectors_module, "_KERNEL", [None])
    rng = np.random.default_rng(11)
    n, d = 3000, 64
    matrix = _unit(rng, n, d)
    rowids = list(range(10, 10 + n))
    idx = Index(tmp_path / "i.sqlite")
    vs = ExactVectors(idx.conn, d, quantize_min_rows=100)
    with idx.conn:
        vs.upsert(rowids, matrix)
    for trial in range(20):
        # Queries near a stored row, like real searches (a clear best match), and random ones.
        q = matrix[trial * 7] + 0.5 * _unit(rng, 1, d)[0] if trial % 2 else _unit(rng, 1, d)[0]
        q = (q / np.linalg.norm(q)).astype(np.float32)
        got = vs.search(q, 25)
        assert [r for r, _ in got] == _exact(matrix, rowids, q, 25)
        for r, s in got:
            assert s == pytest.approx(float(matrix[rowids.index(r)] @ q), abs=1e-5)
        # Within an allowed set: the gathered path (small set) and the masked scan (large set).
        for size in (200, 2000):
            allowed = np.array(sorted(rng.choice(rowids, size, replace=False)), dtype=np.int64)
            keep = [rowids.index(int(r)) for r in allowed]
            want = _exact(matrix[keep], allowed.tolist(), q, 25)
            assert [r for r, _ in vs.search(q, 25, allowed)] == want
    assert len(scans) == (60 if kernel else 0)  # every search took the int8 pass


def test_int8_pass_follows_edits(tmp_path: Path) -> None:
    if int8_kernel() is None:
        pytest.skip("numkong is not installed")
    rng = np.random.default_rng(5)
    d = 32
    idx = Index(tmp_path / "i.sqlite")
    vs = ExactVectors(idx.conn, d, quantize_min_rows=50)
    matrix = _unit(rng, 400, d)
    with idx.conn:
        vs.upsert(list(range(400)), matrix)
        vs.remove(list(range(0, 400, 3)))
        replaced = _unit(rng, 20, d)
        vs.upsert(list(range(1, 40, 2)), replaced)
    q = _unit(rng, 1, d)[0]
    got = [r for r, _ in vs.search(q, 10)]
    assert got == _brute(idx.conn, q, 10)
    assert not set(got) & set(range(0, 400, 3))


def test_int8_pass_is_not_imported_for_small_stores(tmp_path: Path, monkeypatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(vectors_module, "int8_kernel", lambda: calls.append(1))
    idx = Index(tmp_path / "i.sqlite")
    vs = ExactVectors(idx.conn, 8)  # default threshold: far above 30 rows
    with idx.conn:
        vs.upsert(list(range(30)), _unit(np.random.default_rng(1), 30, 8))
    assert len(vs.search(np.ones(8, dtype=np.float32) / np.sqrt(8), 5)) == 5
    assert calls == []


def _same_top(scores: np.ndarray, got: np.ndarray, m: int) -> None:
    want = np.sort(scores)[::-1][:m]
    assert len(got) == len(set(got.tolist())) == min(m, len(scores))
    assert np.array_equal(np.sort(scores[got])[::-1], want)


@settings(max_examples=200, deadline=None)
@given(
    n=st.integers(0, 30_000),
    m=st.integers(-2, 2_000),
    kind=st.sampled_from(["normal", "sorted", "reversed", "ties", "masked", "spikes"]),
    seed=st.integers(0, 2**16),
)
def test_largest_is_the_exact_top_m(n: int, m: int, kind: str, seed: int) -> None:
    """The sampled threshold is only a shortcut: adversarial orders (a sorted array
    makes every strided sample unrepresentative), ties, masked-out (-inf) rows and
    a few outliers still give exactly the m largest scores."""
    rng = np.random.default_rng(seed)
    scores = rng.standard_normal(n).astype(np.float32)
    if kind == "sorted":
        scores.sort()
    elif kind == "reversed":
        scores = np.sort(scores)[::-1].copy()
    elif kind == "ties":
        scores = rng.integers(0, 5, n).astype(np.float32)
    elif kind == "masked":
        scores[rng.random(n) < 0.97] = -np.inf
    elif kind == "spikes" and n:
        scores[rng.integers(0, n, 3)] = 100.0
    got = largest(scores, m)
    if m <= 0:
        assert len(got) == 0
        return
    _same_top(scores, got, m)


def test_largest_takes_the_shortcut_and_the_fallback() -> None:
    rng = np.random.default_rng(3)
    scores = rng.standard_normal(100_000).astype(np.float32)
    _same_top(scores, largest(scores, 464), 464)
    # Every sampled score is the array's largest value: no threshold can keep m.
    spiky = np.zeros(100_000, dtype=np.float32)
    spiky[::64] = 1.0
    _same_top(spiky, largest(spiky, 2_000), 2_000)
    assert largest(np.array([np.nan, 1.0, -np.inf], dtype=np.float32), 5).tolist() == [0, 1, 2]
