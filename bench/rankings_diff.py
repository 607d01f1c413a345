"""Compare two files of rankings question by question (`--rankings` of
`bench.recall_locomo` and `bench.recall_longmemeval`).

    python -m bench.rankings_diff BEFORE.jsonl AFTER.jsonl [--show 5]

Prints, per system, how many questions were ranked, how many rankings differ
(another id, or the same ids in another order) and how many differ only in a
score (beyond 1e-9 relative). A refactoring of the ranking must print 0
differing rankings; exit status 1 when any ranking differs or a question is
missing from one file.
"""

from __future__ import annotations

import argparse
import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

Key = tuple[str, str, int]


def load(path: Path) -> dict[Key, list[list[Any]]]:
    out: dict[Key, list[list[Any]]] = {}
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                out[(r["system"], r["group"], int(r["question"]))] = r["ranked"]
    return out


def compare(
    before: dict[Key, list[list[Any]]], after: dict[Key, list[list[Any]]]
) -> dict[str, dict[str, Any]]:
    """Per system: questions, differing rankings, score-only differences, missing keys."""
    report: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"questions": 0, "rankings": 0, "scores": 0, "missing": 0, "examples": []}
    )
    for key in sorted(set(before) | set(after)):
        r = report[key[0]]
        if key not in before or key not in after:
            r["missing"] += 1
            continue
        r["questions"] += 1
        a, b = before[key], after[key]
        if [x[0] for x in a] != [x[0] for x in b]:
            r["rankings"] += 1
            r["examples"].append(key)
        elif any(not math.isclose(x[1], y[1], rel_tol=1e-9) for x, y in zip(a, b, strict=True)):
            r["scores"] += 1
    return dict(report)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    ap.add_argument("--show", type=int, default=5, help="differing questions listed per system")
    args = ap.parse_args(argv)
    report = compare(load(args.before), load(args.after))
    bad = 0
    print(
        f"{'system':<20} {'questions':>9} {'rankings differ':>16} {'scores differ':>14} "
        f"{'missing':>8}"
    )
    for system, r in sorted(report.items()):
        print(
            f"{system:<20} {r['questions']:>9} {r['rankings']:>16} {r['scores']:>14} "
            f"{r['missing']:>8}"
        )
        for key in r["examples"][: args.show]:
            print(f"    differs: {key[1]} question {key[2]}")
        bad += r["rankings"] + r["missing"]
    total = sum(r["questions"] for r in report.values())
    diff = sum(r["rankings"] for r in report.values())
    print(f"total: {diff} of {total} rankings differ")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
