"""Two QA runs on the same questions, compared: `python -m bench.qa_compare BASE.json NEW.json`.

Input: two `bench.qa_locomo --json-out` files (the first arm of each). The
questions both runs answered are paired by (conversation, question id); each
figure is printed for both runs and for their difference NEW - BASE, with a
paired bootstrap 95% interval (the same questions resampled for both runs).

Why paired: two runs on one 200-question sample share the questions' difficulty,
so the difference varies far less than either figure, and an interval on it
says whether a change moved the figure, where two overlapping unpaired intervals
say nothing. The figures are `bench.qa_locomo`'s: F1 of categories 1-4,
adversarial refusal, answerable questions refused, the paper's overall score
(category means weighted by their share of all the dev conversations'
questions), and the cost per question when both files count it: model calls,
prompt tokens evaluated (not from the reused prefix) and tokens generated. No
model is called.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.qa_locomo import DATA, load_conversation, questions_of
from bench.qa_scoring import refuses
from bench.qa_stats import bootstrap_ci, mean_or_none


@dataclass(frozen=True)
class Answer:
    """One question's outcome in one run, as the figures read it."""

    category: int
    score: float
    """F1 (category 5: 1 when refused)."""
    refused: bool
    """The answer is a refusal (as `bench.qa_locomo` counts it)."""
    calls: int | None = None
    """Model calls; None in a file written before `bench.qa_locomo` counted them."""
    evaluated: int | None = None
    """Prompt tokens not served from the reused prefix (same)."""
    generated: int = 0


Pair = tuple[Answer, Answer]


def answers(path: Path) -> dict[tuple[str, str], Answer]:
    """The first arm's outcomes of a `--json-out` file, by (conversation, question id)."""
    detail = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(detail, dict) or not detail:
        raise ValueError(f"{path}: not a bench.qa_locomo --json-out file")
    out: dict[tuple[str, str], Answer] = {}
    for o in next(iter(detail.values())):
        out[(str(o["conv"]), str(o["qid"]))] = Answer(
            int(o["category"]),
            float(o["score"]),
            refuses(str(o["answer"])),
            int(o["calls"]) if "calls" in o else None,
            int(o["evaluated_tokens"]) if "evaluated_tokens" in o else None,
            int(o.get("completion_tokens") or 0),
        )
    return out


def _f1(xs: list[Answer]) -> float | None:
    return mean_or_none([a.score for a in xs if a.category != 5])


def _adv(xs: list[Answer]) -> float | None:
    return mean_or_none([float(a.refused) for a in xs if a.category == 5])


def _ans_refused(xs: list[Answer]) -> float | None:
    return mean_or_none([float(a.refused) for a in xs if a.category != 5])


def _overall(weights: dict[int, float]) -> Callable[[list[Answer]], float | None]:
    def stat(xs: list[Answer]) -> float | None:
        cats: dict[int, list[float]] = {}
        for a in xs:
            cats.setdefault(a.category, []).append(a.score)
        total = sum(weights.get(c, 0.0) for c in cats)
        if not total:
            return None
        return 100 * sum(weights.get(c, 0.0) * sum(v) / len(v) for c, v in cats.items()) / total

    return stat


def _cost(field: str) -> Callable[[list[Answer]], float | None]:
    def stat(xs: list[Answer]) -> float | None:
        return mean_or_none([float(getattr(a, field) or 0) for a in xs])

    return stat


def _difference(
    stat: Callable[[list[Answer]], float | None],
) -> Callable[[list[Pair]], float | None]:
    def diff(xs: list[Pair]) -> float | None:
        a, b = stat([p[0] for p in xs]), stat([p[1] for p in xs])
        return None if a is None or b is None else b - a

    return diff


def compare(
    pairs: list[Pair], weights: dict[int, float], seed: int = 12
) -> dict[str, tuple[Any, Any, Any]]:
    """Each figure: (BASE, NEW, NEW - BASE) estimates with bootstrap intervals."""
    stats: dict[str, Callable[[list[Answer]], float | None]] = {
        "F1 cats 1-4": _f1,
        "adversarial refusal": _adv,
        "answerable refused": _ans_refused,
        "overall (paper)": _overall(weights),
    }
    if all(a.calls is not None and a.evaluated is not None for p in pairs for a in p):
        stats["model calls/question"] = _cost("calls")
        stats["prompt tokens evaluated/question"] = _cost("evaluated")
        stats["generated tokens/question"] = _cost("generated")
    out: dict[str, tuple[Any, Any, Any]] = {}
    for name, stat in stats.items():
        base = bootstrap_ci([p[0] for p in pairs], stat, seed=seed)
        new = bootstrap_ci([p[1] for p in pairs], stat, seed=seed)
        out[name] = (base, new, bootstrap_ci(pairs, _difference(stat), seed=seed))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.qa_compare", description=__doc__,
                                 formatter_class=argparse.RawTextHelpFormatter)  # fmt: skip
    ap.add_argument("base", type=Path)
    ap.add_argument("new", type=Path)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--seed", type=int, default=12)
    args = ap.parse_args(argv)
    try:
        base, new = answers(args.base), answers(args.new)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    keys = sorted(base.keys() & new.keys())
    if not keys:
        print("error: the runs share no question", file=sys.stderr)
        return 2
    counts: Counter[int] = Counter()
    for p in sorted(args.data.glob("conv-*.json")):
        counts.update(q.category for q in questions_of(p.stem, load_conversation(p)))
    weights = {c: n / sum(counts.values()) for c, n in counts.items()}
    pairs = [(base[k], new[k]) for k in keys]
    print(f"{len(keys)} questions in both runs ({len(base)} in base, {len(new)} in new)")
    print("| figure | base | new | new - base (paired) |\n|---|---|---|---|")
    for name, (b, n, d) in compare(pairs, weights, args.seed).items():
        digits = 1 if name.startswith("overall") else 3
        print(f"| {name} | {b.show(digits)} | {n.show(digits)} | {d.show(digits)} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
