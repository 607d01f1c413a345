"""When to refuse, chosen by leave-one-conversation-out: `python -m bench.qa_decide RUN.json …`.

Input: `bench.qa_locomo --json-out` files of *relaxed* runs, where nothing but
speaker attribution and the focus check refused, so every question has an
answer, the grounding check's P(yes) and, when the question names one speaker,
the contrast probe's P(yes) (`--set verify_min=0.01 contrast_below=1.0
contrast_margin=1.0`). Several runs (other `--seed`s) pool their questions; a
question in two runs counts once.

The agent's refusal decision is replayed on them for every point of a grid:

1. the grounding check refuses when P(yes) < `verify_min`;
2. the contrast probe refuses when P(yes) < `contrast_below` and the swapped
   question's P(yes) is at least `contrast_margin` higher;
3. the reply checks (`memagent.agent.reply_check`, on or off) refuse a reply
   resting on what was said about someone else, a question, a bare yes/no to a
   wh-question; they are run on each question's answer and the memory context it
   was given (rebuilt from the imported homes: recall is deterministic).

Each conversation is scored with the grid point best on the other four
(`--objective`: the paper's overall score, or F1 of categories 1–4 subject to
an adversarial refusal of at least `--min-refusal` on the training folds), and
the held-out figures are pooled with bootstrap 95% intervals, beside the
in-sample best (optimistic). No model is called.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.qa_cache import RESULTS
from bench.qa_locomo import DATA, load_conversation, questions_of
from bench.qa_scoring import CATEGORIES, refuses
from bench.qa_stats import bootstrap_ci, mean_or_none

VERIFY_MIN = (0.5, 0.55, 0.6, 0.62, 0.64, 0.66, 0.68, 0.7, 0.72, 0.74, 0.76, 0.78, 0.8)
CONTRAST_MARGIN = (0.0, 0.05, 0.1, 0.2)
CONTRAST_BELOW = (0.0, 0.9, 1.0)
REPLY_CHECKS = (False, True)


@dataclass(frozen=True)
class Case:
    """One question of a relaxed run, with what the decision reads."""

    conv: str
    qid: str
    category: int
    score: float
    """F1 of the answer (category 5: 1 when it refused)."""
    gated: bool
    """Refused before the model: attribution, focus, or the model refused itself."""
    p_yes: float | None
    p_other: float | None
    reply_miss: bool
    """The reply checks refuse the answer."""


@dataclass(frozen=True)
class Point:
    verify_min: float
    contrast_margin: float
    contrast_below: float
    reply_checks: bool

    def label(self) -> str:
        return (
            f"verify_min={self.verify_min} contrast_margin={self.contrast_margin} "
            f"contrast_below={self.contrast_below} reply_checks={self.reply_checks}"
        )


def refused(c: Case, g: Point) -> bool:
    if c.gated:
        return True
    if g.reply_checks and c.reply_miss:
        return True
    if c.p_yes is None:
        return False
    if c.p_yes < g.verify_min:
        return True
    return (
        c.p_other is not None
        and c.p_yes < g.contrast_below
        and c.p_other - c.p_yes >= g.contrast_margin
    )


def scored(c: Case, g: Point) -> float:
    no = refused(c, g)
    if c.category == 5:
        return 1.0 if no else 0.0
    return 0.0 if no else c.score


def overall(cases: list[Case], g: Point, weights: dict[int, float]) -> float | None:
    cats: dict[int, list[float]] = {}
    for c in cases:
        cats.setdefault(c.category, []).append(scored(c, g))
    total = sum(weights.get(k, 0.0) for k in cats)
    if not total:
        return None
    return sum(weights.get(k, 0.0) * sum(v) / len(v) for k, v in cats.items()) / total


def figures(
    pairs: list[tuple[Case, Point]], weights: dict[int, float], seed: int
) -> dict[str, Any]:
    def f1(xs: list[tuple[Case, Point]]) -> float | None:
        return mean_or_none([scored(c, g) for c, g in xs if c.category != 5])

    def adv(xs: list[tuple[Case, Point]]) -> float | None:
        return mean_or_none([float(refused(c, g)) for c, g in xs if c.category == 5])

    def ans_refused(xs: list[tuple[Case, Point]]) -> float | None:
        return mean_or_none([float(refused(c, g)) for c, g in xs if c.category != 5])

    def ov(xs: list[tuple[Case, Point]]) -> float | None:
        cats: dict[int, list[float]] = {}
        for c, g in xs:
            cats.setdefault(c.category, []).append(scored(c, g))
        total = sum(weights.get(k, 0.0) for k in cats)
        return (
            sum(weights.get(k, 0.0) * sum(v) / len(v) for k, v in cats.items()) / total
            if total
            else None
        )

    return {
        "F1 cats 1-4": bootstrap_ci(pairs, f1, seed=seed),
        "adversarial refusal": bootstrap_ci(pairs, adv, seed=seed),
        "answerable refused": bootstrap_ci(pairs, ans_refused, seed=seed),
        "overall (paper)": bootstrap_ci(pairs, ov, seed=seed),
    }


def load_cases(runs: list[Path], workdir: Path, shape: str, data: Path) -> list[Case]:
    """Every question of the runs, once, with its features (module doc)."""
    from memagent.agent.memory import MemoryAccess
    from memagent.agent.reply_check import check_reply
    from memagent.core import MemoryHome

    seen: dict[tuple[str, str], Case] = {}
    memories: dict[str, MemoryAccess] = {}
    asked: dict[str, float] = {}
    for run in runs:
        detail = json.loads(run.read_text(encoding="utf-8"))
        for outcome in next(iter(detail.values())):
            key = (str(outcome["conv"]), str(outcome["qid"]))
            if key in seen:
                continue
            conv = key[0]
            if conv not in memories:
                memories[conv] = MemoryAccess(MemoryHome.open(workdir / shape / conv))
                day = questions_of(conv, load_conversation(data / f"{conv}.json"))[0].asked_at
                asked[conv] = datetime.fromisoformat(day).replace(tzinfo=UTC).timestamp()
            mem = memories[conv]
            cfg = mem.home.config.agent
            answer, question = str(outcome["answer"]), str(outcome["question"])
            judged = list(outcome.get("judged") or [])
            self_refused = refuses(answer) and not outcome.get("refused_by")
            miss = False
            if not outcome.get("refused_by") and not self_refused:
                ctx = mem.context(question, budget_tokens=cfg.context_tokens, k=cfg.recall_k,
                                  min_ratio=cfg.recall_min_ratio, now=asked[conv])  # fmt: skip
                miss = check_reply(answer, question, ctx, short=True) is not None
            seen[key] = Case(
                conv,
                key[1],
                int(outcome["category"]),
                float(outcome["score"]),
                bool(outcome.get("refused_by")) or self_refused,
                judged[0] if judged else None,
                judged[1] if len(judged) > 1 else None,
                miss,
            )
    for mem in memories.values():
        mem.close()
    return list(seen.values())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.qa_decide", description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)  # fmt: skip
    ap.add_argument("runs", type=Path, nargs="+", help="relaxed bench.qa_locomo --json-out files")
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--workdir", type=Path, default=RESULTS / "qa_locomo_homes")
    ap.add_argument("--shape", default="full")
    ap.add_argument("--objective", choices=("overall", "f1"), default="overall")
    ap.add_argument("--min-refusal", type=float, default=0.78, help="with --objective f1")
    ap.add_argument("--seed", type=int, default=12)
    args = ap.parse_args(argv)
    try:
        cases = load_cases(args.runs, args.workdir, args.shape, args.data)
    except (OSError, ValueError, KeyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    counts: Counter[int] = Counter()
    for p in sorted(args.data.glob("conv-*.json")):
        counts.update(q.category for q in questions_of(p.stem, load_conversation(p)))
    weights = {c: n / sum(counts.values()) for c, n in counts.items()}
    grid = [Point(*p) for p in itertools.product(VERIFY_MIN, CONTRAST_MARGIN, CONTRAST_BELOW,
                                                  REPLY_CHECKS)]  # fmt: skip

    def objective(cs: list[Case], g: Point) -> float:
        ov = overall(cs, g, weights) or 0.0
        if args.objective == "overall":
            return ov
        ans = [scored(c, g) for c in cs if c.category != 5]
        adv = [float(refused(c, g)) for c in cs if c.category == 5]
        f1, ar = sum(ans) / max(len(ans), 1), sum(adv) / max(len(adv), 1)
        return f1 if ar >= args.min_refusal else f1 - 10 + ar

    convs = sorted({c.conv for c in cases})
    n = Counter(CATEGORIES[c.category] for c in cases)
    print(f"{len(cases)} questions ({dict(sorted(n.items()))}) from {len(args.runs)} run(s); "
          f"objective {args.objective}")  # fmt: skip
    print("\n| held out | picked on the other four |\n|---|---|")
    pooled: list[tuple[Case, Point]] = []
    for held in convs:
        train = [c for c in cases if c.conv != held]
        best = max(grid, key=lambda g: objective(train, g))
        pooled += [(c, best) for c in cases if c.conv == held]
        print(f"| {held} | {best.label()} |")
    print("\nheld-out, pooled (the figure to quote):")
    for name, est in figures(pooled, weights, args.seed).items():
        scale = 100.0 if name.startswith("overall") else 1.0
        print(f"  {name}: {est.show(1 if scale == 100.0 else 3, scale)}")
    best = max(grid, key=lambda g: objective(cases, g))
    print(f"\nin-sample best (optimistic): {best.label()}")
    for name, est in figures([(c, best) for c in cases], weights, args.seed).items():
        scale = 100.0 if name.startswith("overall") else 1.0
        print(f"  {name}: {est.show(1 if scale == 100.0 else 3, scale)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
