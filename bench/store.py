"""Store speed: remember throughput and cost vs store size, recall latency at scale.

    python -m bench.store [--sizes 10000 100000 1000000] [--remember 100] [--queries 100]

- remember throughput, keyword-only and with MiniLM embeddings, against a
  baseline of bare `Storage.write_json` of the same files (the fsync floor);
- the cost of one remember at each store size (it must not grow);
- recall p50/p95 at each size, against a bare FTS5 MATCH on the same index, and
  the query embedding alone (the floor of a hybrid recall: MiniLM on one core);
  every other timed query asks "how many …", so the answer type reads its pool.

Writing 10^5–10^6 chunk files with fsync is far too slow for a benchmark, so the
large stores are built by BULK-LOADING THE INDEX with synthetic documents (no
files; the index does not track them, so opening the home keeps them), with
random unit vectors standing in for embeddings (dense search costs the same
whatever the vectors hold). Hybrid recall is measured up to `--hybrid-max`
documents (default 100k); above that, keyword-only (a 10^6 x 384 matrix is
1.5 GB: an ANN index is the answer there, behind the same interface). From 10k
vectors on, dense search takes an int8 first pass (`numkong`) and re-scores the
best rows in float32; the mode column says which. Every timed query is new, so
the index's query-embedding cache never answers one.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from memagent.core import MemoryHome
from memagent.embeddings import load_embedder
from memagent.index import Index
from memagent.index.context import context_text
from memagent.index.search import fts_query, query_terms
from memagent.index.vectors import QUANTIZE_MIN_ROWS, int8_kernel
from memagent.memory.chunks import ChunkStore
from memagent.setup import init_home

_SYLLABLES = "ka lo mi nu pe ra si to vu ze ba co di fa gu he ji ko la ma".split()  # noqa: SIM905


def vocabulary(n: int, rng: random.Random) -> list[str]:
    words: set[str] = set()
    while len(words) < n:
        words.add("".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


class TextGen:
    """Zipf-distributed words: a few common, many rare, like real text."""

    def __init__(self, seed: int = 7, vocab: int = 20_000) -> None:
        self.rng = random.Random(seed)
        self.words = vocabulary(vocab, self.rng)
        weights = 1.0 / np.arange(1, vocab + 1) ** 1.05
        self.cum = np.cumsum(weights / weights.sum())
        self.np_rng = np.random.default_rng(seed)

    def text(self, n_words: int = 30) -> str:
        idx = np.searchsorted(self.cum, self.np_rng.random(n_words))
        return " ".join(self.words[min(i, len(self.words) - 1)] for i in idx).capitalize() + "."

    def query(self) -> str:
        return " ".join(self.rng.choice(self.words[50:5000]) for _ in range(self.rng.randint(2, 4)))


def bulk_load(index: Index, gen: TextGen, n: int, *, vectors: bool, start: int) -> None:
    """Insert `n` synthetic chunk documents straight into the index."""
    conn = index.conn
    batch = 20_000
    base_t = 1.6e9
    for s in range(0, n, batch):
        m = min(batch, n - s)
        rows = []
        texts = [gen.text(gen.rng.randint(12, 40)) for _ in range(m)]
        for i in range(s, s + m):
            j = start + i
            content = texts[i - s]
            # Its conversation's turns beside it lend their words (as `Index.upsert`
            # does; one at a batch's edge lends none here).
            near = [
                texts[x - s]
                for x in (i - 1, i + 1)
                if s <= x < s + m and (start + x) // 20 == j // 20
            ]
            rows.append(
                (j, f"synthetic-{j}", "chunk", f"bulk/{j}", content, f"t{j % 50}", "note",
                 base_t + j * 60.0, None, f"conv-{j // 20}", context_text(near))
            )  # fmt: skip
        with conn:
            conn.executemany(
                "INSERT INTO docs(rowid, doc_id, kind, path, content, tags, type, created, "
                "created_at, conversation_id, context) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                rows,
            )
            conn.executemany(
                "INSERT INTO docs_fts(rowid, content, tags, context) VALUES (?,?,?,?)",
                [(r[0], r[4], r[5], r[10]) for r in rows],
            )
            conn.executemany("INSERT INTO tags VALUES (?,?)", [(r[0], r[5]) for r in rows])
            if vectors:
                v = gen.np_rng.standard_normal((m, 384)).astype(np.float32)
                v /= np.linalg.norm(v, axis=1, keepdims=True)
                conn.executemany(
                    "INSERT INTO vectors(rowid, vec) VALUES (?,?)",
                    [(r[0], v[k].tobytes()) for k, r in enumerate(rows)],
                )
                conn.execute(
                    "INSERT INTO meta(key, value) VALUES('vec_version', '1') ON CONFLICT(key) "
                    "DO UPDATE SET value = CAST(value AS INTEGER) + 1"
                )


def quantity(query: str, i: int) -> str:
    """Every other query asks for a quantity ("how many …"), so recall's answer type
    (`memagent.index.answers`) reads the pool's texts; none states one here."""
    return f"how many {query}" if i % 2 else query


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.array(values), q))


def time_remember(store: ChunkStore, gen: TextGen, n: int) -> float:
    """Mean milliseconds per remember of one short chunk."""
    t0 = time.perf_counter()
    for _ in range(n):
        store.create(gen.text(25), tags=["bench"], conversation_id="bench-conv")
    return 1000 * (time.perf_counter() - t0) / n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--remember", type=int, default=100, help="remembers per measurement")
    ap.add_argument("--queries", type=int, default=100, help="recalls per size")
    ap.add_argument("--hybrid-max", type=int, default=100_000)
    args = ap.parse_args(argv)

    gen = TextGen()
    embedder = load_embedder()
    root = Path(tempfile.mkdtemp(prefix="bench-store-"))
    try:
        print("== remember throughput (fresh home, one short chunk per call) ==")
        home = MemoryHome.open(root / "fresh")
        init_home(home)
        t0 = time.perf_counter()
        for i in range(args.remember):
            home.storage.write_json(
                f"chunks/2024-01-01/raw-{i}.json",
                {"content": gen.text(25)},
                actor="bench",
                op="create",
            )
        floor = 1000 * (time.perf_counter() - t0) / args.remember
        print(f"baseline Storage.write_json   {floor:7.2f} ms/op  {1000 / floor:7.1f} ops/s")
        kw = ChunkStore(home, embeddings=False)
        ms_kw = time_remember(kw, gen, args.remember)
        print(f"remember, keyword-only        {ms_kw:7.2f} ms/op  {1000 / ms_kw:7.1f} ops/s  "
              f"({ms_kw / floor:.2f}x baseline)")  # fmt: skip
        if embedder is not None:
            emb = ChunkStore(home, embeddings=True)
            emb.index  # noqa: B018 - sync (embeds what the keyword-only run wrote) outside the timing
            ms_emb = time_remember(emb, gen, args.remember)
            print(f"remember, with embeddings     {ms_emb:7.2f} ms/op  {1000 / ms_emb:7.1f} ops/s  "
                  f"({ms_emb / floor:.2f}x baseline)")  # fmt: skip
        else:
            print("remember, with embeddings     skipped (embeddings not installed)")

        print()
        print("== at scale (index bulk-loaded with synthetic chunks; see --help) ==")
        print(f"{'docs':>9} {'recall mode':<18} {'remember kw':>11} {'remember emb':>12} "
              f"{'recall p50':>10} {'p95':>8} {'embed p50':>9} {'bare FTS p50':>12} "
              f"{'ratio':>6}")  # fmt: skip
        for size in sorted(args.sizes):
            hybrid = embedder is not None and size <= args.hybrid_max
            h = MemoryHome.open(root / f"size-{size}")
            init_home(h)
            idx = Index(h.layout.index, embedder if hybrid else None)
            t_load = time.perf_counter()
            bulk_load(idx, gen, size, vectors=hybrid, start=1_000_000)
            idx.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # not inside the timings
            t_load = time.perf_counter() - t_load
            idx.close()
            kw_store = ChunkStore(h, embeddings=False)
            kw_store.index  # noqa: B018 - open + sync once, outside the timings
            ms_kw = time_remember(kw_store, gen, max(args.remember // 2, 10))
            kw_store.close()
            store = ChunkStore(h, embeddings=hybrid)
            store.index  # noqa: B018 - open, sync, embed what the keyword-only run wrote
            ms_emb = time_remember(store, gen, max(args.remember // 2, 10)) if hybrid else None
            # Every other query asks a quantity, so the answer type scans its pool.
            queries = [quantity(gen.query(), i) for i in range(args.queries)]
            store.recall(gen.query(), k=10)  # warm caches (vector matrix load), unmeasured
            # The ranking without the time boost, MMR, the turns' context and the answer
            # type (earlier defaults), interleaved query by query so both see the same
            # machine load.
            params = store.search_params()
            plain = params.model_copy(
                update={
                    "temporal_boost": 0.0,
                    "mmr_weight": 0.0,
                    "session_decay": 1.0,
                    "session_head": 0,
                    "context_weight": 0.0,
                    "quantity_boost": 0.0,
                }
            )
            # Each timed query is new to both (the query-vector cache never answers).
            other = [quantity(gen.query(), i) for i in range(args.queries)]
            lat: list[float] = []
            lat_plain: list[float] = []
            for i, (q, q2) in enumerate(zip(queries, other, strict=True)):
                order = [(params, lat, q), (plain, lat_plain, q2)]
                for p, out, text in order if i % 2 else order[::-1]:
                    t1 = time.perf_counter()
                    store.recall(text, k=10, params=p)
                    out.append(1000 * (time.perf_counter() - t1))
            bare: list[float] = []
            conn = store.index.conn
            for q in queries:
                t1 = time.perf_counter()
                conn.execute(
                    "SELECT rowid FROM docs_fts WHERE docs_fts MATCH ? ORDER BY rank LIMIT 10",
                    (fts_query(query_terms(q)),),
                ).fetchall()
                bare.append(1000 * (time.perf_counter() - t1))
            embed: list[float] = []
            if hybrid and embedder is not None:
                for q in queries:
                    t1 = time.perf_counter()
                    embedder.embed([q])
                    embed.append(1000 * (time.perf_counter() - t1))
            p50, p95, b50 = pct(lat, 50), pct(lat, 95), pct(bare, 50)
            mode = "keyword-only"
            if hybrid:
                fast = size >= QUANTIZE_MIN_ROWS and int8_kernel() is not None
                mode = "hybrid, int8+f32" if fast else "hybrid, f32"
            emb_txt = f"{ms_emb:>11.2f}m" if ms_emb is not None else f"{'-':>12}"
            e50 = f"{pct(embed, 50):>8.1f}m" if embed else f"{'-':>9}"
            ratio = p50 / max(b50, 1e-6)
            print(f"{size:>9} {mode:<18} {ms_kw:>10.2f}m {emb_txt} {p50:>9.1f}m {p95:>7.1f}m "
                  f"{e50} {b50:>11.2f}m {ratio:>5.1f}x   (bulk load {t_load:.0f}s)")  # fmt: skip
            print(f"{'':>9} {'without time/MMR/ctx/qty':<18} {'':>11} {'':>12} "
                  f"{pct(lat_plain, 50):>9.1f}m {pct(lat_plain, 95):>7.1f}m")  # fmt: skip
            store.close()
            shutil.rmtree(root / f"size-{size}", ignore_errors=True)
        print("(m = milliseconds per call; remember kw/emb = without/with embeddings; "
              "embed = the query embedding alone; "
              "ratio = recall p50 / bare FTS5 p50 on the same index)")  # fmt: skip
        load = os.getloadavg()
        print(f"load average during the run: {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} "
              f"on {os.cpu_count()} cores (shared machine: figures vary with it)")  # fmt: skip
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
