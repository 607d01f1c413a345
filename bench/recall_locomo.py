"""Retrieval on LoCoMo: BM25 (rank-bm25) vs dense (MiniLM) vs memagent hybrid.

Each conversation is imported into a fresh memory home through the real chunk
store (one chunk per turn, `speaker: text` plus any photo caption, timestamped
with its session date, one conversation id per session), then every question of
categories 1–4 is asked as a recall. Reported: recall@1/5/10 of the evidence
turns, averaged per question, per category and overall, for all systems in the
same run. A "plain RRF" row (the hybrid with every conversation-aware feature
off) shows what the tuned features add; "no time/MMR" is the hybrid without the
time boost, MMR, the turns' keyword context and the answer type (as three rounds ago); "no kw
context" is the hybrid searching each turn's own words only (`context_weight` 0);
"no answer type" the hybrid without the quantity boost (`quantity_boost` 0,
`memagent.index.answers`).
Every row but BM25 and dense searches the turns' conversation-aware vectors
(`memagent.index.context`: index-time, no query knob turns them off). Questions
are asked the day after the last session (relative times in them count from
there).

    python -m bench.recall_locomo [--data DIR] [--workdir DIR] [--conversations conv-26 …] [--cv]
                                  [--embedder minilm|e5|minilm+e5] [--shape full minimal]
                                  [--rankings FILE]

`--rankings FILE` writes every memagent system's ranking of every question (one
JSON object a line: system, conversation, question number, the ranked turn ids
and their scores), so two versions of the code can be compared question by
question (`python -m bench.rankings_diff BEFORE AFTER`).

`--shape` imports each conversation as a user's file instead (`bench.shapes`:
"full" carries `speaker`, a conversation id per session and ordered timestamps;
"minimal" only id/role/content/timestamp and one conversation id per file)
through the importer `memagent import` uses, and prints the hybrid's recall per
shape with bootstrap 95% intervals (questions resampled, paired across shapes).

`--workdir` keeps the built homes, so a second run skips the import.
`--embedder` swaps the sentence embedder of the dense list and the hybrid
(`bench.embedders`; its passage vectors cached under bench/results/).

`--cv` adds cross-validation inside the dev split: every way of choosing 3 of the
5 conversations (10 splits) picks the best of a small grid of ranking knobs
(`CV_GRID`) on those 3 and scores it on the other 2. Reported: the held-out
recall@5 of the picked knobs and of the defaults, mean ± standard deviation over
the splits, beside the in-sample figure — the gap is what tuning fits to the
conversations rather than to conversational memory.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from bench.embcache import RESULTS
from bench.embedders import NAMES, cached
from bench.evaldata import eval_dir
from bench.shapes import SHAPES
from memagent.core import MemoryHome
from memagent.embeddings import Embedder, embed_query
from memagent.index import Hit, SearchParams
from memagent.index.sqlite import CONTEXT_WEIGHT
from memagent.memory.chunks import ChunkDraft, ChunkStore
from memagent.memory.chunks.store import DEFAULT_PARAMS
from memagent.setup import init_home

DATA = eval_dir("locomo")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
KS = (1, 5, 10)
_WORD = re.compile(r"\w+")


def session_time(raw: str) -> datetime:
    """'1:56 pm on 8 May, 2023' → aware datetime (UTC)."""
    return datetime.strptime(raw.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def turns_of(conv: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    n = 1
    while f"session_{n}" in conv:
        when = session_time(conv[f"session_{n}_date_time"])
        for i, t in enumerate(conv[f"session_{n}"]):
            text = f"{t['speaker']}: {t['text']}"
            if t.get("blip_caption"):
                text += f" [shares a photo: {t['blip_caption']}]"
            out.append(
                {
                    "dia_id": t["dia_id"],
                    "speaker": t["speaker"],
                    "text": text,
                    # Turns keep their order inside a session: one second apart.
                    "created_at": (when + timedelta(seconds=i)).isoformat(),
                    "session": n,
                }
            )
        n += 1
    return out


def evidence_of(q: dict[str, Any]) -> set[str]:
    ids: set[str] = set()
    for e in q.get("evidence", []):
        for part in str(e).split(";"):
            part = part.strip().replace("D:", "D")
            if part:
                ids.add(part)
    return ids


def build_home(
    root: Path, name: str, turns: list[dict[str, Any]], embedder: Embedder | None = None
) -> ChunkStore:
    home = MemoryHome.open(root / name)
    fresh = not (home.layout.chunks.is_dir() and any(home.layout.chunks.iterdir()))
    if fresh:
        init_home(home)
    store = ChunkStore(home, embeddings=True)
    if embedder is not None:
        store.embedder = embedder
    if fresh:
        drafts = [
            ChunkDraft(
                content=t["text"],
                created_at=t["created_at"],
                conversation_id=f"{name}:session-{t['session']}",
                source={"kind": "locomo", "id": t["dia_id"], "speaker": t["speaker"]},
            )
            for t in turns
        ]
        store.create_many(drafts)
    return store


def recall_at(ranked: list[str], gold: set[str]) -> dict[int, float]:
    return {k: len(gold & set(ranked[:k])) / len(gold) for k in KS}


def write_ranking(out: TextIO, system: str, group: str, question: int, hits: list[Hit]) -> None:
    """One ranking as a JSON line (see `--rankings`)."""
    ranked = [[str((h.row.source or {}).get("id")), round(h.score, 9)] for h in hits]
    line = {"system": system, "group": group, "question": question, "ranked": ranked}
    out.write(json.dumps(line) + "\n")


def cv_grid() -> dict[str, SearchParams]:
    """The knobs cross-validation may pick from (the defaults among them)."""
    grid: dict[str, SearchParams] = {}
    for sp, tb, mmr, dec, head, ctx, qty in itertools.product(
        (0.0, 0.5), (0.0, 1.0), (0.0, 0.3), (1.0, 0.5), (0, 3), (0.0, CONTEXT_WEIGHT), (0.0, 0.5)
    ):
        name = f"sp={sp} t={tb} mmr={mmr} dec={dec} head={head} ctx={ctx} qty={qty}"
        grid[name] = DEFAULT_PARAMS.model_copy(
            update={
                "speaker_boost": sp,
                "temporal_boost": tb,
                "mmr_weight": mmr,
                "session_decay": dec,
                "session_head": head,
                "context_weight": ctx,
                "quantity_boost": qty,
            }
        )
    return grid


def cross_validate(
    per_conv: dict[str, dict[str, list[float]]], default: str, train_size: int = 3
) -> dict[str, Any]:
    """`per_conv[config][conversation]` = recall@5 of each question. For every
    choice of `train_size` conversations: the config best on them (ties go to the
    default), its score there and on the rest, and the default's on the rest."""
    convs = sorted(next(iter(per_conv.values())))
    splits = []
    for train in itertools.combinations(convs, train_size):
        test = [c for c in convs if c not in train]

        def mean_on(config: str, names: Any) -> float:
            vals = [v for c in names for v in per_conv[config][c]]
            return float(np.mean(vals)) if vals else 0.0

        best = max(per_conv, key=lambda c: (mean_on(c, train), c == default))
        splits.append(
            {
                "train": list(train),
                "test": test,
                "picked": best,
                "train_score": mean_on(best, train),
                "test_score": mean_on(best, test),
                "default_test": mean_on(default, test),
            }
        )
    return {"splits": splits}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--conversations", nargs="*", default=None)
    ap.add_argument("--cv", action="store_true", help="cross-validate the knobs (slower)")
    ap.add_argument("--embedder", choices=NAMES, default="minilm")
    ap.add_argument(
        "--shape", nargs="+", choices=SHAPES, default=None, help="import as a user's file"
    )
    ap.add_argument(
        "--infer",
        choices=("all", "speaker", "session", "none"),
        default="all",
        help="with --shape: what the import may infer (an ablation)",
    )
    ap.add_argument("--session-gap", type=float, default=None, help="with --shape: minutes")
    ap.add_argument("--rankings", type=Path, default=None, help="write every ranking here")
    args = ap.parse_args(argv)

    from rank_bm25 import BM25Okapi

    embedder = cached(args.embedder, RESULTS, "locomo")
    if embedder is None:
        print(
            f"embedder {args.embedder} is not installed: this benchmark needs it", file=sys.stderr
        )
        return 2
    dense_name = "dense (MiniLM)" if args.embedder == "minilm" else f"dense ({args.embedder})"
    files = sorted(args.data.glob("conv-*.json"))
    if not files:
        print(f"no conv-*.json under {args.data}", file=sys.stderr)
        return 2
    if args.conversations:
        files = [f for f in files if f.stem in args.conversations]
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="locomo-"))
    workdir.mkdir(parents=True, exist_ok=True)
    if args.shape:
        from bench.recall_shapes import Variant, compare_shapes, print_gap_cv

        variant = Variant(infer=args.infer, gap_minutes=args.session_gap)
        try:
            print_gap_cv(files)
            compare_shapes(files, list(dict.fromkeys(args.shape)), workdir, embedder, variant)
        finally:
            if args.workdir is None:
                shutil.rmtree(workdir, ignore_errors=True)
        return 0
    plain = DEFAULT_PARAMS.model_copy(
        update={"neighbour_weight": 0.0, "speaker_boost": 0.0, "score_weight": 0.0,
                "keyword_weight": 1.0, "dense_weight": 1.0, "rrf_k": 60.0,
                "temporal_boost": 0.0, "mmr_weight": 0.0, "session_decay": 1.0, "session_head": 0,
                "context_weight": 0.0, "quantity_boost": 0.0}
    )  # fmt: skip
    before = DEFAULT_PARAMS.model_copy(
        update={"temporal_boost": 0.0, "mmr_weight": 0.0, "session_decay": 1.0, "session_head": 0,
                "context_weight": 0.0, "quantity_boost": 0.0}
    )  # fmt: skip  # the ranking of three rounds ago: no time, diversity, context or answer type
    systems: dict[str, SearchParams | None] = {
        "BM25 (rank-bm25)": None,
        dense_name: None,
        "plain RRF": plain,
        "no time/MMR": before,
        "no kw context": DEFAULT_PARAMS.model_copy(update={"context_weight": 0.0}),
        "no answer type": DEFAULT_PARAMS.model_copy(update={"quantity_boost": 0.0}),
        "memagent hybrid": DEFAULT_PARAMS,
    }
    scores: dict[str, dict[int, list[dict[int, float]]]] = {s: defaultdict(list) for s in systems}
    grid = cv_grid() if args.cv else {}
    per_conv: dict[str, dict[str, list[float]]] = {
        c: defaultdict(list) for c in [*grid, "memagent hybrid"]
    }
    t_import = t_query = 0.0
    n_queries = 0
    ranks_out = args.rankings.open("w", encoding="utf-8") if args.rankings else None
    for f in files:
        conv = json.loads(f.read_text(encoding="utf-8"))
        turns = turns_of(conv.get("conversation", conv))
        ids = [t["dia_id"] for t in turns]
        t0 = time.perf_counter()
        store = build_home(workdir, f.stem, turns, embedder)
        t_import += time.perf_counter() - t0
        # Questions are asked the day after the last session.
        now = datetime.fromisoformat(turns[-1]["created_at"]).timestamp() + 86400
        bm25 = BM25Okapi([_WORD.findall(t["text"].lower()) for t in turns])
        vecs = embedder.embed([t["text"] for t in turns])
        for qno, q in enumerate(conv["qa"]):
            cat = q.get("category")
            if cat not in CATEGORIES:
                continue
            gold = evidence_of(q)
            if not gold:
                continue
            question = q["question"]
            bm = bm25.get_scores(_WORD.findall(question.lower()))
            scores["BM25 (rank-bm25)"][cat].append(
                recall_at([ids[i] for i in np.argsort(-bm)[:10]], gold)
            )
            sims = vecs @ embed_query(embedder, question)
            scores[dense_name][cat].append(
                recall_at([ids[i] for i in np.argsort(-sims)[:10]], gold)
            )
            for name, params in systems.items():
                if params is None:
                    continue
                t1 = time.perf_counter()
                hits = store.recall(question, k=10, params=params, now=now)
                t_query += time.perf_counter() - t1
                n_queries += 1
                ranked = [str((h.row.source or {}).get("id")) for h in hits]
                scores[name][cat].append(recall_at(ranked, gold))
                if ranks_out is not None:
                    write_ranking(ranks_out, name, f.stem, qno, hits)
                if name == "memagent hybrid":
                    per_conv[name][f.stem].append(scores[name][cat][-1][5])
            for name, params in grid.items():
                hits = store.recall(question, k=5, params=params, now=now)
                ranked = [str((h.row.source or {}).get("id")) for h in hits]
                per_conv[name][f.stem].append(recall_at(ranked, gold)[5])
        store.close()
        save = getattr(embedder, "save", None)
        if save is not None:
            save()
    if ranks_out is not None:
        ranks_out.close()

    header = f"{'system':<18} {'category':<12} {'n':>4} " + " ".join(
        f"{'R@' + str(k):>6}" for k in KS
    )
    print(f"LoCoMo retrieval, {len(files)} conversations, categories 1-4")
    print(header)
    print("-" * len(header))
    overall: dict[str, dict[int, float]] = {}
    for name in systems:
        rows = scores[name]
        for cat, label in CATEGORIES.items():
            vals = rows[cat]
            means = {k: float(np.mean([v[k] for v in vals])) if vals else 0.0 for k in KS}
            print(
                f"{name:<18} {label:<12} {len(vals):>4} "
                + " ".join(f"{means[k]:>6.3f}" for k in KS)
            )
        allv = [v for cat in CATEGORIES for v in rows[cat]]
        overall[name] = {k: float(np.mean([v[k] for v in allv])) for k in KS}
        print(
            f"{name:<18} {'overall':<12} {len(allv):>4} "
            + " ".join(f"{overall[name][k]:>6.3f}" for k in KS)
        )
        print("-" * len(header))
    base = overall["BM25 (rank-bm25)"][5]
    hyb = overall["memagent hybrid"][5]
    for label in ("no time/MMR", "no kw context", "no answer type"):
        prev = overall[label][5]
        gain = (hyb - prev) * 100
        print(f"hybrid vs {label} recall@5: {hyb:.3f} vs {prev:.3f} ({gain:+.1f} points)")
    print(
        f"hybrid vs BM25 recall@5: {hyb:.3f} vs {base:.3f} "
        f"(+{(hyb - base) * 100:.1f} points, ratio {hyb / base:.2f}x)"
    )
    print(
        f"import {t_import:.1f}s (files + embeddings + auto-links); "
        f"recall {1000 * t_query / max(n_queries, 1):.1f} ms/query over {n_queries} queries"
    )
    print(
        "hybrid recall@5 per conversation: "
        + ", ".join(f"{c} {np.mean(v):.3f}" for c, v in sorted(per_conv["memagent hybrid"].items()))
    )
    if args.cv and len(files) >= 3:
        print_cv(per_conv)
    if args.workdir is None:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


def print_cv(per_conv: dict[str, dict[str, list[float]]]) -> None:
    grid = {c: v for c, v in per_conv.items() if c != "memagent hybrid"}
    cv = cross_validate(grid, default=_default_name(grid))
    fixed = cross_validate({"memagent hybrid": per_conv["memagent hybrid"]}, "memagent hybrid")
    print(f"\ncross-validation: tune on 3 conversations, test on 2 ({len(cv['splits'])} splits)")
    print(f"{'train':<26} {'picked':<44} {'train R@5':>9} {'test R@5':>9} {'defaults':>9}")
    for s, d in zip(cv["splits"], fixed["splits"], strict=True):
        print(
            f"{','.join(s['train']):<26} {s['picked']:<44} {s['train_score']:>9.3f} "
            f"{s['test_score']:>9.3f} {d['test_score']:>9.3f}"
        )

    def ms(vals: list[float]) -> str:
        return f"{np.mean(vals):.3f} ± {np.std(vals):.3f}"

    tuned_train = [s["train_score"] for s in cv["splits"]]
    tuned_test = [s["test_score"] for s in cv["splits"]]
    default_test = [d["test_score"] for d in fixed["splits"]]
    print(f"tuned on 3, in-sample recall@5: {ms(tuned_train)}")
    print(f"tuned on 3, held-out recall@5:  {ms(tuned_test)}")
    print(f"defaults, held-out recall@5:    {ms(default_test)} (min {min(default_test):.3f})")


def _default_name(grid: dict[str, Any]) -> str:
    d = DEFAULT_PARAMS
    name = (
        f"sp={d.speaker_boost} t={d.temporal_boost} mmr={d.mmr_weight} dec={d.session_decay}"
        f" head={d.session_head} ctx={d.context_weight} qty={d.quantity_boost}"
    )
    return name if name in grid else next(iter(grid))


if __name__ == "__main__":
    raise SystemExit(main())
