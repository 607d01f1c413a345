"""Sentence embeddings for search: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime, no torch.

Optional by design: `load_embedder()` returns `None` when the model packages are
not installed (or embeddings are disabled in config), and search falls back to
keyword-only and says so.
"""

from memagent.embeddings._minilm import (
    DIM,
    MODEL_NAME,
    Embedder,
    MiniLMEmbedder,
    count_tokens,
    embed_query,
    embeddings_unavailable_reason,
    load_embedder,
)

__all__ = [
    "DIM",
    "MODEL_NAME",
    "Embedder",
    "MiniLMEmbedder",
    "count_tokens",
    "embed_query",
    "embeddings_unavailable_reason",
    "load_embedder",
]
