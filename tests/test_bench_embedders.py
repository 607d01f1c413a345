"""The benchmarks' swappable embedders (bench.embedders): the ensemble's vectors
give the mean of the two cosines, queries take each model's query side, and the
disk cache passes queries through."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from bench.embcache import CachedEmbedder
from bench.embedders import NAMES, CacheOnly, Ensemble, cached

from memagent.embeddings import embed_query


class _Fixed:
    """Unit vectors from a table; queries get their own side when `query_side`."""

    dim = 3

    def __init__(self, name: str, table: dict[str, list[float]], query_side: bool) -> None:
        self.name = name
        self.table = {
            k: np.array(v, dtype=np.float32) / np.linalg.norm(v) for k, v in table.items()
        }
        self.query_side = query_side
        self.calls = 0

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls += len(texts)
        return np.stack([self.table[t] for t in texts]) if texts else np.zeros((0, 3), np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self.table["q:" + text] if self.query_side else self.table[text]

    def count_tokens(self, text: str) -> int:
        return len(text.split())


def _pair() -> tuple[_Fixed, _Fixed]:
    a = _Fixed("a", {"doc": [1, 0, 0], "x": [0, 1, 0], "q:x": [1, 1, 0]}, query_side=False)
    b = _Fixed("b", {"doc": [0, 0, 1], "x": [0, 1, 1], "q:x": [0, 0, 1]}, query_side=True)
    return a, b


def test_ensemble_dot_product_is_the_mean_cosine() -> None:
    a, b = _pair()
    ens = Ensemble(a, b)
    assert ens.dim == 6 and ens.name == "a+b"
    doc = ens.embed(["doc"])[0]
    assert doc.dtype == np.float32 and math.isclose(float(np.linalg.norm(doc)), 1.0, rel_tol=1e-6)
    q = embed_query(ens, "x")
    cos_a = float(a.table["doc"] @ a.table["x"])  # a has no query side: 0
    cos_b = float(b.table["doc"] @ b.table["q:x"])  # b's query side: 1
    assert math.isclose(float(doc @ q), (cos_a + cos_b) / 2, abs_tol=1e-6)
    assert ens.embed([]).shape == (0, 6)


def test_cache_passes_queries_through_and_reuses_passages(tmp_path: Path) -> None:
    _, b = _pair()
    cache = CachedEmbedder(b, tmp_path, "t-")
    assert np.allclose(cache.embed_query("x"), b.table["q:x"])  # not the passage "x"
    cache.embed(["doc", "x"])
    cache.save()
    again = CachedEmbedder(b, tmp_path, "t-")
    before = b.calls
    assert np.allclose(again.embed(["x", "doc"]), np.stack([b.table["x"], b.table["doc"]]))
    assert b.calls == before


def test_unknown_embedder_is_refused(tmp_path: Path) -> None:
    assert "minilm+e5" in NAMES
    with pytest.raises(ValueError, match="unknown embedder"):
        cached("word2vec", tmp_path, "locomo")


def test_cache_only_never_runs_the_model(tmp_path: Path) -> None:
    _, b = _pair()
    cache = CachedEmbedder(b, tmp_path, "t-")
    cache.embed(["doc", "x"])
    only = CacheOnly(cache)
    before = b.calls
    got = only.embed(["x", "unseen text"])
    assert b.calls == before and only.missing == 1
    assert np.allclose(got[0], b.table["x"])
    mean = b.table["doc"] + b.table["x"]
    assert np.allclose(got[1], mean / np.linalg.norm(mean))  # the cached vectors' direction
