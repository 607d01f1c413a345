"""Why each LoCoMo answer went wrong: `python -m bench.qa_errors RUN.json`.

Reads the outcomes `bench.qa_locomo --json-out` wrote and sorts every answerable
question scored under `--wrong` (F1) or refused, and every adversarial question
answered, by its cause:

- `not recalled`: no evidence turn of the question was put in context (the
  memory ids of the answer's context, mapped to LoCoMo's `dia_id`s through the
  imported chunks' `source.id`); `rank` then says where recall put the first
  evidence turn in a wider top 50 (None: not there either);
- `refused by X`: attribution, focus, verify or contrast refused it (with the
  evidence in context or not);
- `recalled, wrong`: the evidence was in context and the model answered wrong;
- `right, long`: most gold words are in the answer (recall of gold tokens at
  least 0.6) but its extra words pull F1 under the line: a format loss.

An adversarial question answered is split by whether the grounding check ran
(its P(yes)) or was skipped. The table is printed per category with counts; `--list
CAUSE` prints those questions with their answer and gold. Read-only: the homes in
`--workdir` are opened for recall only.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.qa_cache import RESULTS
from bench.qa_scoring import CATEGORIES, normalize_answer, stem
from bench.recall_locomo import DATA, evidence_of


def dia_ids(home: Path) -> dict[str, str]:
    """chunk id -> LoCoMo dia_id, from the imported chunks' source."""
    out: dict[str, str] = {}
    for path in (home / "chunks").rglob("*.json"):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        src = data.get("source") or {}
        if isinstance(src, dict) and src.get("id"):
            out[str(data["id"])] = str(src["id"])
    return out


def gold_recall(answer: str, gold: str) -> float:
    truth = [stem(w) for w in normalize_answer(gold).split()]
    pred = {stem(w) for w in normalize_answer(answer).split()}
    return sum(t in pred for t in truth) / len(truth) if truth else 0.0


def evidence_rank(home: Path, question: str, asked_at: str, evidence: set[str]) -> int | None:
    """Where recall puts the first evidence turn in its top 50 (1-based; None: absent)."""
    from memagent.core import MemoryHome
    from memagent.memory.chunks import ChunkStore

    store = ChunkStore(MemoryHome.open(home), embeddings=True)
    try:
        now = datetime.fromisoformat(asked_at).replace(tzinfo=UTC).timestamp()
        hits = store.recall(question, k=50, now=now)
        for i, h in enumerate(hits, 1):
            src = h.to_json().get("source") or {}
            if isinstance(src, dict) and str(src.get("id")) in evidence:
                return i
        return None
    finally:
        store.close()


def asked_on(data: Path, conv: str) -> str:
    """The day the bench asks `conv`'s questions (the day after its last session)."""
    from bench.qa_locomo import load_conversation, questions_of

    return questions_of(conv, load_conversation(data / f"{conv}.json"))[0].asked_at


def classify(
    o: dict[str, Any], evidence: set[str], ids: dict[str, str], wrong: float
) -> str | None:
    in_ctx = bool(evidence & {ids.get(m, "") for m in o.get("memory_ids", [])})
    if o["category"] == 5:
        if o["score"] >= 1.0:
            return None
        return "answered, checked" if o.get("p_grounded") is not None else "answered, not checked"
    refused = o.get("refused_by")
    if refused:
        return f"refused by {refused}" + ("" if in_ctx else " (evidence not in context)")
    if o["score"] >= wrong:
        return None
    if "don't have that" in o["answer"].lower():
        return "model refused" + ("" if in_ctx else " (evidence not in context)")
    if not in_ctx:
        return "not recalled"
    if gold_recall(o["answer"], o["gold"]) >= 0.6:
        return "right, long"
    return "recalled, wrong"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.qa_errors", description=__doc__)
    ap.add_argument("run", type=Path, help="a bench.qa_locomo --json-out file")
    ap.add_argument("--arm", default=None, help="which run in the file (default: the first)")
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--workdir", type=Path, default=RESULTS / "qa_locomo_homes")
    ap.add_argument("--shape", default="full")
    ap.add_argument("--wrong", type=float, default=0.5, help="F1 under this is wrong")
    ap.add_argument("--list", nargs="*", default=[], metavar="CAUSE")
    ap.add_argument("--ranks", action="store_true", help="recall rank of missed evidence")
    args = ap.parse_args(argv)
    try:
        detail = json.loads(args.run.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(f"error: {args.run}: {exc}", file=sys.stderr)
        return 2
    arm = args.arm or next(iter(detail))
    outs = detail[arm]
    raw = {
        p.stem: json.loads(p.read_text(encoding="utf-8"))["qa"]
        for p in sorted(args.data.glob("conv-*.json"))
    }
    ids: dict[str, dict[str, str]] = {}
    causes: dict[int, Counter[str]] = defaultdict(Counter)
    listed: list[str] = []
    for o in outs:
        conv = o["conv"]
        if conv not in ids:
            ids[conv] = dia_ids(args.workdir / args.shape / conv)
        q = raw[conv][int(o["qid"][1:])]
        ev = evidence_of(q)
        cause = classify(o, ev, ids[conv], args.wrong)
        causes[o["category"]][cause or "ok"] += 1
        if cause and any(cause.startswith(c) for c in args.list):
            rank = ""
            if args.ranks and o["category"] != 5:
                home = args.workdir / args.shape / conv
                found = evidence_rank(home, q["question"], asked_on(args.data, conv), ev)
                rank = f" rank {found}"
            listed.append(
                f"[{cause}] {conv} {o['qid']} cat{o['category']} F1 {o['score']:.2f} "
                f"p={o.get('p_grounded')}{rank}\n  Q: {o['question']}\n  A: {o['answer']!r}\n"
                f"  G: {o['gold']!r}"
            )
    for cat in sorted(causes):
        total = sum(causes[cat].values())
        print(f"\n{CATEGORIES[cat]} ({total}):")
        for cause, n in causes[cat].most_common():
            print(f"  {n:4d}  {cause}")
    if listed:
        print("\n" + "\n".join(listed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
