"""MiniLM on onnxruntime: shape, unit norm, meaning, batching, fallbacks."""

from __future__ import annotations

import numpy as np
import pytest

from memagent.embeddings import (
    DIM,
    count_tokens,
    embed_query,
    embeddings_unavailable_reason,
    load_embedder,
)

needs_model = pytest.mark.skipif(
    embeddings_unavailable_reason() is not None, reason=str(embeddings_unavailable_reason())
)


@needs_model
def test_vectors_are_unit_384d_and_meaningful() -> None:
    emb = load_embedder()
    assert emb is not None
    v = emb.embed(
        [
            "I love hiking in the mountains",
            "Walking trails outdoors is my hobby",
            "Quarterly tax filing",
        ]
    )
    assert v.shape == (3, DIM) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-4)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2


@needs_model
def test_batching_and_order_do_not_change_vectors() -> None:
    emb = load_embedder()
    assert emb is not None
    texts = [f"sentence number {i} " + "padding " * (i % 7) for i in range(70)]
    together = emb.embed(texts)
    alone = np.stack([emb.embed([t])[0] for t in texts[:5]])
    assert np.allclose(together[:5], alone, atol=1e-4)
    assert emb.embed([]).shape == (0, DIM)


@needs_model
def test_loaded_once_and_long_text_truncated() -> None:
    assert load_embedder() is load_embedder()
    emb = load_embedder()
    assert emb is not None
    assert emb.embed(["word " * 5000]).shape == (1, DIM)
    assert emb.count_tokens("word " * 1000) == 1000
    assert count_tokens("hello world", emb) == 2


def test_disabled_gives_none_and_fallback_counter() -> None:
    assert load_embedder(enabled=False) is None
    assert 9 <= count_tokens("The quick brown fox jumps over the lazy dog.") <= 13
    assert count_tokens("") == 0


class _QueryAware:
    """An embedder with distinct query and passage inputs (like E5's prefixes)."""

    name = "query-aware"
    dim = 4

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.tile(np.array([1, 0, 0, 0], dtype=np.float32), (len(texts), 1))

    def embed_query(self, text: str) -> np.ndarray:
        return np.array([0, 1, 0, 0], dtype=np.float64)

    def count_tokens(self, text: str) -> int:
        return len(text.split())


class _Plain(_QueryAware):
    embed_query = None  # type: ignore[assignment]


def test_embed_query_uses_the_query_side_when_the_model_has_one() -> None:
    q = embed_query(_QueryAware(), "what did I buy?")
    assert q.dtype == np.float32 and q.shape == (4,) and q[1] == 1.0
    assert embed_query(_Plain(), "what did I buy?")[0] == 1.0  # embedded like any text


@needs_model
def test_minilm_embeds_a_query_like_a_passage() -> None:
    emb = load_embedder()
    assert emb is not None
    assert np.allclose(embed_query(emb, "hiking trails"), emb.embed(["hiking trails"])[0])
