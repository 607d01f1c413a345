"""Cross-benchmark validation of the fusion constants: tune on one benchmark, test
on the other.

The fusion of the keyword and dense lists has three constants (`SearchParams`):
the reciprocal-rank constant `rrf_k`, the weights of the two lists
(`keyword_weight`, `dense_weight`) and the share of their normalised raw scores
(`score_weight`). Tuning them on LoCoMo's five dev conversations could fit those
conversations; a setting that is also best (or near it) on LongMemEval — other
people, other chats, a person talking to an assistant instead of two people
talking — is one that fits conversational memory. So every setting of a small
grid is scored on both, each benchmark picks its best, and the pick is scored on
the other, against the shipped constants in the same run.

    python -m bench.recall_fusion [--locomo-workdir DIR] [--lme-workdir DIR] [--limit N]

LoCoMo: recall@5 over the 760 dev questions (`bench.recall_locomo`'s homes);
LongMemEval: the mean of all@5 and turn@10 over the 50 dev questions
(`bench.recall_longmemeval`'s homes and cached embeddings). Every other knob is
the shipped default.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from datetime import datetime
from pathlib import Path

import numpy as np

from bench import recall_locomo as locomo
from bench import recall_longmemeval as lme
from bench.embcache import RESULTS
from bench.embedders import cached
from memagent.index import SearchParams
from memagent.memory.chunks.store import DEFAULT_PARAMS

RRF_K = (20.0, 60.0, 120.0)
WEIGHTS = ((1.0, 1.0), (1.0, 0.7), (0.7, 1.0), (1.0, 1.4), (1.4, 1.0))
SCORE_WEIGHT = (0.25, 0.5, 1.0)


def grid() -> dict[str, SearchParams]:
    """The settings scored (the shipped constants among them)."""
    out: dict[str, SearchParams] = {}
    for k, (kw, dense), sw in itertools.product(RRF_K, WEIGHTS, SCORE_WEIGHT):
        name = f"k={k:g} kw={kw:g} dense={dense:g} score={sw:g}"
        out[name] = DEFAULT_PARAMS.model_copy(
            update={"rrf_k": k, "keyword_weight": kw, "dense_weight": dense, "score_weight": sw}
        )
    return out


def default_name(settings: dict[str, SearchParams]) -> str:
    return next(n for n, p in settings.items() if p == DEFAULT_PARAMS)


def score_locomo(settings: dict[str, SearchParams], workdir: Path) -> dict[str, float]:
    embedder = cached("minilm", RESULTS, "locomo")
    if embedder is None:
        raise SystemExit("embeddings are not installed: this benchmark needs them")
    got: dict[str, list[float]] = {n: [] for n in settings}
    for f in sorted(locomo.DATA.glob("conv-*.json")):
        conv = json.loads(f.read_text(encoding="utf-8"))
        turns = locomo.turns_of(conv.get("conversation", conv))
        store = locomo.build_home(workdir, f.stem, turns, embedder)
        now = datetime.fromisoformat(turns[-1]["created_at"]).timestamp() + 86400
        for q in conv["qa"]:
            gold = locomo.evidence_of(q)
            if q.get("category") not in locomo.CATEGORIES or not gold:
                continue
            for name, p in settings.items():
                hits = store.recall(q["question"], k=5, params=p, now=now)
                ranked = [str((h.row.source or {}).get("id")) for h in hits]
                got[name].append(locomo.recall_at(ranked, gold)[5])
        store.close()
        print(f"\rLoCoMo {f.stem} done", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return {n: float(np.mean(v)) for n, v in got.items()}


def score_lme(
    settings: dict[str, SearchParams], workdir: Path, limit: int | None
) -> dict[str, dict[str, float]]:
    embedder = cached("minilm", RESULTS, "lme-dev50")
    if embedder is None:
        raise SystemExit("embeddings are not installed: this benchmark needs them")
    questions = lme.stratified(json.loads(lme.DATA.read_text(encoding="utf-8")))[:limit]
    results, _, _ = lme.run(questions, workdir, dict(settings), embedder, quiet=True)
    out: dict[str, dict[str, float]] = {}
    for name in settings:
        rows = [r for by_type in results[name].values() for r in by_type]
        out[name] = {m: lme.mean(rows, m) for m in ("any@5", "all@5", "turn@10", "ndcg@10")}
        out[name]["objective"] = (out[name]["all@5"] + out[name]["turn@10"]) / 2
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--locomo-workdir", type=Path, default=RESULTS / "locomo-homes")
    ap.add_argument("--lme-workdir", type=Path, default=RESULTS / "lme-homes")
    ap.add_argument("--limit", type=int, default=None, help="only N LongMemEval questions")
    args = ap.parse_args(argv)
    settings = grid()
    default = default_name(settings)
    args.locomo_workdir.mkdir(parents=True, exist_ok=True)
    args.lme_workdir.mkdir(parents=True, exist_ok=True)
    lc = score_locomo(settings, args.locomo_workdir)
    lm = score_lme(settings, args.lme_workdir, args.limit)

    def rank(scores: dict[str, float], name: str) -> int:
        return 1 + sum(1 for v in scores.values() if v > scores[name])

    lm_obj = {n: v["objective"] for n, v in lm.items()}
    print(f"{'setting':<36} {'LoCoMo R@5':>10} {'LME all@5':>9} {'turn@10':>8} {'obj':>6}")
    for name in sorted(settings, key=lambda n: -lc[n]):
        mark = "  (shipped)" if name == default else ""
        print(
            f"{name:<36} {lc[name]:>10.3f} {lm[name]['all@5']:>9.3f} "
            f"{lm[name]['turn@10']:>8.3f} {lm_obj[name]:>6.3f}{mark}"
        )
    best_lc = max(settings, key=lambda n: (lc[n], n == default))
    best_lm = max(settings, key=lambda n: (lm_obj[n], n == default))
    n = len(settings)
    print(f"\n{n} settings; shipped: {default}")
    print(f"shipped: LoCoMo {lc[default]:.3f} (rank {rank(lc, default)}/{n}), "
          f"LME all@5 {lm[default]['all@5']:.3f} turn@10 {lm[default]['turn@10']:.3f} "
          f"(rank {rank(lm_obj, default)}/{n})")  # fmt: skip
    print(f"tuned on LoCoMo: {best_lc}: LoCoMo {lc[best_lc]:.3f}; on LME all@5 "
          f"{lm[best_lc]['all@5']:.3f} turn@10 {lm[best_lc]['turn@10']:.3f} "
          f"(shipped {lm[default]['all@5']:.3f} / {lm[default]['turn@10']:.3f})")  # fmt: skip
    print(f"tuned on LME: {best_lm}: LME all@5 {lm[best_lm]['all@5']:.3f} turn@10 "
          f"{lm[best_lm]['turn@10']:.3f}; on LoCoMo {lc[best_lm]:.3f} "
          f"(shipped {lc[default]:.3f})")  # fmt: skip
    order_lc = sorted(settings, key=lambda s: lc[s])
    order_lm = sorted(settings, key=lambda s: lm_obj[s])
    r_lc = np.array([order_lc.index(s) for s in settings], dtype=float)
    r_lm = np.array([order_lm.index(s) for s in settings], dtype=float)
    rho = float(np.corrcoef(r_lc, r_lm)[0, 1])
    print(f"rank correlation of the settings between the two benchmarks (Spearman): {rho:+.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
