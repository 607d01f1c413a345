"""LoCoMo recall on PostgreSQL vs on local files, in the same run.

Each conversation is stored twice through the real chunk stores, exactly as
`bench.recall_locomo` builds it (one chunk per turn, timestamped, one
conversation id per session): in a fresh memory home (files + SQLite index) and
as one user of a PostgreSQL + pgvector database (pgserver, in a temporary
folder). Every question of categories 1-4 is then asked of both with the default
ranking, the day after the last session. Printed: recall@1/5/10 of the evidence
turns on each backend, per conversation and overall, and the difference
(target: PostgreSQL within 1 point of local at recall@5), and the latency of
those `recall` calls on each backend (p50/p95, PostgreSQL/local ratio: the
same questions, the same run; a PostgreSQL call includes its connection
checkout, round trips and query embedding, as a local one includes its
embedding).

    python -m bench.postgres_recall [--conversations conv-26 conv-30] [--questions N]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from bench.recall_locomo import CATEGORIES, DATA, KS, build_home, evidence_of, recall_at, turns_of
from memagent.embeddings import load_embedder
from memagent.memory.chunks import ChunkDraft
from memagent.postgres import Database, PgChunkStore


def _draft(stem: str, t: dict[str, Any]) -> ChunkDraft:
    """A turn as `bench.recall_locomo.build_home` stores it."""
    source = {"kind": "locomo", "id": t["dia_id"], "speaker": t["speaker"]}
    return ChunkDraft(
        content=t["text"],
        created_at=t["created_at"],
        conversation_id=f"{stem}:session-{t['session']}",
        source=source,
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--conversations", nargs="*", default=None)
    ap.add_argument(
        "--questions", type=int, default=0, help="ask only the first N questions of each (0: all)"
    )
    ap.add_argument(
        "--rankings",
        type=Path,
        default=None,
        help="write every question's ranked turn ids per backend to this JSON file "
        "(to check that a change keeps the rankings)",
    )
    args = ap.parse_args(argv)
    if args.questions < 0:
        print("--questions must be 0 (all) or more", file=sys.stderr)
        return 2
    if args.rankings is not None and not args.rankings.parent.is_dir():
        print(f"--rankings: no folder {args.rankings.parent}", file=sys.stderr)
        return 2
    if load_embedder() is None:
        print("embeddings are not installed: this benchmark needs them", file=sys.stderr)
        return 2
    files = sorted(args.data.glob("conv-*.json"))
    if args.conversations:
        files = [f for f in files if f.stem in args.conversations]
    if not files:
        print(f"no conv-*.json under {args.data}", file=sys.stderr)
        return 2

    import pgserver

    results: dict[str, dict[str, list[dict[int, float]]]] = {"local": {}, "postgres": {}}
    latency: dict[str, list[float]] = {"local": [], "postgres": []}
    rankings: dict[str, list[list[str]]] = {"local": [], "postgres": []}
    with tempfile.TemporaryDirectory(prefix="memagent-pg-recall-") as tmp_name:
        tmp = Path(tmp_name)
        srv = pgserver.get_server(tmp / "pg", cleanup_mode="stop")
        srv.psql("CREATE EXTENSION IF NOT EXISTS vector;")
        try:
            with Database.open(srv.get_uri(), max_size=2) as db:
                for f in files:
                    conv = json.loads(f.read_text(encoding="utf-8"))
                    turns = turns_of(conv.get("conversation", conv))
                    local = build_home(tmp / "homes", f.stem, turns)
                    pg = PgChunkStore(db, f.stem, embeddings=True)
                    pg.create_many([_draft(f.stem, t) for t in turns])
                    now = datetime.fromisoformat(turns[-1]["created_at"]).timestamp() + 86400
                    asked = [
                        (q["question"], evidence_of(q))
                        for q in conv["qa"]
                        if q.get("category") in CATEGORIES and evidence_of(q)
                    ]
                    if args.questions > 0:
                        asked = asked[: args.questions]
                    for name, store in (("local", local), ("postgres", pg)):
                        got = results[name].setdefault(f.stem, [])
                        store.recall("warm up", k=10, now=now)  # model loaded, pool connected
                        for question, gold in asked:
                            start = time.perf_counter()
                            hits = store.recall(question, k=10, now=now)
                            latency[name].append((time.perf_counter() - start) * 1000)
                            ranked = [str((h.row.source or {}).get("id")) for h in hits]
                            got.append(recall_at(ranked, gold))
                            rankings[name].append(ranked)
                    local.close()
        finally:
            srv.cleanup()

    if args.rankings is not None:
        args.rankings.write_text(json.dumps(rankings), encoding="utf-8")

    def mean(rows: list[dict[int, float]], k: int) -> float:
        return float(np.mean([r[k] for r in rows])) if rows else float("nan")

    print(f"LoCoMo recall, {len(files)} conversations, categories 1-4, default ranking")
    print(f"{'conversation':<14} {'n':>4} " + " ".join(f"{'local@' + str(k):>9}" for k in KS)
          + " " + " ".join(f"{'pg@' + str(k):>7}" for k in KS))  # fmt: skip
    for stem, rows in results["local"].items():
        pg_rows = results["postgres"][stem]
        print(
            f"{stem:<14} {len(rows):>4} "
            + " ".join(f"{mean(rows, k):>9.3f}" for k in KS)
            + " "
            + " ".join(f"{mean(pg_rows, k):>7.3f}" for k in KS)
        )
    every = {name: [r for rows in per.values() for r in rows] for name, per in results.items()}
    for k in KS:
        lo, pg_ = mean(every["local"], k), mean(every["postgres"], k)
        diff = (pg_ - lo) * 100
        print(f"overall recall@{k}: local {lo:.3f}  postgres {pg_:.3f}  ({diff:+.1f} points)")
    p50 = {name: float(np.percentile(xs, 50)) for name, xs in latency.items() if xs}
    p95 = {name: float(np.percentile(xs, 95)) for name, xs in latency.items() if xs}
    for name in p50:
        print(
            f"recall latency {name}: p50 {p50[name]:.1f} ms  p95 {p95[name]:.1f} ms  "
            f"({len(latency[name])} calls)"
        )
    if len(p50) == 2:
        print(
            f"postgres/local: p50 {p50['postgres'] / p50['local']:.2f}x  "
            f"p95 {p95['postgres'] / p95['local']:.2f}x"
        )
    gap = abs(mean(every["postgres"], 5) - mean(every["local"], 5)) * 100
    print(f"recall@5 gap {gap:.1f} points (target: at most 1)")
    return 0 if gap <= 1.0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
