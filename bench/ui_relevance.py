"""Where the web page's Search stops listing hits: the relevance cut, measured.

    python -m bench.ui_relevance [--conversations conv-26 conv-30] [--workdir DIR] [--keyword-only]

Each LoCoMo conversation is imported as `bench.recall_locomo` does (one chunk
per turn, hybrid index), and every question of categories 1-4 is searched the
way the page searches (`memagent.server.ui._hits`: relevance order, top 20).
For each share of the best score (the cut's `MIN_SHARE`), printed:

- kept: of the questions whose evidence turn is in the uncut top 20, the share
  whose evidence turn survives the cut (what the cut costs);
- listed: the mean number of hits the page lists (what a person reads);
- off-topic: the mean number of hits listed for queries no memory is about
  (nonsense words, and questions about things these conversations never
  mention): ideally 0.

The evidence floor (a keyword match, or cosine >= `MIN_COSINE`) is applied in
every row; "no cut" is the page before this change (every hit of the top 20).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from datetime import datetime
from pathlib import Path

from bench.evaldata import eval_dir
from bench.recall_locomo import CATEGORIES, build_home, evidence_of, turns_of
from memagent.embeddings import load_embedder
from memagent.index import Hit
from memagent.memory.chunks import ChunkStore
from memagent.server.ui import _hits

SHARES = (0.0, 0.1, 0.2, 0.3, 0.35, 0.4, 0.45, 0.5)
OFF_TOPIC = [
    "zzqxv quantum tuba",
    "blorft wizzle grommet",
    "What is the boiling point of liquid nitrogen?",
    "How do I configure a Kubernetes ingress controller?",
    "Which team won the 1966 football world cup?",
    "What is the capital of Mongolia?",
    "Explain the Krebs cycle",
    "asdf qwerty zxcv",
    "How many moons does Neptune have?",
    "What is a monad in Haskell?",
]


def cut(hits: list[Hit], share: float | None) -> list[Hit]:
    if share is None:
        return hits
    kept = [h for h in hits if _hits.has_evidence(h.why)]
    if not kept:
        return []
    best = max(h.score for h in kept)
    return [h for h in kept if h.score >= share * best]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data", type=Path, default=eval_dir("locomo"))
    ap.add_argument("--conversations", nargs="*", default=["conv-26", "conv-30"])
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--k", type=int, default=20)
    ap.add_argument("--keyword-only", action="store_true", help="search without the vectors")
    args = ap.parse_args(argv)
    embedder = load_embedder(enabled=True)
    if embedder is None:
        print("the embeddings extra is not installed: this benchmark needs it")
        return 2
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="ui-relevance-"))
    rows: list[tuple[str, float | None]] = [("no cut", None)] + [
        (f"share {s:.2f}", s) for s in SHARES
    ]
    kept = {name: 0 for name, _ in rows}
    listed = {name: 0 for name, _ in rows}
    off = {name: 0 for name, _ in rows}
    answerable = questions = off_n = 0
    for name in args.conversations:
        conv = json.loads((args.data / f"{name}.json").read_text(encoding="utf-8"))
        turns = turns_of(conv.get("conversation", conv))
        store = build_home(workdir, name, turns, embedder)
        if args.keyword_only:
            store = ChunkStore(store.home, embeddings=False)
        params = _hits.ranking(store.search_params())
        now = datetime.fromisoformat(turns[-1]["created_at"]).timestamp() + 86400
        for q in conv["qa"]:
            gold = evidence_of(q)
            if q.get("category") not in CATEGORIES or not gold:
                continue
            hits = store.recall(q["question"], k=args.k, params=params, now=now)
            questions += 1
            found = any((h.row.source or {}).get("id") in gold for h in hits)
            answerable += found
            for label, share in rows:
                shown = cut(hits, share)
                listed[label] += len(shown)
                if found and any((h.row.source or {}).get("id") in gold for h in shown):
                    kept[label] += 1
        for query in OFF_TOPIC:
            hits = store.recall(query, k=args.k, params=params, now=now)
            off_n += 1
            for label, share in rows:
                off[label] += len(cut(hits, share))
            page = _hits.relevant(hits)
            print(
                f"  {name}: {len(page):2d} listed for {query!r}",
                *(h.row.content[:60] for h in page[:2]),
                sep="\n      ",
            )
    print(
        f"{questions} questions over {len(args.conversations)} conversations "
        f"({answerable} with the evidence in the top {args.k}); {off_n} off-topic queries"
    )
    mode = "keyword-only" if args.keyword_only else "hybrid"
    share = _hits.MIN_SHARE_KEYWORD_ONLY if args.keyword_only else _hits.MIN_SHARE
    print(f"{mode}; the page's cut: share {share}")
    print(f"{'cut':<12} {'kept':>7} {'listed':>7} {'off-topic':>10}")
    for label, _ in rows:
        print(
            f"{label:<12} {kept[label] / max(answerable, 1):7.1%} "
            f"{listed[label] / max(questions, 1):7.1f} {off[label] / max(off_n, 1):10.1f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
