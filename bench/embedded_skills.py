"""What the embedded model can do beyond replying, measured on small task sets,
plus the warm chat-turn latency with recalled memories.

Skills (each a few tasks, pass = the effect checked in the files, not the words):
- profile learn: the switchboard + memory planner turn a message into a profile item;
- JSON actions: the full `json` prompt set edits notes on request;
- Python mode: the `python` prompt set does the same by writing sandboxed code;
- ask --deep: recursive retrieval (search in code, then FINAL) finds the answer;
- chat latency: 5 facts about one person stored, then questions that recall all 5, in
  one warm process: p50/p95 per turn; the baseline is the same agent with retrieval off.

    python -m bench.embedded_skills [--model embedded] [--threads 2] [--skills …]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.qa_locomo import set_agent_config
from memagent.agent import Agent, MemoryAccess, deep_ask
from memagent.core import MemoryHome
from memagent.core.config import LLMConfig
from memagent.llm import LLM, load_llm
from memagent.memory.profile import ProfileStore, learn
from memagent.setup import init_home

FACTS = [
    "My cat is named Pixel.",
    "I work at Acme as a nurse.",
    "My sister Ana lives in Lisbon.",
    "I drink green tea every morning.",
    "We moved to Oslo in 2021.",
]
QUESTIONS = [
    ("What is my cat's name?", "pixel"),
    ("Where do I work?", "acme"),
    ("Where does my sister live?", "lisbon"),
    ("What do I drink in the morning?", "tea"),
    ("When did we move to Oslo?", "2021"),
]


# For latency: five facts one question recalls together (all about the sister).
SISTER_FACTS = [
    "My sister Ana lives in Lisbon.",
    "My sister Ana works as a teacher.",
    "My sister Ana has two dogs.",
    "My sister Ana plays the piano.",
    "My sister Ana visited me in May.",
]
SISTER_QUESTIONS = [
    ("Where does my sister live?", "lisbon"),
    ("What does my sister do for work?", "teacher"),
    ("How many dogs does my sister have?", "two"),
    ("What instrument does my sister play?", "piano"),
    ("When did my sister visit me?", "may"),
    ("Which city is my sister Ana in?", "lisbon"),
]


def fresh_home(root: Path, name: str) -> MemoryHome:
    mh = MemoryHome.open(root / name)
    init_home(mh)
    return mh


def timed(label: str, fn: Callable[[], bool]) -> tuple[bool, float]:
    t0 = time.perf_counter()
    try:
        ok = fn()
    except Exception as exc:  # a skill that crashes counts as failed, with the reason
        print(f"    {label}: error {type(exc).__name__}: {exc}", file=sys.stderr)
        ok = False
    dt = time.perf_counter() - t0
    print(f"    {label}: {'pass' if ok else 'FAIL'} ({dt:.0f}s)", file=sys.stderr, flush=True)
    return ok, dt


def skill_profile(llm: LLM, root: Path, n: int) -> list[tuple[bool, float]]:
    mh = fresh_home(root, "profile")
    store = ProfileStore(mh)
    cases = [("I'm allergic to peanuts.", "peanut"), ("I love sushi.", "sushi")][:n]

    def case(msg: str, word: str) -> Callable[[], bool]:
        def run() -> bool:
            res = learn(store, llm, msg)
            print(f"    facts {res.facts!r}, operations {res.operations!r}", file=sys.stderr)
            text = " ".join(p.read_text() for p in mh.layout.profile.glob("*.json")).lower()
            return word in text

        return run

    return [timed(f"learn {m!r}", case(m, w)) for m, w in cases]


def skill_edit(llm: LLM, root: Path, mode: str, n: int) -> list[tuple[bool, float]]:
    cases = [
        ("Please add to my notes that my sister Ana lives in Lisbon.", "lisbon"),
        ("Create a note about my colleague Tom Baker, who runs the billing team.", "billing"),
    ][:n]
    out = []
    for i, (msg, word) in enumerate(cases):
        mh = fresh_home(root, f"{mode}-{i}")

        def run(mh: MemoryHome = mh, msg: str = msg, word: str = word) -> bool:
            with Agent(mh, llm, mode=mode, prompt_set=mode, learn_profile=False, max_steps=3) as a:
                r = a.turn(msg)
            vault = " ".join(p.read_text() for p in mh.layout.vault.rglob("*.md")).lower()
            return r.ok and word in vault

        out.append(timed(f"{mode}: {msg[:40]!r}", run))
    return out


def skill_deep(llm: LLM, root: Path, n: int) -> list[tuple[bool, float]]:
    mh = fresh_home(root, "deep")
    memory = MemoryAccess(mh)
    for f in FACTS:
        memory.remember(f)
    out = []
    for q, word in QUESTIONS[:n]:

        def run(q: str = q, word: str = word) -> bool:
            res = deep_ask(memory, llm, q, max_iterations=4)
            print(f"    deep answer {res.answer!r}", file=sys.stderr)
            return res.ok and word in res.answer.lower()

        out.append(timed(f"deep {q!r}", run))
    memory.close()
    return out


def chat_latency(llm: LLM, root: Path, n: int, *, retrieval: bool) -> dict[str, Any]:
    mh = fresh_home(root, f"chat-{retrieval}")
    # every relevant memory in context (not only those within half the best score)
    set_agent_config(mh.layout.config, {"recall_min_ratio": 0.0})
    mh = MemoryHome.open(mh.root)
    memory = MemoryAccess(mh)
    for f in SISTER_FACTS:  # stored directly: the turns measured are the questions
        memory.remember(f)
    memory.close()
    secs, right, mems, toks = [], 0, [], []
    with Agent(mh, llm, learn_profile=False, retrieval=retrieval) as a:
        a.turn("Hello!")  # warm: the fixed prompt prefix is in the cache now
        for q, word in SISTER_QUESTIONS[:n]:
            r = a.turn(q)
            secs.append(r.seconds)
            right += word in r.reply.lower()
            mems.append(len(r.memory_sources))
            toks.append(r.usage.prompt_tokens)
            print(f"    {q!r} -> {r.reply!r} ({r.seconds:.1f}s)", file=sys.stderr, flush=True)
    secs.sort()
    return {
        "right": f"{right}/{min(n, len(SISTER_QUESTIONS))}",
        "p50_s": round(statistics.median(secs), 2),
        "p95_s": round(secs[min(len(secs) - 1, round(0.95 * (len(secs) - 1)))], 2),
        "memories_per_turn": round(statistics.fmean(mems), 1),
        "prompt_tokens": round(statistics.fmean(toks)),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--model", default="embedded")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--n-ctx", type=int, default=4096)
    ap.add_argument("--skills", nargs="*", default=["latency", "profile", "json", "python", "deep"])
    ap.add_argument("--tasks", type=int, default=2, help="tasks per skill (latency: x2)")
    args = ap.parse_args(argv)
    n = args.tasks
    llm = load_llm(args.model, LLMConfig(threads=args.threads, n_ctx=args.n_ctx))
    t0 = time.perf_counter()
    load_s = llm.load() if hasattr(llm, "load") else 0.0
    print(f"model {llm.name}: loaded in {load_s:.1f}s (cold)", file=sys.stderr)
    root = Path(tempfile.mkdtemp(prefix="memagent-skills-"))
    rows: list[tuple[str, str, str]] = []
    for skill in args.skills:
        print(f"  {skill}", file=sys.stderr, flush=True)
        if skill == "latency":
            on = chat_latency(llm, root, 2 * n, retrieval=True)
            off = chat_latency(llm, root, 2 * n, retrieval=False)
            rows.append(("chat turn, 5 memories recalled", on["right"], str(on)))
            rows.append(("chat turn, retrieval off (baseline)", off["right"], str(off)))
            continue
        runs = {
            "profile": lambda: skill_profile(llm, root, n),
            "json": lambda: skill_edit(llm, root, "json", n),
            "python": lambda: skill_edit(llm, root, "python", n),
            "deep": lambda: skill_deep(llm, root, n),
        }[skill]()
        passed = sum(ok for ok, _ in runs)
        median = statistics.median(dt for _, dt in runs)
        rows.append((skill, f"{passed}/{len(runs)}", f"median {median:.0f}s per task"))
    print(f"\nmodel {llm.name}, {args.threads} threads, {time.perf_counter() - t0:.0f}s in all")
    print("| skill | passed | notes |\n|---|---|---|")
    for name, passed, note in rows:
        print(f"| {name} | {passed} | {note} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
