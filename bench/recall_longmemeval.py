"""Retrieval on LongMemEval_S: memagent recall vs BM25 (rank-bm25) vs dense (MiniLM).

Each question has its own haystack (~50 chat sessions, ~500 turns): one memory
home per question, built through the real chunk store the way `memagent import`
stores a chat (one chunk per turn, its content as said, the role in `source`,
one conversation id per session, turns timestamped with their session's date one
second apart). The question is asked as a recall at the question's date.

Reported per question type and overall, for every system in the same run:
- session level: the sessions of the top-k turns; recall_any@k (some evidence
  session is among them) and recall_all@k (every evidence session is);
- the paper's session metric (`s.all@k`, LongMemEval's evaluate_retrieval_turn2session):
  walk down the ranked turns until k distinct sessions are seen, then recall_all;
- turn level ("round" in the paper): recall@k, the share of `has_answer` turns in
  the top k; `t.all@10`, all of them in the top 10 (the paper's turn recall_all);
  NDCG@10 with those turns as the relevant ones.

    python -m bench.recall_longmemeval [--data FILE] [--workdir DIR] [--limit N] [--cv]
                                       [--deep [--model SPEC]] [--embedder minilm|e5|minilm+e5]
                                       [--rankings FILE]

`--rankings FILE` writes every memagent system's ranking of every question (as
`bench.recall_locomo --rankings` does), to compare two versions of the code.

`--deep` adds "memagent --deep": the query expanded by the LLM first (`recall
--deep`, `memagent.agent.expand`; the embedded model unless `--model`). Its
terms and generation times are cached in bench/results/lme-expansions.json (keyed
by model, prompt and question), so a second run only queries; the generation
time reported is the one measured when the terms were made.

`--cv` cross-validates the session-head knobs, the turns' context (on or off) and
the answer-type boost (`quantity_boost` 0 or 0.5) inside the slice: the questions
(in type-stratified order) fall into 5 folds; on each 4 folds the grid setting
with the best mean of all@5 and turn@10 is picked (ties go to the defaults) and
scored on the fifth. Reported: held-out figures of the picked and the default
settings, mean ± standard deviation over the folds.

Homes are kept in `--workdir` (default bench/results/lme-homes, or
lme-homes-<embedder> for another `--embedder`, see `bench.embedders`) and
embeddings in bench/results/, so a second run only queries.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from bench.embcache import RESULTS
from bench.embedders import NAMES, cached
from bench.evaldata import eval_dir
from bench.recall_locomo import write_ranking
from memagent.agent.expand import Expansion, expand_query
from memagent.core import MemoryHome
from memagent.embeddings import Embedder, embed_query
from memagent.index import SearchParams
from memagent.index.sqlite import CONTEXT_WEIGHT
from memagent.memory.chunks import ChunkDraft, ChunkStore
from memagent.memory.chunks.store import DEFAULT_PARAMS
from memagent.setup import init_home

DATA = eval_dir("longmemeval") / "longmemeval_s_dev50.json"
TYPES = (
    "single-session-user",
    "single-session-assistant",
    "single-session-preference",
    "multi-session",
    "knowledge-update",
    "temporal-reasoning",
)
METRICS = (
    "any@5",
    "all@5",
    "all@10",
    "s.all@5",
    "s.all@10",
    "turn@5",
    "turn@10",
    "t.all@10",
    "ndcg@10",
)
DEPTH = 50  # turns ranked per question (the paper-style session metrics look past 10)
_WORD = re.compile(r"\w+")


def stratified(questions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The questions in round-robin order over their types, so the first N cover
    every type (`--limit`)."""
    by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for q in questions:
        by_type[q["question_type"]].append(q)
    out: list[dict[str, Any]] = []
    while any(by_type.values()):
        for t in sorted(by_type):
            if by_type[t]:
                out.append(by_type[t].pop(0))
    return out


def lme_time(raw: str) -> datetime:
    """'2023/05/20 (Sat) 02:21' → aware datetime (UTC)."""
    day, _, clock = raw.partition(")")
    return datetime.strptime(day.split("(")[0].strip() + clock, "%Y/%m/%d %H:%M").replace(
        tzinfo=UTC
    )


@dataclass
class Turn:
    tid: str  # "<session index>:<turn index>"
    session: str
    role: str
    content: str
    created_at: str
    evidence: bool


def turns_of(q: dict[str, Any]) -> list[Turn]:
    out: list[Turn] = []
    for s, (sid, date, sess) in enumerate(
        zip(q["haystack_session_ids"], q["haystack_dates"], q["haystack_sessions"], strict=True)
    ):
        when = lme_time(date)
        for i, t in enumerate(sess):
            if not isinstance(t.get("content"), str) or not t["content"].strip():
                continue
            out.append(
                Turn(
                    tid=f"{s}:{i}",
                    session=str(sid),
                    role=str(t.get("role", "user")),
                    content=t["content"],
                    created_at=(when + timedelta(seconds=i)).isoformat(),
                    evidence=bool(t.get("has_answer")),
                )
            )
    return out


def build_home(root: Path, qid: str, turns: list[Turn], embedder: Embedder) -> ChunkStore:
    home = MemoryHome.open(root / qid)
    fresh = not (home.layout.chunks.is_dir() and any(home.layout.chunks.iterdir()))
    if fresh:
        init_home(home)
    store = ChunkStore(home, embeddings=True)
    store.embedder = embedder  # the same model, vectors read from the cache
    if fresh:
        drafts = [
            ChunkDraft(
                content=t.content,
                created_at=t.created_at,
                conversation_id=f"{qid}:{t.session}",
                source={"kind": "longmemeval", "id": t.tid, "role": t.role},
            )
            for t in turns
        ]
        store.create_many(drafts)
    return store


def score(ranked: list[str], turns: dict[str, Turn], gold_sessions: set[str]) -> dict[str, float]:
    """The metrics of one ranked list of turn ids (best first)."""
    gold_turns = {t for t, turn in turns.items() if turn.evidence}
    out: dict[str, float] = {}
    session_of = {t: turns[t].session if t in turns else None for t in ranked}
    for k in (5, 10):
        sessions = {session_of[t] for t in ranked[:k]}
        out[f"any@{k}"] = float(bool(sessions & gold_sessions))
        out[f"all@{k}"] = float(gold_sessions <= sessions)
        distinct = list(dict.fromkeys(s for t in ranked if (s := session_of[t])))[:k]
        out[f"s.all@{k}"] = float(gold_sessions <= set(distinct))
        if gold_turns:
            out[f"turn@{k}"] = len(gold_turns & set(ranked[:k])) / len(gold_turns)
    if gold_turns:
        out["t.all@10"] = float(gold_turns <= set(ranked[:10]))
    if gold_turns:
        dcg = sum(1 / math.log2(i + 2) for i, t in enumerate(ranked[:10]) if t in gold_turns)
        ideal = sum(1 / math.log2(i + 2) for i in range(min(len(gold_turns), 10)))
        out["ndcg@10"] = dcg / ideal
    return out


def systems_to_run(dense: str = "dense (MiniLM)") -> dict[str, SearchParams | None]:
    plain = DEFAULT_PARAMS.model_copy(
        update={
            "neighbour_weight": 0.0,
            "speaker_boost": 0.0,
            "score_weight": 0.0,
            "temporal_boost": 0.0,
            "mmr_weight": 0.0,
            "session_decay": 1.0,
            "session_head": 0,
            "context_weight": 0.0,
            "quantity_boost": 0.0,
        }
    )
    return {
        "BM25 (rank-bm25)": None,
        dense: None,
        "plain RRF": plain,
        "no time/diversity": DEFAULT_PARAMS.model_copy(
            update={
                "temporal_boost": 0.0,
                "mmr_weight": 0.0,
                "session_decay": 1.0,
                "session_head": 0,
                "context_weight": 0.0,
                "quantity_boost": 0.0,
            }
        ),
        "no kw context": DEFAULT_PARAMS.model_copy(update={"context_weight": 0.0}),
        "no answer type": DEFAULT_PARAMS.model_copy(update={"quantity_boost": 0.0}),
        "no session decay": DEFAULT_PARAMS.model_copy(update={"session_decay": 1.0}),
        "no session head": DEFAULT_PARAMS.model_copy(update={"session_head": 0}),
        "memagent": DEFAULT_PARAMS,
    }


DEEP = "memagent --deep"
EXPANSIONS = RESULTS / "lme-expansions.json"


def expansion_key(model: str, question: str) -> str:
    from memagent.agent.prompts import load_prompt_set

    system = load_prompt_set("expand").render("system")
    return hashlib.sha256(f"{model}\n{system}\n{question}".encode()).hexdigest()[:24]


def expansions(
    questions: list[dict[str, Any]], model: str, path: Path = EXPANSIONS, *, quiet: bool = False
) -> dict[str, Expansion]:
    """The expansion of each question (by question id), from the cache file or
    made now with `model` (the model is loaded only if one is missing)."""
    cache: dict[str, Any] = {}
    if path.is_file():
        cache = json.loads(path.read_text(encoding="utf-8"))
    out: dict[str, Expansion] = {}
    llm = None
    for n, q in enumerate(questions, 1):
        key = expansion_key(model, q["question"])
        if key not in cache:
            if llm is None:
                from memagent.llm import load_llm

                llm = load_llm(model)
            got = expand_query(llm, q["question"])
            cache[key] = {"terms": got.terms, "seconds": round(got.seconds, 3)}
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(cache, indent=0), encoding="utf-8")
            tmp.replace(path)
            if not quiet:
                print(f"\r{n}/{len(questions)} expanded", end="", file=sys.stderr, flush=True)
        hit = cache[key]
        out[q["question_id"]] = Expansion(q["question"], list(hit["terms"]), float(hit["seconds"]))
    if llm is not None and not quiet:
        print(file=sys.stderr)
    return out


def run(
    questions: list[dict[str, Any]],
    workdir: Path,
    systems: dict[str, SearchParams | None],
    embedder: Embedder,
    *,
    quiet: bool = False,
    deep: dict[str, Expansion] | None = None,
    rankings: TextIO | None = None,
) -> tuple[dict[str, dict[str, list[dict[str, float]]]], float, int]:
    """Per system, per question type, the metrics of each question. A system named
    `DEEP` asks the question as `deep` expanded it."""
    from rank_bm25 import BM25Okapi

    results: dict[str, dict[str, list[dict[str, float]]]] = {s: defaultdict(list) for s in systems}
    t_query, n_queries = 0.0, 0
    for n, q in enumerate(questions, 1):
        turns = turns_of(q)
        by_id = {t.tid: t for t in turns}
        gold = {str(s) for s in q["answer_session_ids"]}
        qtype = q["question_type"]
        store = build_home(workdir, q["question_id"], turns, embedder)
        ids = [t.tid for t in turns]
        if "BM25 (rank-bm25)" in systems:
            bm25 = BM25Okapi([_WORD.findall(t.content.lower()) or ["_"] for t in turns])
            bm = bm25.get_scores(_WORD.findall(q["question"].lower()))
            ranked = [ids[i] for i in np.argsort(-bm, kind="stable")[:DEPTH]]
            results["BM25 (rank-bm25)"][qtype].append(score(ranked, by_id, gold))
        dense = next((s for s in systems if s.startswith("dense (")), None)
        if dense is not None:
            vecs = embedder.embed([t.content for t in turns])
            sims = vecs @ embed_query(embedder, q["question"])
            ranked = [ids[i] for i in np.argsort(-sims, kind="stable")[:DEPTH]]
            results[dense][qtype].append(score(ranked, by_id, gold))
        now = lme_time(q["question_date"]).timestamp()
        for name, params in systems.items():
            if params is None:
                continue
            asked = q["question"]
            if name == DEEP and deep is not None:
                asked = deep[q["question_id"]].expanded
            t1 = time.perf_counter()
            hits = store.recall(asked, k=DEPTH, params=params, now=now)
            t_query += time.perf_counter() - t1
            n_queries += 1
            ranked = [str((h.row.source or {}).get("id")) for h in hits]
            results[name][qtype].append(score(ranked, by_id, gold))
            if rankings is not None:
                write_ranking(rankings, name, q["question_id"], 0, hits)
        store.close()
        save = getattr(embedder, "save", None)
        if save is not None:
            save()
        if not quiet:
            print(f"\r{n}/{len(questions)} questions", end="", file=sys.stderr, flush=True)
    if not quiet:
        print(file=sys.stderr)
    return results, t_query, n_queries


def mean(rows: list[dict[str, float]], metric: str) -> float:
    vals = [r[metric] for r in rows if metric in r]
    return float(np.mean(vals)) if vals else float("nan")


def report(results: dict[str, dict[str, list[dict[str, float]]]]) -> dict[str, dict[str, float]]:
    header = f"{'system':<18} {'question type':<26} {'n':>3} " + " ".join(
        f"{m:>7}" for m in METRICS
    )
    print(header)
    print("-" * len(header))
    overall: dict[str, dict[str, float]] = {}
    for name, by_type in results.items():
        for qtype in TYPES:
            rows = by_type.get(qtype, [])
            if rows:
                print(
                    f"{name:<18} {qtype:<26} {len(rows):>3} "
                    + " ".join(f"{mean(rows, m):>7.3f}" for m in METRICS)
                )
        allr = [r for rows in by_type.values() for r in rows]
        overall[name] = {m: mean(allr, m) for m in METRICS}
        print(
            f"{name:<18} {'overall':<26} {len(allr):>3} "
            + " ".join(f"{overall[name][m]:>7.3f}" for m in METRICS)
        )
        print("-" * len(header))
    return overall


CV_METRICS = ("all@5", "turn@10")


def in_order(
    by_type: dict[str, list[dict[str, float]]], questions: list[dict[str, Any]]
) -> list[dict[str, float]]:
    """The per-type results of `run` back in the order of `questions`."""
    taken: dict[str, int] = defaultdict(int)
    out = []
    for q in questions:
        t = q["question_type"]
        out.append(by_type[t][taken[t]])
        taken[t] += 1
    return out


def cv_grid() -> dict[str, SearchParams]:
    """The knobs cross-validation may pick from (the defaults among them)."""
    grid: dict[str, SearchParams] = {}
    for head in (0, 3, 4, 5):
        for always in (False, True):
            if head == 0 and always:
                continue
            for ctx in (0.0, CONTEXT_WEIGHT):
                for qty in (0.0, 0.5):
                    name = f"head={head}{' always' if always else ''} ctx={ctx} qty={qty}"
                    grid[name] = DEFAULT_PARAMS.model_copy(
                        update={
                            "session_head": head,
                            "session_head_always": always,
                            "context_weight": ctx,
                            "quantity_boost": qty,
                        }
                    )
    return grid


def default_name(grid: dict[str, SearchParams]) -> str:
    return next(n for n, p in grid.items() if p == DEFAULT_PARAMS)


def cross_validate(
    per_q: dict[str, list[dict[str, float]]], default: str, folds: int = 5
) -> list[dict[str, Any]]:
    """`per_q[config]` = the metrics of each question (same order for every
    config). Question i is in fold i % folds; per fold, the config best on the
    others by the mean of `CV_METRICS` (ties go to `default`) and its metrics,
    and the default's, on the fold."""

    def objective(rows: list[dict[str, float]]) -> float:
        return float(np.mean([mean(rows, m) for m in CV_METRICS]))

    out = []
    n = len(next(iter(per_q.values())))
    for f in range(folds):
        test = [i for i in range(n) if i % folds == f]
        train = [i for i in range(n) if i % folds != f]
        if not test or not train:
            continue
        best = max(per_q, key=lambda c: (objective([per_q[c][i] for i in train]), c == default))
        out.append(
            {
                "picked": best,
                "test": {m: mean([per_q[best][i] for i in test], m) for m in METRICS},
                "default": {m: mean([per_q[default][i] for i in test], m) for m in METRICS},
            }
        )
    return out


def print_cv(splits: list[dict[str, Any]]) -> None:
    print(f"\ncross-validation: pick on 4 folds, test on the 5th ({len(splits)} folds)")
    for s in splits:
        print(
            f"  picked {s['picked']:<24} held-out "
            + " ".join(f"{m} {s['test'][m]:.3f}" for m in ("any@5", *CV_METRICS, "ndcg@10"))
        )
    for label, key in (("picked", "test"), ("defaults", "default")):
        print(
            f"held-out, {label:<9}"
            + " ".join(
                f" {m} {np.mean([s[key][m] for s in splits]):.3f}"
                f" ± {np.std([s[key][m] for s in splits]):.3f}"
                for m in ("any@5", *CV_METRICS, "ndcg@10")
            )
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--limit", type=int, default=None, help="only N questions (every type in turn)")
    ap.add_argument("--cv", action="store_true", help="cross-validate the session-head knobs")
    ap.add_argument("--deep", action="store_true", help="add recall with LLM query expansion")
    ap.add_argument("--model", default="embedded", help="the LLM of --deep (a load_llm spec)")
    ap.add_argument("--embedder", choices=NAMES, default="minilm")
    ap.add_argument("--rankings", type=Path, default=None, help="write every ranking here")
    ap.add_argument(
        "--cached-only",
        action="store_true",
        help="e5 embeds no turn: one its cache lacks gets a generic vector (bench.embedders)",
    )
    args = ap.parse_args(argv)

    embedder = cached(args.embedder, RESULTS, "lme-dev50", cache_only=args.cached_only)
    if embedder is None:
        print(
            f"embedder {args.embedder} is not installed: this benchmark needs it", file=sys.stderr
        )
        return 2
    minilm = args.embedder == "minilm"
    if args.workdir is None:
        tag = "" if minilm else f"-{args.embedder}" + ("-cached" if args.cached_only else "")
        args.workdir = RESULTS / f"lme-homes{tag}"
    questions = stratified(json.loads(args.data.read_text(encoding="utf-8")))
    if args.limit:
        questions = questions[: args.limit]
    args.workdir.mkdir(parents=True, exist_ok=True)
    systems = systems_to_run("dense (MiniLM)" if minilm else f"dense ({args.embedder})")
    deep = None
    if args.deep:
        deep = expansions(questions, args.model)
        systems[DEEP] = DEFAULT_PARAMS
    t0 = time.perf_counter()
    ranks_out = args.rankings.open("w", encoding="utf-8") if args.rankings else None
    try:
        results, t_query, n_queries = run(
            questions, args.workdir, systems, embedder, deep=deep, rankings=ranks_out
        )
    finally:
        if ranks_out is not None:
            ranks_out.close()
    print(f"LongMemEval_S retrieval, {len(questions)} questions (one home each)")
    overall = report(results)
    ours, bm = overall["memagent"], overall["BM25 (rank-bm25)"]
    for m in ("all@5", "any@5", "turn@10"):
        print(f"memagent vs BM25 {m}: {ours[m]:.3f} vs {bm[m]:.3f} ({ours[m] - bm[m]:+.3f})")
    print(
        f"total {time.perf_counter() - t0:.1f}s; recall {1000 * t_query / max(n_queries, 1):.1f} "
        f"ms/query over {n_queries} queries"
    )
    if deep is not None:
        secs = [e.seconds for e in deep.values()]
        d = overall[DEEP]
        print(
            f"memagent --deep vs memagent: all@5 {d['all@5']:.3f} vs {ours['all@5']:.3f}, "
            f"any@5 {d['any@5']:.3f} vs {ours['any@5']:.3f}, turn@10 {d['turn@10']:.3f} vs "
            f"{ours['turn@10']:.3f}, NDCG@10 {d['ndcg@10']:.3f} vs {ours['ndcg@10']:.3f}; "
            f"expansion ({args.model}) p50 {np.percentile(secs, 50):.1f} s, "
            f"p95 {np.percentile(secs, 95):.1f} s per question"
        )
    if args.cv:
        grid = cv_grid()
        by_config, _, _ = run(questions, args.workdir, dict(grid), embedder, quiet=True)
        per_q = {name: in_order(by_config[name], questions) for name in grid}
        print_cv(cross_validate(per_q, default_name(grid)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
