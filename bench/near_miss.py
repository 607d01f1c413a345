"""Near misses and told facts in the chat path: `python -m bench.near_miss`.

The probe set (`bench/near_miss_probes.json`, written for this bench): 16
scenarios, each a few facts told in one chat ("My sister's wedding is on 14 June
2025 in Bergen."), then 64 answerable questions (told; an answer fragment to
find) and 64 near misses (the same person or thing, or the same attribute, never
told: "When is my brother's wedding?", "Is my dog allergic to anything?").

Each scenario gets a fresh memory home; its facts are stored as the chat stores
them (`MemoryAccess.store_exchange`, the chunk a chat turn writes, without the
model's acknowledgement), then each question is one `Agent.turn` with the
default chat prompt set (`instruct`: chat, default `ask`, `Agent.run`,
`/v1/chat`), asked read-only (`record=False`).

Reported per arm, with 95% bootstrap intervals (scenarios resampled, since the
questions of one scenario share their memory):
- near-miss refusal: near misses answered "I don't have that in memory.";
- false refusal: answerable questions refused; answered right: the reply holds
  an expected fragment;
- what refused (focus check, grounding check, the model itself) and the checks'
  cost: tokens and seconds per question, and p50 latency per question.

Arms: `checks` (the focus check and the grounding check, as shipped) and
`none` (both off: the model alone, the baseline). `--model scripted` (the
default) is a model that never refuses and always answers from the recalled
line closest to the question, with a grounding check that always says yes: it
measures the focus check alone, fast and deterministic (the tests run it).
`--model embedded` measures the real model (slow on a shared CPU: `--sample`).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memagent.agent import Agent
from memagent.core import InvalidInput, MemoryHome
from memagent.llm import LLM, Message, ScriptedLLM, load_llm
from memagent.setup import init_home

PROBES = Path(__file__).with_name("near_miss_probes.json")
HELD_OUT = Path(__file__).with_name("near_miss_heldout.json")
"""Written after the focus check was frozen; never used to tune it."""
ARMS = ("checks", "none", "measure", "verdicts")
_WORD = re.compile(r"[a-z0-9]+")
_REFUSAL = re.compile(r"don't have that in memory", re.IGNORECASE)


@dataclass(frozen=True)
class Probe:
    scenario: str
    question: str
    answerable: bool
    expect: tuple[str, ...] = ()


@dataclass(frozen=True)
class Scenario:
    id: str
    told: tuple[str, ...]
    probes: tuple[Probe, ...]


@dataclass
class Outcome:
    probe: Probe
    reply: str
    refused: bool
    refused_by: str | None
    seconds: float
    tokens: int
    check_tokens: int
    check_seconds: float
    p_grounded: float | None = None

    @property
    def correct(self) -> bool:
        low = self.reply.lower()
        return not self.refused and any(e.lower() in low for e in self.probe.expect)


@dataclass
class ArmResult:
    arm: str
    outcomes: list[Outcome] = field(default_factory=list)


def load_probes(path: Path = PROBES) -> list[Scenario]:
    """The scenarios in `path`; `InvalidInput` for a malformed file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        out = []
        for s in data["scenarios"]:
            probes = [Probe(s["id"], a["q"], True, tuple(a["expect"])) for a in s["answerable"]] + [
                Probe(s["id"], q, False) for q in s["near_miss"]
            ]
            out.append(Scenario(s["id"], tuple(s["told"]), tuple(probes)))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InvalidInput(f"{path}: not a probe set ({exc})") from exc
    return out


def sample(scenarios: list[Scenario], n: int | None, seed: int) -> list[Scenario]:
    """At most `n` probes, half answerable and half near misses where possible,
    spread over the scenarios (a seeded shuffle; None: all)."""
    if n is None:
        return scenarios
    rng = random.Random(seed)
    pools = {
        kind: [p for s in scenarios for p in s.probes if p.answerable == kind]
        for kind in (True, False)
    }
    keep: set[tuple[str, str]] = set()
    for kind, pool in pools.items():
        rng.shuffle(pool)
        keep.update((p.scenario, p.question) for p in pool[: (n + (not kind)) // 2])
    out = []
    for s in scenarios:
        probes = tuple(p for p in s.probes if (p.scenario, p.question) in keep)
        if probes:
            out.append(Scenario(s.id, s.told, probes))
    return out


def never_refuses(messages: list[Message], schema: dict[str, Any] | None) -> str:
    """The scripted stand-in for a model that fills every gap: it answers with the
    recalled line that shares the most words with the question."""
    turn = [m for m in messages if m.role == "user"][-1].content
    memory, _, message = turn.rpartition("Message:")
    q = set(_WORD.findall(message.lower()))
    lines = [ln for ln in memory.splitlines() if ln.startswith("- ") and "nothing" not in ln]
    if not lines:
        return json.dumps({"reply": "Your answer is yes."})
    best = max(lines, key=lambda ln: len(q & set(_WORD.findall(ln.lower()))))
    said = best.split("said:", 1)[-1].strip()
    return json.dumps({"reply": said})


class AlwaysYes(ScriptedLLM):
    """`never_refuses` with a grounding check that always says yes."""

    def __init__(self) -> None:
        super().__init__(fn=never_refuses)

    def yes_probability(self, messages: Any) -> Any:
        from memagent.llm import Usage
        from memagent.llm.yesno import YesNo

        words = sum(len(m.content.split()) for m in messages)
        return YesNo(1.0, Usage(prompt_tokens=words, completion_tokens=1))


def _home(root: Path, arm: str, embeddings: bool) -> MemoryHome:
    home = MemoryHome.open(root)
    init_home(home)
    cfg = home.layout.config
    text = cfg.read_text(encoding="utf-8")
    if arm == "none":
        text = re.sub(r"\nchat_verify_min = .*\n", "\nchat_verify_min = 0.0\n", text)
        text = re.sub(r"\nfocus_check = .*\n", "\nfocus_check = false\n", text)
    elif arm == "measure":  # the grounding check runs (its P(yes) recorded), never refuses
        text = re.sub(r"\nchat_verify_min = .*\n", "\nchat_verify_min = 1e-9\n", text)
    elif arm == "verdicts":  # P(yes) only: the check always refuses, no answer is decoded
        text = re.sub(r"\nchat_verify_min = .*\n", "\nchat_verify_min = 1.0\n", text)
    if not embeddings:
        text = text.replace("[embeddings]\nenabled = true", "[embeddings]\nenabled = false")
    cfg.write_text(text, encoding="utf-8")
    return MemoryHome.open(root)


def run_arm(
    arm: str, scenarios: list[Scenario], llm: LLM, *, embeddings: bool, progress: bool = False
) -> ArmResult:
    """Every probe of `scenarios` asked in the `arm` configuration."""
    if arm not in ARMS:
        raise InvalidInput(f"unknown arm {arm!r}: one of {', '.join(ARMS)}")
    result = ArmResult(arm)
    for s in scenarios:
        with tempfile.TemporaryDirectory(prefix="near-miss-") as tmp:
            home = _home(Path(tmp) / "home", arm, embeddings)
            with Agent(home, llm, prompt_set="instruct", learn_profile=False) as agent:
                for n, fact in enumerate(s.told, 1):
                    agent.memory.store_exchange(agent.conversation_id, fact, "Noted.", turn=n)
                agent.record = False
                for p in s.probes:
                    t0 = time.perf_counter()
                    r = agent.turn(p.question)
                    seconds = time.perf_counter() - t0
                    result.outcomes.append(
                        Outcome(
                            p,
                            r.reply,
                            bool(_REFUSAL.search(r.reply)),
                            r.refused_by,
                            seconds,
                            r.usage.prompt_tokens + r.usage.completion_tokens,
                            r.check_tokens,
                            r.check_seconds,
                            r.p_grounded,
                        )
                    )
                    if progress:
                        o = result.outcomes[-1]
                        kind = "A" if p.answerable else "N"
                        why = f"{o.refused_by or '-'} p={o.p_grounded}"
                        said = o.reply[:70]
                        print(f"[{arm}] {kind} {seconds:5.1f}s {why} {p.question} -> {said}")
    return result


def bootstrap(
    outcomes: list[Outcome], stat: Any, *, reps: int = 2000, seed: int = 0
) -> tuple[float, float, float]:
    """`stat(outcomes)` and its 95% interval, resampling whole scenarios."""
    by: dict[str, list[Outcome]] = {}
    for o in outcomes:
        by.setdefault(o.probe.scenario, []).append(o)
    groups = list(by.values())
    point = stat(outcomes)
    rng = random.Random(seed)
    values = []
    for _ in range(reps):
        pick = [o for _ in groups for o in rng.choice(groups)]
        v = stat(pick)
        if v == v:  # not NaN (no probe of the kind drawn)
            values.append(v)
    values.sort()
    if not values:
        return point, point, point
    lo = values[int(0.025 * (len(values) - 1))]
    hi = values[int(0.975 * (len(values) - 1))]
    return point, lo, hi


def _rate(kind: bool, pred: Any) -> Any:
    def stat(outs: list[Outcome]) -> float:
        pool = [o for o in outs if o.probe.answerable == kind]
        return sum(1 for o in pool if pred(o)) / len(pool) if pool else float("nan")

    return stat


def summary(result: ArmResult) -> dict[str, Any]:
    """The figures of one arm (rates with their 95% intervals)."""
    outs = result.outcomes
    near = [o for o in outs if not o.probe.answerable]
    told = [o for o in outs if o.probe.answerable]

    def ci(stat: Any) -> dict[str, float]:
        p, lo, hi = bootstrap(outs, stat)
        return {"rate": round(p, 3), "lo": round(lo, 3), "hi": round(hi, 3)}

    by: dict[str, int] = {}
    for o in outs:
        if o.refused:
            key = f"{'answerable' if o.probe.answerable else 'near_miss'}:{o.refused_by or 'model'}"
            by[key] = by.get(key, 0) + 1
    return {
        "arm": result.arm,
        "near_miss": len(near),
        "answerable": len(told),
        "near_miss_refused": ci(_rate(False, lambda o: o.refused)),
        "false_refusal": ci(_rate(True, lambda o: o.refused)),
        "answered_right": ci(_rate(True, lambda o: o.correct)),
        "refused_by": dict(sorted(by.items())),
        "tokens_per_question": round(statistics.fmean(o.tokens for o in outs), 1) if outs else 0,
        "check_tokens_per_question": round(statistics.fmean(o.check_tokens for o in outs), 1)
        if outs
        else 0,
        "check_seconds_per_question": round(statistics.fmean(o.check_seconds for o in outs), 3)
        if outs
        else 0,
        "p50_seconds": round(statistics.median(o.seconds for o in outs), 3) if outs else 0,
    }


def _llm(spec: str) -> LLM:
    if spec == "scripted":
        return AlwaysYes()
    return load_llm(spec)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.near_miss", description=__doc__)
    ap.add_argument("--model", default="scripted", help="scripted (default), embedded, a spec")
    ap.add_argument("--arms", default="checks,none", help="comma-separated: checks, none")
    ap.add_argument("--sample", type=int, default=None, help="at most N probes (half each kind)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--probes", type=Path, default=PROBES, help="a probe file (default: the set)")
    ap.add_argument("--embeddings", action="store_true", help="hybrid recall (MiniLM vectors)")
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    ap.add_argument("--progress", action="store_true", help="print each answer")
    args = ap.parse_args(argv)
    arms = [a.strip() for a in args.arms.split(",") if a.strip()]
    scenarios = sample(load_probes(args.probes), args.sample, args.seed)
    llm = _llm(args.model)
    results = []
    for arm in arms:
        res = run_arm(arm, scenarios, llm, embeddings=args.embeddings, progress=args.progress)
        results.append(summary(res))
    base = next((r for r in results if r["arm"] == "none"), None)
    for r in results:
        print(json.dumps({"model": args.model, **r}))
    if base is not None:
        for r in results:
            if r["arm"] != "none":
                ratio = r["p50_seconds"] / base["p50_seconds"] if base["p50_seconds"] else 0
                print(
                    f"{r['arm']} vs none: near-miss refusal {r['near_miss_refused']['rate']:.2f} "
                    f"vs {base['near_miss_refused']['rate']:.2f}, false refusal "
                    f"{r['false_refusal']['rate']:.2f} vs {base['false_refusal']['rate']:.2f}, "
                    f"p50 latency ratio {ratio:.2f}"
                )
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
