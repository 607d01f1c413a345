"""The agent on the embedded model: `python -m bench.agent`.

A fixed 20-turn script: 10 facts told in one conversation, then 10 questions
about them asked in a *new* conversation (so the answers can only come from
memory, not from the chat history). Reported per arm:

- fact-recall accuracy: the answer contains the expected word;
- p50 / p95 turn latency: wall time of `Agent.turn` until the reply (the
  background storing of the exchange is flushed after each turn and timed apart);
- tokens per turn (prompt + completion, as the backend counts them).

Arms, same run, same model, fresh memory home each:
1. `memory`: the default agent (memory retrieval in context);
2. `baseline`: the same agent with memory retrieval off.

The profile pipeline is off in both arms (it is measured by `bench.profile`);
`--model` takes any spec (`openai:NAME` for a server), `--pairs N` runs fewer.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.table import Table

from memagent.agent import Agent
from memagent.core import MemoryHome
from memagent.llm import LLM, load_llm
from memagent.setup import init_home

FACTS = [
    "My sister is called Ana.",
    "I drive a blue Volvo.",
    "My favourite food is ramen.",
    "I work as a dentist in Leeds.",
    "My cat is named Pixel.",
    "I was born in 1988.",
    "My best friend is Omar.",
    "I play the violin in an orchestra.",
    "I live on Baker Street.",
    "I am allergic to shellfish.",
]
QUESTIONS = [
    ("What is my sister called?", "ana"),
    ("What car do I drive?", "volvo"),
    ("What is my favourite food?", "ramen"),
    ("In which city do I work?", "leeds"),
    ("What is my cat's name?", "pixel"),
    ("What year was I born?", "1988"),
    ("Who is my best friend?", "omar"),
    ("Which instrument do I play?", "violin"),
    ("What street do I live on?", "baker"),
    ("What am I allergic to?", "shellfish"),
]


@dataclass
class Arm:
    name: str
    latencies: list[float] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)
    background: list[float] = field(default_factory=list)
    correct: int = 0
    asked: int = 0
    fallbacks: int = 0
    answers: list[tuple[str, str, bool]] = field(default_factory=list)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def run_arm(name: str, llm: LLM, root: Path, pairs: int, *, retrieval: bool) -> Arm:
    home = MemoryHome.open(root / name)
    init_home(home)
    arm = Arm(name)

    def timed(agent: Agent, message: str) -> str:
        t0 = time.perf_counter()
        result = agent.turn(message)
        arm.latencies.append(time.perf_counter() - t0)
        arm.tokens.append(result.usage.prompt_tokens + result.usage.completion_tokens)
        arm.fallbacks += 0 if result.ok else 1
        t1 = time.perf_counter()
        agent.flush()
        arm.background.append(time.perf_counter() - t1)
        print(f"  [{name}] {arm.latencies[-1]:5.1f}s  {message} -> {result.reply}", flush=True)
        return result.reply

    with Agent(home, llm, retrieval=retrieval, learn_profile=False) as agent:
        for fact in FACTS[:pairs]:
            timed(agent, fact)
    with Agent(home, llm, retrieval=retrieval, learn_profile=False) as agent:
        for question, expected in QUESTIONS[:pairs]:
            reply = timed(agent, question)
            ok = expected in reply.lower()
            arm.correct += ok
            arm.asked += 1
            arm.answers.append((question, reply, ok))
    return arm


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="embedded")
    parser.add_argument("--pairs", type=int, default=len(FACTS), choices=range(1, 11))
    args = parser.parse_args()
    console = Console()
    llm = load_llm(args.model)
    load = getattr(llm, "load", None)
    if callable(load):
        console.print(f"model load: {load():.1f}s")
    with tempfile.TemporaryDirectory(prefix="memagent-bench-agent-") as tmp:
        arms = [
            run_arm("memory", llm, Path(tmp), args.pairs, retrieval=True),
            run_arm("baseline", llm, Path(tmp), args.pairs, retrieval=False),
        ]
    turns = 2 * args.pairs
    table = Table(title=f"agent, {turns}-turn script, model {args.model}")
    for col in (
        "arm",
        "recall accuracy",
        "p50 turn s",
        "p95 turn s",
        "tokens/turn",
        "fallbacks",
        "bg store s/turn",
    ):
        table.add_column(col)
    for arm in arms:
        table.add_row(
            arm.name,
            f"{arm.correct}/{arm.asked} ({arm.correct / arm.asked:.0%})",
            f"{statistics.median(arm.latencies):.2f}",
            f"{_pct(arm.latencies, 0.95):.2f}",
            f"{statistics.mean(arm.tokens):.0f}",
            str(arm.fallbacks),
            f"{statistics.mean(arm.background):.3f}",
        )
    console.print(table)
    mem, base = arms
    p50 = statistics.median(mem.latencies) / statistics.median(base.latencies)
    tokens = statistics.mean(mem.tokens) / statistics.mean(base.tokens)
    console.print(
        f"memory vs baseline: accuracy {mem.correct}/{mem.asked} vs {base.correct}/{base.asked}; "
        f"p50 latency ratio {p50:.2f}x; tokens/turn ratio {tokens:.2f}x",
        highlight=False,
    )
    for arm in arms:
        console.print(f"\n[bold]{arm.name}[/] answers:")
        for question, reply, ok in arm.answers:
            mark = "[green]✓[/]" if ok else "[red]✗[/]"
            console.print(f" {mark} {question} → {reply}", highlight=False)


if __name__ == "__main__":
    main()
