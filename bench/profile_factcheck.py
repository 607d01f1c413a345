"""How well the model's "is this line a lasting fact about the writer?" separates
the lines learning should write from junk: `python -m bench.profile_factcheck`.

Runs each statement of the given sets through learning (`Reading.keep_at=None`:
the check off, so what is collected is what the plan writes today) and, for each
new line it writes (`factcheck.lines`), asks each wording's question and records
P(yes) with the line's label: good when the line matches an `expect` or `maybe`
item of its step, junk otherwise. Pairs go to `--pairs` (JSON lines); with
`--analyse` the file is read back and, for each wording, the AUC of P(yes) is
printed over all pairs and per set, then a leave-one-set-out choice: for each set,
the wording and cut that keep the most (junk removed - good lost) on the *other*
sets, applied to this one (what the held-out set would have gained).

Wordings (`bench/factcheck_wordings.yaml`): `lasting` (placeholder examples, "a
lasting fact about the person who wrote it?"), `true` (placeholder examples with a
stay and a garbled line, "is this profile line true of the person who wrote the
message?"), `plain` (no examples: "should this line be saved in their long-term
profile as true of them?"), and `extract` (the extraction prompt's own system text
and examples, as the gate asks: its prefix is already in llama.cpp's cache, so only
the question is evaluated), and `kind`: not a question about the writer but about the
value (`memory.profile.valuekind`: "In this message, is "horror films" a food, dish or
cuisine?"), asked only of lines in a list that holds one kind of thing (others: no
verdict, kept).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import yaml

from bench import profile_learn as pl
from memagent.core import MemoryHome
from memagent.llm import LLM, Message
from memagent.memory.profile import ProfileStore, init_profile, valuekind
from memagent.memory.profile._prompts import PromptSpec, render
from memagent.memory.profile.extract import DEFAULT_READING, Reading, _prefix, forceable
from memagent.memory.profile.factcheck import Line, ask, lines, question
from memagent.memory.profile.item_keys import match_key
from memagent.memory.profile.operations import AppendOp, UpdateOp
from memagent.memory.profile.pipeline import learn
from memagent.memory.profile.rules import rule_facts
from memagent.memory.profile.statements import screen

WORDINGS_FILE = Path(__file__).resolve().parent / "factcheck_wordings.yaml"
SPECS = {
    name: PromptSpec.model_validate(spec)
    for name, spec in yaml.safe_load(WORDINGS_FILE.read_text(encoding="utf-8")).items()
}
EXTRACT_ASK = (
    'Statement: {{ statement }}\nProfile line: "{{ line }}"\n'
    "Does the statement say this is a lasting fact about the writer? Answer yes or no."
)
WORDINGS = (*SPECS, "extract", "kind")


def messages(wording: str, statement: str, line: str, path: str = "") -> list[Message] | None:
    """The question `wording` asks of `line` (in list `path`); None where it asks
    nothing (`kind`: a list that takes any kind of thing)."""
    if wording in SPECS:
        return question(statement, line, SPECS[wording])
    if wording == "extract":
        text = render(EXTRACT_ASK, statement=statement[:600], line=line)
        return [*_prefix(), Message(role="user", content=text)]
    if wording == "kind":
        typed = valuekind.typed(Line(0, "", path, line))
        return None if typed is None else valuekind.question(statement, typed.value, typed.question)
    raise ValueError(f"unknown wording {wording!r}")


def collect(
    llm: LLM, sets: Sequence[Path], wordings: Sequence[str], out: Path, reading: Reading
) -> int:
    """One JSON line per new line written, with each wording's P(yes)."""
    n = 0
    with tempfile.TemporaryDirectory(prefix="memagent-bench-fc-") as tmp, out.open("w") as fh:
        for path in sets:
            for scn in pl.load_set(path):
                home = MemoryHome.open(Path(tmp) / f"{path.stem}-{scn.id}")
                init_profile(home)
                day = scn.date
                store = ProfileStore(home, today=lambda day=day: day)
                pl._seed(store, scn.given, scn.date)
                for step in scn.steps:
                    before = store.load_all()
                    try:
                        res = learn(store, llm, step.say, today=scn.date, reading=reading)
                    except Exception as exc:
                        print(f"  {scn.id}: {type(exc).__name__}: {exc}", file=sys.stderr)
                        continue
                    kept = screen(step.say).kept
                    statement = " ".join(" ".join(kept).split())
                    rules = {match_key(f.value) for f in rule_facts(kept)}
                    good = [pl.Entry.parse(e) for e in (*step.expect, *step.maybe)]
                    for line in lines(res.operations, before, scn.date):
                        op = res.operations[line.index]
                        assert isinstance(op, AppendOp | UpdateOp)  # what `lines` lists
                        item = str(op.value.item)
                        stored = pl.Stored(line.path, item, line.text, None)
                        rec: dict[str, Any] = {
                            "set": path.stem,
                            "id": scn.id,
                            "tag": step.tag,
                            "say": statement,
                            "line": line.text,
                            "path": line.path,
                            "op": op.operation,
                            "good": any(pl.matches(e, stored) for e in good),
                            "rule": match_key(item) in rules,
                            "forced": any(forceable([s]) for s in kept),
                        }
                        for w in wordings:
                            started = time.perf_counter()
                            asked = messages(w, statement, line.text, line.path)
                            rec[w] = None if asked is None else ask(llm, asked)
                            rec[f"{w}_s"] = round(time.perf_counter() - started, 3)
                        fh.write(json.dumps(rec) + "\n")
                        fh.flush()
                        n += 1
    return n


def auc(pos: Sequence[float], neg: Sequence[float]) -> float | None:
    """P(a good line's P(yes) > a junk line's), ties half."""
    if not pos or not neg:
        return None
    wins = sum((p > q) + 0.5 * (p == q) for p in pos for q in neg)
    return wins / (len(pos) * len(neg))


CUTS = tuple(round(0.05 * k, 2) for k in range(1, 20))


def gain(rows: Sequence[dict[str, Any]], wording: str, cut: float) -> tuple[int, int]:
    """(junk removed, good lost) at `cut`; a line without a verdict is kept."""
    junk = sum(1 for r in rows if not r["good"] and r[wording] is not None and r[wording] < cut)
    lost = sum(1 for r in rows if r["good"] and r[wording] is not None and r[wording] < cut)
    return junk, lost


def per_list_cuts(rows: Sequence[dict[str, Any]], wording: str) -> dict[str, float]:
    """For each list, the cut (0 to 0.95) that gains most on `rows`, the lowest on a tie."""
    out: dict[str, float] = {}
    for path in {r["path"] for r in rows}:
        part = [r for r in rows if r["path"] == path]
        out[path] = max((0.0, *CUTS), key=lambda c: (net(gain(part, wording, c)), -c))
    return out


def net(removed_lost: tuple[int, int]) -> int:
    """Junk removed less good lines lost: what a cut gains, one line each."""
    return removed_lost[0] - removed_lost[1]


def analyse(rows: list[dict[str, Any]], wordings: Sequence[str]) -> None:
    sets = sorted({r["set"] for r in rows})
    print(
        f"{len(rows)} lines: {sum(r['good'] for r in rows)} good, "
        f"{sum(not r['good'] for r in rows)} junk"
    )
    subsets: list[tuple[str, Callable[[dict[str, Any]], bool]]] = [
        ("all", lambda r: True),
        ("model's (not rule)", lambda r: not r["rule"]),
        ("model's, forced read", lambda r: not r["rule"] and r["forced"]),
    ]
    for subset, keep in subsets:
        part = [r for r in rows if keep(r)]
        print(f"\n{subset}: {len(part)} lines, {sum(not r['good'] for r in part)} junk")
        for w in wordings:
            got = [r for r in part if r.get(w) is not None]
            pos = [r[w] for r in got if r["good"]]
            neg = [r[w] for r in got if not r["good"]]
            per = {
                s: auc(
                    [r[w] for r in got if r["good"] and r["set"] == s],
                    [r[w] for r in got if not r["good"] and r["set"] == s],
                )
                for s in sets
            }
            secs = sorted(r[f"{w}_s"] for r in part)
            print(
                f"  {w:8s} AUC {auc(pos, neg) or 0:.3f}  no verdict {len(part) - len(got)}  "
                f"median s {secs[len(secs) // 2] if secs else 0:.2f}  "
                + " ".join(f"{s}:{v:.2f}" for s, v in per.items() if v is not None)
            )
            for cut in (0.2, 0.3, 0.4, 0.5, 0.6, 0.7):
                junk, lost = gain(part, w, cut)
                print(
                    f"      cut {cut}: junk removed {junk}/{len(neg)}, good lost {lost}/{len(pos)}"
                )
        print("  leave one set out (wording and cut chosen on the other sets):")
        tot_j = tot_l = 0
        for s in sets:
            train = [r for r in part if r["set"] != s]
            test = [r for r in part if r["set"] == s]
            best = max(
                ((w, c) for w in wordings for c in CUTS), key=lambda wc: net(gain(train, *wc))
            )
            junk, lost = gain(test, *best)
            tot_j, tot_l = tot_j + junk, tot_l + lost
            print(
                f"    {s:16s} {best[0]:8s} cut {best[1]:.2f}: junk removed {junk}/"
                f"{sum(not r['good'] for r in test)}, good lost {lost}/"
                f"{sum(r['good'] for r in test)}"
            )
        print(f"    total: junk removed {tot_j}, good lost {tot_l}")
    print("\na cut per list, leave one set out (each list's cut chosen on the other sets):")
    for w in wordings:
        tot_j = tot_l = 0
        for s in sets:
            train = [r for r in rows if r["set"] != s and r.get(w) is not None]
            test = [r for r in rows if r["set"] == s and r.get(w) is not None]
            cuts = per_list_cuts(train, w)
            junk = sum(1 for r in test if not r["good"] and r[w] < cuts.get(r["path"], 0.0))
            lost = sum(1 for r in test if r["good"] and r[w] < cuts.get(r["path"], 0.0))
            tot_j, tot_l = tot_j + junk, tot_l + lost
        print(
            f"  {w:8s} junk removed {tot_j}/{sum(not r['good'] for r in rows)}, "
            f"good lost {tot_l}/{sum(r['good'] for r in rows)}"
        )
    print("\nby list (first wording):")
    w = wordings[0]
    for path in sorted({r["path"] for r in rows}):
        part = [r for r in rows if r["path"] == path and r.get(w) is not None]
        area = auc([r[w] for r in part if r["good"]], [r[w] for r in part if not r["good"]])
        print(
            f"  {path:22s} {len(part):4d} lines, {sum(not r['good'] for r in part):3d} junk, "
            f"AUC {'n/a' if area is None else f'{area:.2f}'}"
        )
    none = [r for r in rows if r["tag"] in ("none", "hostile") and r.get(w) is not None]
    print(
        f"lines from statements with no fact: {len(none)}, P(yes) "
        + " ".join(f"{r[w]:.2f}" for r in sorted(none, key=lambda r: r[w]))
    )


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.profile_factcheck", description=__doc__)
    ap.add_argument("--set", type=Path, action="append", dest="sets", default=[])
    ap.add_argument("--pairs", type=Path, required=True, help="the (line, label, P) JSON lines")
    ap.add_argument("--wording", action="append", choices=WORDINGS)
    ap.add_argument("--analyse", action="store_true", help="read --pairs back and print figures")
    ap.add_argument("--model", choices=("scripted", "embedded"), default="embedded")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--cache", type=Path, help="the prompt-hash cache (bench.qa_cache)")
    args = ap.parse_args(argv)
    wordings = args.wording or list(WORDINGS)
    if not args.analyse:
        if not args.sets:
            ap.error("--set is needed to collect")
        if args.model == "scripted":
            llm: LLM = pl.oracle_llm([s for p in args.sets for s in pl.load_set(p)])
        else:
            from memagent.llm.embedded import EmbeddedLLM

            llm = EmbeddedLLM(threads=args.threads)
            if args.cache is not None:
                from bench.qa_cache import cached_llm

                llm = cached_llm(llm, args.cache)
        reading = dataclasses.replace(DEFAULT_READING, keep_at=None, check_kinds=False)  # unchecked
        print(collect(llm, args.sets, wordings, args.pairs, reading), "lines")
    rows = [json.loads(x) for x in args.pairs.read_text().splitlines() if x.strip()]
    analyse(rows, [w for w in wordings if any(w in r for r in rows)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
