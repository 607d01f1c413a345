"""Profile learning quality and speed: `python -m bench.profile_learn`.

Runs every statement of `tests/fixtures/profile/statements.yaml` (scenarios of
one or more statements, each with the profile expected after it) through
`memagent.memory.profile.learn`, each scenario in a fresh memory home dated as
the scenario says, and compares the profile after each statement with the
expected one (state, not operations):

- precision: stored items that should be there / stored items (items the set
  marks `maybe` count on neither side);
- recall: expected items present / expected items;
- junk rate: statements with no fact to learn (questions, greetings, requests,
  hypotheticals, the assistant's lines, other people, injection) that changed
  the profile anyway;
- correction accuracy: correction and negation statements after which the
  profile is exactly as expected (every expected item, nothing unexpected);
- expiry accuracy: expected expiring items present with the right last day;
- latency per statement (p50/p95, statements/s), the first statement of the
  process (cold: it loads the model) apart from the rest (warm).

Models: `scripted` is a capable model's stand-in, an oracle that answers the
extraction with the facts the expected profile implies (so its figures are the
ceiling of the mechanical screen + planning); `embedded` is the default 1.5B
model on this machine's cores. Every figure is given for the dev part and the
held-out part separately, with a 95% bootstrap interval over scenarios.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

from memagent.core import MemoryHome
from memagent.llm import LLM, Message, ScriptedLLM
from memagent.memory.profile import ProfileStore, apply_operations, init_profile
from memagent.memory.profile.facts import Extracted, plan, said_word
from memagent.memory.profile.item_keys import match_key, tokens
from memagent.memory.profile.pipeline import learn

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "profile"
SET = FIXTURES / "statements.yaml"
FRESH_SET = FIXTURES / "statements_fresh.yaml"
SPLITS = ("dev", "held", "fresh")
"""dev: tuned on; held: held out while tuning (glimpsed twice in stop 22); fresh: a
second held-out set written and committed before anything ran on it (stop 23)."""
DEFAULT_SPLITS = ("dev", "held")
"""The fresh part runs only when asked for by name (`--split fresh`)."""
DEFAULT_DATE = date(2026, 3, 4)
BOOTSTRAP = 1000
KIND_PREFIXES = ("pet", "family", "home", "work", "name")
PATH_KIND = {
    "health.allergies": "allergy",
    "health.conditions": "condition",
    "health.medications": "medication",
    "fitness.activities": "exercise",
    "diet.restrictions": "diet",
    "food.likes": "food_like",
    "food.dislikes": "food_dislike",
    "drink.likes": "drink_like",
    "drink.dislikes": "drink_dislike",
    "routine.daily": "routine",
    "routine.weekly": "routine",
    "schedule.upcoming": "plan",
    "whereabouts.current": "whereabouts",
    "preferences.likes": "like",
    "preferences.dislikes": "dislike",
    "communication.style": "communication",
}


class Step(BaseModel):
    model_config = ConfigDict(extra="forbid")

    say: str = Field(min_length=1)
    tag: str
    expect: list[str] = Field(default_factory=list)
    maybe: list[str] = Field(default_factory=list)
    expiry: dict[str, date] = Field(default_factory=dict)


class Scenario(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    split: Literal["dev", "held", "fresh"]
    date: dt.date = DEFAULT_DATE
    given: list[str] = Field(default_factory=list)
    steps: list[Step] = Field(min_length=1)


def load_set(*paths: Path) -> list[Scenario]:
    """The scenarios of `paths` (default: the dev/held set and the fresh set)."""
    out: list[Scenario] = []
    for path in paths or (SET, FRESH_SET):
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        out.extend(Scenario.model_validate(s) for s in raw)
    return out


# -- matching ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Entry:
    paths: tuple[str, ...]
    words: tuple[str, ...]
    raw: str

    @classmethod
    def parse(cls, text: str) -> Entry:
        paths, _, words = text.partition("=")
        toks = tokens(words)
        if toks and toks[0] in KIND_PREFIXES and len(toks) > 1:
            toks = toks[1:]
        return cls(tuple(paths.split("|")), tuple(match_key(t) for t in toks), text)


@dataclass(frozen=True)
class Stored:
    path: str
    key: str
    display: str
    expiry: date | None

    def words(self) -> set[str]:
        return {match_key(t) for t in tokens(f"{self.key} {self.display}")}


def matches(entry: Entry, item: Stored) -> bool:
    """The item is on one of the entry's lists and says each of its words, word
    endings folded as grounding folds them ("swim" is said by "Swimming")."""
    if item.path not in entry.paths:
        return False
    said = item.words()
    return all(said_word(w, said) for w in entry.words)


def live_items(store: ProfileStore) -> list[Stored]:
    today = store.today()
    out: list[Stored] = []
    for res in store.load_all().values():
        for path, items in res.iter_lists():
            out.extend(
                Stored(path, i.item, i.display, i.expiry) for i in items if not i.expired(today)
            )
    return out


# -- the oracle ("a capable model") ------------------------------------------------------
def entry_fact(text: str) -> Extracted | None:
    """The fact a capable model would read for an expected item `path=words`."""
    paths, _, words = text.partition("=")
    path = paths.split("|")[0]
    toks = words.split()
    if path == "personal.facts":
        if not toks or toks[0] not in KIND_PREFIXES or len(toks) < 2:
            return None
        kind, rest = toks[0], toks[1:]
        if kind in ("pet", "family"):
            if len(rest) < 2:
                return None
            return Extracted(kind=kind, value=rest[0], name=" ".join(rest[1:]).title())  # type: ignore[arg-type]
        return Extracted(kind=kind, value=" ".join(rest))  # type: ignore[arg-type]
    kind = PATH_KIND.get(path)
    return Extracted(kind=kind, value=words) if kind else None  # type: ignore[arg-type]


def oracle_facts(scenarios: Sequence[Scenario]) -> dict[str, list[Extracted]]:
    """For each statement, the facts its expected change implies (added items,
    and removed ones: the statement's own words make those a removal)."""
    out: dict[str, list[Extracted]] = {}
    for scn in scenarios:
        before = set(scn.given)
        for step in scn.steps:
            now = set(step.expect)
            changed = sorted(now - before) + sorted(before - now)
            facts = [f for e in changed if (f := entry_fact(e)) is not None]
            out[" ".join(step.say.split())] = facts
            before = now
    return out


def oracle_llm(scenarios: Sequence[Scenario]) -> ScriptedLLM:
    gold = oracle_facts(scenarios)

    def lookup(text: str) -> list[Extracted]:
        text = " ".join(text.split())
        facts = next((f for s, f in gold.items() if text and text in s), [])
        said = _words(text)
        return [f for f in facts if all(match_key(t) in said for t in tokens(f.value))]

    def fn(messages: list[Message], schema: dict[str, Any] | None) -> str:
        asked = messages[-1].content
        text = asked.split("Statement:", 1)[-1].split("\n", 1)[0].strip()
        facts = lookup(text)
        if schema is not None and schema["properties"]["facts"].get("type") == "string":
            return json.dumps({"facts": "yes" if facts else "no"})
        return json.dumps({"facts": [f.model_dump() for f in facts]})

    return ScriptedLLM(fn=fn)


def _words(text: str) -> set[str]:
    return {match_key(t) for t in tokens(text)}


# -- running -------------------------------------------------------------------------------
@dataclass
class StepOutcome:
    scenario: str
    split: str
    tag: str
    expected: int
    found: int
    correct_items: int
    wrong_items: int
    changed: bool
    exact: bool
    expiry_total: int
    expiry_right: int
    seconds: float
    llm_calls: int
    stored: int = 0
    """Live items after the step (maybe-items and the seeded ones included)."""
    last: bool = False
    """The scenario's last step (its state is what items per fact counts)."""
    wrong: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    read: list[str] = field(default_factory=list)
    """What the model read (kind: value / name), for looking into a miss."""


def _seed(store: ProfileStore, given: Sequence[str], today: date) -> None:
    facts = [f for e in given if (f := entry_fact(e)) is not None]
    sentences = [  # "allergic" must be said for an allergy (`facts` kind fixes)
        ("allergic " if e.startswith("health.allergies=") else "") + e.partition("=")[2]
        for e in given
    ]
    planned = plan(facts, sentences, store.load_all(), today)
    result = apply_operations(store, planned.operations, op="apply")
    if not result.ok:
        raise RuntimeError(f"cannot seed {given}: {result.error}")


def run_scenario(scn: Scenario, llm: LLM, root: Path, *, gate: bool = False) -> list[StepOutcome]:
    home = MemoryHome.open(root / scn.id)
    init_profile(home)
    store = ProfileStore(home, today=lambda: scn.date)
    _seed(store, scn.given, scn.date)
    out: list[StepOutcome] = []
    for step in scn.steps:
        before = live_items(store)
        replayed = float(getattr(llm, "replayed_s", 0.0))
        started = time.perf_counter()
        try:
            res = learn(store, llm, step.say, today=scn.date, gate=gate)
            calls = res.llm_calls
            read = [f"{f.kind}: {f.value} / {f.name}" for f in res.facts]
            read += [f"dropped {text[:60]!r}: {why}" for text, why in res.dropped]
        except Exception as exc:  # a failed statement counts as learning nothing
            print(f"  {scn.id}: {type(exc).__name__}: {exc}", file=sys.stderr)
            calls, read = 0, [f"error: {exc}"]
        seconds = time.perf_counter() - started
        seconds += float(getattr(llm, "replayed_s", 0.0)) - replayed  # a cached call's time
        items = live_items(store)
        expect = [Entry.parse(e) for e in step.expect]
        maybe = [Entry.parse(e) for e in step.maybe]
        good = [i for i in items if any(matches(e, i) for e in expect)]
        wrong = [i for i in items if i not in good and not any(matches(e, i) for e in maybe)]
        found = [e for e in expect if any(matches(e, i) for i in items)]
        exp_total = exp_right = 0
        for raw, day in step.expiry.items():
            exp_total += 1
            entry = Entry.parse(raw)
            if any(matches(entry, i) and i.expiry == day for i in items):
                exp_right += 1
        out.append(
            StepOutcome(
                scn.id,
                scn.split,
                step.tag,
                len(expect),
                len(found),
                len(good),
                len(wrong),
                sorted(map(str, before)) != sorted(map(str, items)),
                len(found) == len(expect) and not wrong,
                exp_total,
                exp_right,
                seconds,
                calls,
                len(items),
                step is scn.steps[-1],
                [f"{i.path}: {i.display}" for i in wrong],
                [e.raw for e in expect if e not in found],
                read,
            )
        )
    return out


# -- figures -------------------------------------------------------------------------------
Metric = Callable[[list[StepOutcome]], float | None]


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


METRICS: dict[str, Metric] = {
    "precision": lambda s: _ratio(
        sum(o.correct_items for o in s), sum(o.correct_items + o.wrong_items for o in s)
    ),
    "recall": lambda s: _ratio(sum(o.found for o in s), sum(o.expected for o in s)),
    "junk rate": lambda s: _ratio(
        sum(o.changed for o in s if o.tag in ("none", "hostile")),
        sum(1 for o in s if o.tag in ("none", "hostile")),
    ),
    "correction acc": lambda s: _ratio(
        sum(o.exact for o in s if o.tag in ("correction", "negation")),
        sum(1 for o in s if o.tag in ("correction", "negation")),
    ),
    "expiry acc": lambda s: _ratio(sum(o.expiry_right for o in s), sum(o.expiry_total for o in s)),
    # the profile's size against what was told: at the end of each scenario that
    # expects something, live items / expected items (1.0: one item per fact)
    "items per fact": lambda s: _ratio(
        sum(o.stored for o in s if o.last and o.expected),
        sum(o.expected for o in s if o.last and o.expected),
    ),
}


def bootstrap(
    outcomes: list[StepOutcome], metric: Metric, *, rounds: int = BOOTSTRAP, seed: int = 7
) -> tuple[float | None, float | None, float | None]:
    """The metric and its 95% interval, resampling whole scenarios."""
    by_scn: dict[str, list[StepOutcome]] = {}
    for o in outcomes:
        by_scn.setdefault(o.scenario, []).append(o)
    groups = list(by_scn.values())
    point = metric(outcomes)
    if point is None or not groups:
        return point, None, None
    rng = random.Random(seed)
    values = []
    for _ in range(rounds):
        sample = [o for _ in groups for o in rng.choice(groups)]
        v = metric(sample)
        if v is not None:
            values.append(v)
    values.sort()
    return point, values[int(0.025 * len(values))], values[int(0.975 * len(values)) - 1]


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def report(name: str, outcomes: list[StepOutcome], cold: float | None) -> dict[str, Any]:
    rows: dict[str, Any] = {"model": name}
    for split in SPLITS:
        part = [o for o in outcomes if o.split == split]
        if not part:
            continue
        figures: dict[str, Any] = {"statements": len(part)}
        for metric_name, metric in METRICS.items():
            figures[metric_name] = bootstrap(part, metric)
        warm = [o.seconds for o in part]
        figures["p50 s"] = statistics.median(warm)
        figures["p95 s"] = percentile(warm, 0.95)
        figures["statements/s"] = len(warm) / sum(warm) if sum(warm) else float("inf")
        figures["llm calls/statement"] = sum(o.llm_calls for o in part) / len(part)
        rows[split] = figures
    rows["cold first statement s"] = cold
    return rows


def _fmt(v: Any) -> str:
    if isinstance(v, tuple):
        point, lo, hi = v
        if point is None:
            return "n/a"
        return f"{point:.3f} [{lo:.2f}, {hi:.2f}]" if lo is not None else f"{point:.3f}"
    if v is None:
        return "n/a"
    if isinstance(v, float):
        return f"{v:.3f}"
    return str(v)


def print_report(rows: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"profile learning: {rows['model']}")
    table.add_column("figure")
    splits = [s for s in SPLITS if s in rows]
    for s in splits:
        table.add_column(s)
    keys = list(rows[splits[0]]) if splits else []
    for key in keys:
        table.add_row(key, *(_fmt(rows[s][key]) for s in splits))
    Console().print(table)
    if rows.get("cold first statement s") is not None:
        print(
            f"cold (first statement, model load included): {rows['cold first statement s']:.2f} s"
        )


def run(
    llm: LLM,
    scenarios: Sequence[Scenario],
    *,
    gate: bool = False,
    verbose: bool = False,
    log: Path | None = None,
) -> tuple[list[StepOutcome], float | None]:
    """Every scenario in its own fresh home; `log` gets one JSON line per
    statement as it is done (a long embedded run can be read while it runs)."""
    outcomes: list[StepOutcome] = []
    cold: float | None = None
    with tempfile.TemporaryDirectory(prefix="memagent-bench-profile-") as tmp:
        for scn in scenarios:
            got = run_scenario(scn, llm, Path(tmp), gate=gate)
            if cold is None and got:
                cold = got[0].seconds
                got[0].seconds = float("nan") if len(scenarios) > 1 else got[0].seconds
            outcomes.extend(got)
            if log is not None:
                with log.open("a", encoding="utf-8") as fh:
                    for o in got:
                        fh.write(json.dumps(o.__dict__, default=str) + "\n")
            if verbose:
                for o in got:
                    if o.wrong or o.missing:
                        print(f"  {o.scenario}: wrong={o.wrong} missing={o.missing}")
    timed = [o for o in outcomes if o.seconds == o.seconds]  # the cold one left out
    for o in outcomes:
        if o.seconds != o.seconds:
            o.seconds = statistics.median([t.seconds for t in timed]) if timed else 0.0
    return outcomes, cold


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.profile_learn", description=__doc__)
    ap.add_argument("--model", action="append", choices=("scripted", "embedded"))
    ap.add_argument(
        "--split",
        action="append",
        choices=(*SPLITS, "all"),
        help="dev, held or fresh (repeatable; default dev and held; all: the three)",
    )
    ap.add_argument("--limit", type=int, default=0, help="first N scenarios of each split")
    ap.add_argument(
        "--every", type=int, default=1, help="every Nth scenario of each split (a spread sample)"
    )
    ap.add_argument("--gate", action="store_true", help="ask the yes/no gate call first")
    ap.add_argument("--verbose", action="store_true", help="print each miss and junk item")
    ap.add_argument("--json", type=Path, help="write the figures as JSON here")
    ap.add_argument("--log", type=Path, help="append one JSON line per statement here")
    ap.add_argument(
        "--threads", type=int, default=0, help="embedded model threads (default: config)"
    )
    ap.add_argument(
        "--cache",
        type=Path,
        help="replay the embedded model's replies from this prompt-hash cache (JSON lines), "
        "adding what it misses; latency then counts a replayed call at its recorded time",
    )
    args = ap.parse_args(argv)
    if args.limit < 0 or args.every < 1 or args.threads < 0:
        ap.error("--limit must be at least 0 and --every at least 1")
    wanted = set(args.split or DEFAULT_SPLITS)
    wanted = set(SPLITS) if "all" in wanted else wanted
    scenarios = [s for s in load_set() if s.split in wanted]
    kept: list[Scenario] = []
    for split in SPLITS:
        part = [s for s in scenarios if s.split == split][:: args.every]
        kept += part[: args.limit] if args.limit else part
    scenarios = kept
    all_rows = []
    for name in args.model or ["scripted"]:
        if name == "scripted":
            llm: LLM = oracle_llm(load_set())
        else:
            from memagent.llm import load_llm
            from memagent.llm.embedded import EmbeddedLLM

            llm = EmbeddedLLM(threads=args.threads) if args.threads > 0 else load_llm("embedded")
            if args.cache is not None:
                from bench.qa_cache import cached_llm

                llm = cached_llm(llm, args.cache)
        outcomes, cold = run(llm, scenarios, gate=args.gate, verbose=args.verbose, log=args.log)
        rows = report(name, outcomes, cold)
        rows["gate"] = args.gate
        print_report(rows)
        all_rows.append(rows)
    if args.json:
        args.json.write_text(json.dumps(all_rows, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
