"""A disk cache of sentence embeddings for the retrieval benchmarks.

Embedding a LongMemEval haystack (~24k turns of ~1000 characters) with MiniLM on
one core takes about half an hour; the vectors never change for a given text and
model, so they are stored under `bench/results/` keyed by a hash of the text and
reused by every later run. Shards let several processes fill the cache at once.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import numpy.typing as npt

from memagent.embeddings import Embedder, embed_query

RESULTS = Path(__file__).resolve().parent / "results"


def text_key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


class CachedEmbedder:
    """Wraps an embedder; vectors of texts seen before come from the cache files
    `<prefix>*.npz` in `folder`. New vectors are written by `save()`."""

    def __init__(self, base: Embedder, folder: Path, prefix: str) -> None:
        self.base = base
        self.name = getattr(base, "name", "embedder")
        self.dim = base.dim
        self.folder = folder
        self.prefix = prefix
        self.vectors: dict[str, npt.NDArray[np.float32]] = {}
        self.new: dict[str, npt.NDArray[np.float32]] = {}
        for path in sorted(folder.glob(f"{prefix}*.npz")):
            with np.load(path) as data:
                for key, vec in zip(data["keys"], data["vectors"], strict=True):
                    self.vectors[str(key)] = vec.astype(np.float32)

    def count_tokens(self, text: str) -> int:
        return self.base.count_tokens(text)

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        """A query is embedded by the model each time (not cached: queries are few)."""
        return embed_query(self.base, text)

    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        keys = [text_key(t) for t in texts]
        missing = [i for i, k in enumerate(keys) if k not in self.vectors]
        if missing:
            got = self.base.embed([texts[i] for i in missing])
            for row, i in enumerate(missing):
                self.vectors[keys[i]] = got[row]
                self.new[keys[i]] = got[row]
        if not keys:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self.vectors[k] for k in keys]).astype(np.float32)

    def save(self, tag: str = "") -> Path | None:
        """Write the vectors computed since the last save as a new cache file."""
        if not self.new:
            return None
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / f"{self.prefix}{tag}{os.getpid()}-{len(self.vectors)}.npz"
        tmp = path.with_suffix(".tmp.npz")
        keys = np.array(list(self.new), dtype="U40")
        np.savez(tmp, keys=keys, vectors=np.stack(list(self.new.values())))
        os.replace(tmp, path)
        self.new = {}
        return path


def fill(embedder: CachedEmbedder, texts: Iterable[str], *, batch: int = 256) -> None:
    """Embed every text not cached yet, saving after each batch (a killed run
    keeps what it did)."""
    todo = [t for t in dict.fromkeys(texts) if text_key(t) not in embedder.vectors]
    for start in range(0, len(todo), batch):
        embedder.embed(todo[start : start + batch])
        embedder.save()
