"""Test doubles shared by several test modules (import as `from fakes import …`)."""

from __future__ import annotations

import zlib

import numpy as np


class BagOfWords:
    """A deterministic bag-of-words embedder: texts sharing words get similar vectors.

    Words go to buckets by CRC32, not `hash()`, whose per-process seed made two
    words share a bucket in about 1 run of 250 and so reordered the hits some tests
    pin. Every call is recorded (`calls`, and `texts` flattened), so a test can
    count what was embedded."""

    def __init__(self, dim: int = 384, name: str = "fake") -> None:
        self.dim = dim
        self.name = name
        self.calls: list[list[str]] = []

    @property
    def texts(self) -> list[str]:
        """Every text embedded so far, in order."""
        return [t for call in self.calls for t in call]

    def vectors(self, texts: list[str]) -> np.ndarray:
        """The vectors of `texts`, without recording a call."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in t.lower().split():
                out[i, zlib.crc32(w.encode()) % self.dim] += 1.0
            out[i] /= max(float(np.linalg.norm(out[i])), 1e-9)
        return out

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return self.vectors(texts)

    def count_tokens(self, text: str) -> int:
        return len(text.split())
