"""Question answering on LoCoMo through the user's own path, with intervals.

Each dev conversation is imported into a memory home (`--shape full`: speaker, one
conversation id per session, ordered timestamps; `--shape minimal`: id, role,
content `Speaker: text`, timestamp, one conversation id a file — `bench.shapes`
writes both, `memagent import` reads them), then a sample of its questions is answered the
way `memagent ask --batch --short --json` answers them (the same functions:
`read_batch`, `answer_batch`, the `qa` prompt set), each line carrying
`"asked_at"`, the day after the conversation's last session.

Arms: **memagent** (the above), **no-memory** (the same batch on an empty home:
the floor), **full** (the whole conversation in the system message; slow).

Scoring is LoCoMo's own (task_eval/evaluation.py; `bench.qa_scoring`).
Every printed figure carries a bootstrap 95% interval (`bench.qa_stats`): F1 of
categories 1–4, each category, adversarial refusal, the share of answerable
questions refused, the paper's overall score (category means weighted by their
share of the sampled conversations' questions), latency p50/p95, tokens per
answer (prompt + completion), and the cost that sets latency on a CPU: model
calls, prompt tokens evaluated (not served from llama.cpp's reused prefix;
`bench.qa_cache.PrefixCache` replays the cache, so a rerun from the cache counts
what the calls in this code's order cost) per question, mean, p50 and p95, and
tokens generated. Latency replays a cached call at the seconds it took when it
ran, in the order it ran then: take latency from an uncached run.

`--sample N` draws N questions stratified over the conversations (equal shares,
as the held-out check's 40 a conversation) and, inside each, over categories in
proportion, deterministic by `--seed`. Model calls are cached by prompt hash
(`bench.qa_cache`, `bench/results/qa_cache.jsonl`), so a rerun, a re-scoring or a
threshold sweep costs only the prompts not seen before; latency counts a cached
call at the seconds it took when it ran.

`--cv KEY=V1,V2 …` sweeps agent config values (`agent.verify_min`, …) and picks
them by leave-one-conversation-out: for each conversation, the grid point with
the best `--objective` on the other four, scored on it. Reported per fold and
pooled over the held-out folds (the figure to quote), beside the in-sample best.

    python -m bench.qa_locomo --sample 200 [--shape full|minimal] [--arms memagent]
        [--set verify_min=0.7] [--cv verify_min=0.6,0.7,0.8] [--from-cache-only]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import json
import random
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal

from bench.qa_cache import RESULTS, CachedLLM, cached_llm
from bench.qa_fullcontext import ask_full
from bench.qa_scoring import CATEGORIES, refuses, score
from bench.qa_stats import (
    Estimate,
    bootstrap_ci,
    leave_one_out,
    mean_or_none,
    percentile,
    stratified_sample,
)
from bench.recall_locomo import DATA, session_time

ANCHORS = {
    "gpt-3.5-turbo, best retrieval (observations, top-5) (paper)": 43.3,
    "gpt-4-turbo, whole conversation 128K (paper)": 51.6,
}
ARMS = ("memagent", "no-memory", "full")
SHAPES = ("full", "minimal")
TUNABLE = {
    "verify_min": float,
    "contrast_below": float,
    "contrast_margin": float,
    "recall_k": int,
    "recall_min_ratio": float,
    "context_tokens": int,
}
OBJECTIVES = ("overall", "f1")


class BenchError(Exception):
    """A bad argument or missing input: one line, exit 2."""


@dataclass(frozen=True)
class Question:
    conv: str
    qid: str
    category: int
    question: str
    gold: str
    asked_at: str


@dataclass
class Outcome:
    conv: str
    qid: str
    category: int
    answer: str
    score: float
    seconds: float
    prompt_tokens: int
    completion_tokens: int
    ok: bool
    p_grounded: float | None = None
    refused_by: str | None = None
    question: str = ""
    gold: str = ""
    memory_ids: tuple[str, ...] = ()
    judged: tuple[float, ...] = ()
    """Every P(yes) the checks read: the grounding check's, then the contrast probe's."""
    calls: int = 0
    """Model calls the question made (answer, grounding check, contrast probe)."""
    evaluated_tokens: int = 0
    """Prompt tokens not served from llama.cpp's reused prefix (`bench.qa_cache.PrefixCache`)."""

    @property
    def refused(self) -> bool:
        return refuses(self.answer)


# -- data -----------------------------------------------------------------------------
def load_conversation(path: Path) -> dict[str, Any]:
    raw = json.loads(path.read_text(encoding="utf-8"))
    return {**raw.get("conversation", raw), "qa": raw["qa"]}


def last_session(conv: dict[str, Any]) -> Any:
    n = 1
    while f"session_{n + 1}" in conv:
        n += 1
    return session_time(conv[f"session_{n}_date_time"])


def questions_of(name: str, conv: dict[str, Any]) -> list[Question]:
    asked = (last_session(conv) + timedelta(days=1)).date().isoformat()
    return [
        Question(
            name,
            f"q{i}",
            int(q["category"]),
            q["question"],
            str(q.get("answer", q.get("adversarial_answer", ""))),
            asked,
        )
        for i, q in enumerate(conv["qa"])
    ]


def pick_questions(qs: list[Question], sample: int | None, seed: int) -> list[Question]:
    if sample is None:
        return qs
    return stratified_sample(
        qs, sample, group=lambda q: q.conv, stratum=lambda q: str(q.category), seed=seed
    )


def rounds(qs: list[Question], size: int, seed: int) -> list[list[Question]]:
    """The questions in the order they are asked: each conversation's shuffled (by
    seed), then `size` of each conversation per round, so a run stopped early has
    covered every conversation and category about evenly."""

    per: dict[str, list[Question]] = {}
    for q in qs:
        per.setdefault(q.conv, []).append(q)
    for conv, mine in per.items():
        random.Random(f"{seed}:order:{conv}").shuffle(mine)
    out: list[list[Question]] = []
    for start in range(0, max((len(v) for v in per.values()), default=0), size):
        out += [v[start : start + size] for _, v in sorted(per.items()) if v[start : start + size]]
    return out


# -- homes and the batch path -------------------------------------------------------------
def is_imported(home: Path) -> bool:
    """Whether `home` holds a finished import (`imported_home`)."""
    chunks = home / "chunks"
    done = not home.with_name(home.name + ".importing").exists()
    return done and chunks.is_dir() and any(chunks.iterdir())


def imported_home(home: Path, write: Callable[[Path], object]) -> Path:
    """`home` with the file `write` makes (`<home>.jsonl`) imported by `memagent import`,
    once: kept afterwards; an import that did not finish (`<home>.importing` left
    behind) is started again from an empty home."""
    from memagent.core import MemoryHome
    from memagent.setup import init_home

    marker = home.with_name(home.name + ".importing")
    if is_imported(home):
        return home
    if home.exists():
        shutil.rmtree(home)
    home.parent.mkdir(parents=True, exist_ok=True)
    marker.touch()
    path = home.with_name(home.name + ".jsonl")
    write(path)
    init_home(MemoryHome.open(home))  # what `memagent init` does
    cmd = [sys.executable, "-m", "memagent", "import", str(path), "--home", str(home)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise BenchError(f"import of {home.name} failed: {done.stderr.strip()[-300:]}")
    marker.unlink()
    return home


def prepare_home(workdir: Path, name: str, conv: dict[str, Any], shape: str) -> Path:
    """The conversation's home for `shape`: `bench.shapes` writes the user's import
    file, `memagent import` reads it (`imported_home`)."""
    from bench.shapes import write_import

    kind: Literal["full", "minimal"] = "full" if shape == "full" else "minimal"
    return imported_home(workdir / shape / name, lambda p: write_import(conv, p, kind))


def empty_home(workdir: Path) -> Path:
    from memagent.core import MemoryHome
    from memagent.setup import init_home

    home = workdir / "empty"
    if not (home / "config.toml").is_file():
        init_home(MemoryHome.open(home))
    return home


def set_agent_config(path: Path, values: dict[str, float | int]) -> None:
    """Set keys of the `[agent]` table of a home's config.toml (text edit, rest kept)."""
    import re

    text = path.read_text(encoding="utf-8")
    if not re.search(r"^\[agent\]", text, flags=re.M):
        text += "\n[agent]\n"
    head, _, rest = text.partition("[agent]\n")
    section, nxt, tail = rest.partition("\n[")
    for key, value in values.items():
        line = f"{key} = {value}"
        if re.search(rf"^{key}\s*=", section, flags=re.M):
            section = re.sub(rf"^{key}\s*=.*$", line, section, count=1, flags=re.M)
        else:
            section = line + "\n" + section
    path.write_text(head + "[agent]\n" + section + nxt + tail, encoding="utf-8")


def ask_batch(
    home_dir: Path, llm: CachedLLM, questions: list[Question], values: dict[str, float | int]
) -> list[dict[str, Any]]:
    """`ask --batch --short --json` on `home_dir`, in process (one loaded model): the
    batch file is written and read back by the CLI's reader, each question answered
    by its `answer_batch`; `latency_s` adds back the seconds of cached calls."""
    from memagent.agent import Agent
    from memagent.cli._ask_batch import answer_batch, read_batch
    from memagent.core import MemoryHome
    from memagent.core.config import AgentConfig

    mh = MemoryHome.open(home_dir)
    product = AgentConfig()  # keys not given go back to the product's defaults
    set_agent_config(mh.layout.config, {k: getattr(product, k) for k in TUNABLE} | values)
    mh = MemoryHome.open(home_dir)
    batch = home_dir.parent / f"{home_dir.name}.batch.jsonl"
    batch.write_text(
        "".join(
            json.dumps(
                {"id": q.qid, "question": q.question, "asked_at": q.asked_at}, ensure_ascii=False
            )
            + "\n"
            for q in questions
        ),
        encoding="utf-8",
    )
    parsed = read_batch(batch)
    out: list[dict[str, Any]] = []
    agent = Agent(mh, llm, prompt_set="qa", learn_profile=False)
    agent.record = False
    try:
        for q, mine in zip(parsed, questions, strict=True):
            before, missed, judged = llm.replayed_s, llm.misses, len(llm.judged)
            calls, evaluated, measured = llm.calls, llm.prefix.evaluated, llm.measured_cached
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                answer_batch(agent, [q], as_json=True)
            line = json.loads(buf.getvalue())
            line["latency_s"] = float(line["latency_s"]) + (llm.replayed_s - before)
            line["cached"] = llm.misses == missed
            line["judged"] = grounding_first(llm.judged[judged:], line.get("p_grounded"))
            line["calls"] = llm.calls - calls
            line["evaluated_tokens"] = llm.prefix.evaluated - evaluated
            line["measured_cached"] = llm.measured_cached - measured
            out.append(line)
            print(
                f"    {mine.conv} {mine.qid} cat{mine.category} "
                f"{line['latency_s']:5.1f}s {mine.question[:50]!r} -> {line['answer'][:50]!r} "
                f"(gold {mine.gold[:30]!r})",
                file=sys.stderr,
                flush=True,
            )
    finally:
        agent.close()
    return out


def grounding_first(judged: list[float], p_grounded: float | None) -> list[float]:
    """A question's P(yes) values, the grounding check's first, then the probe's (the
    agent asks the probe first when every probe is read, `memagent.agent.verify`)."""
    if len(judged) == 2 and p_grounded is not None and round(judged[1], 4) == p_grounded:
        return [judged[1], judged[0]]
    return judged


def outcomes_for(
    qs: list[Question], lines: list[dict[str, Any]], *, offline: bool = False
) -> list[Outcome]:
    """Scored answers; offline, only the questions answered wholly from the cache."""
    pairs = [(q, r) for q, r in zip(qs, lines, strict=True) if r.get("cached") or not offline]
    return [
        Outcome(
            q.conv,
            q.qid,
            q.category,
            str(r["answer"]),
            score(q.category, str(r["answer"]) if r["ok"] else "", q.gold),
            float(r["latency_s"]),
            int(r["prompt_tokens"]),
            int(r["completion_tokens"]),
            bool(r["ok"]),
            r.get("p_grounded"),
            r.get("refused_by"),
            q.question,
            q.gold,
            tuple(r.get("memory_ids") or ()),
            tuple(r.get("judged") or ()),
            int(r.get("calls") or 0),
            int(r.get("evaluated_tokens") or 0),
        )
        for q, r in pairs
    ]


# -- figures ------------------------------------------------------------------------------
def overall(outs: list[Outcome], weights: dict[int, float]) -> float | None:
    """The paper's overall score: category means weighted by their share of questions."""
    cats: dict[int, list[float]] = {}
    for o in outs:
        cats.setdefault(o.category, []).append(o.score)
    wsum = sum(weights.get(c, 0.0) for c in cats)
    if not wsum:
        return None
    return sum(weights.get(c, 0.0) * sum(v) / len(v) for c, v in cats.items()) / wsum


def f1_answerable(outs: list[Outcome]) -> float | None:
    return mean_or_none([o.score for o in outs if o.category != 5])


def figures(outs: list[Outcome], weights: dict[int, float], seed: int) -> dict[str, Estimate]:
    """Every reported figure with its bootstrap 95% interval (questions resampled)."""

    def ci(stat: Any) -> Estimate:
        return bootstrap_ci(outs, stat, seed=seed)

    def cat_mean(c: int) -> Any:
        return lambda xs: mean_or_none([o.score for o in xs if o.category == c])

    out = {"F1 cats 1-4": ci(f1_answerable)}
    for c in (1, 2, 3, 4):
        out[f"F1 {CATEGORIES[c]}"] = ci(cat_mean(c))
    out["adversarial refusal"] = ci(cat_mean(5))
    out["answerable refused"] = ci(
        lambda xs: mean_or_none([float(o.refused) for o in xs if o.category != 5])
    )
    out["F1 on answered"] = ci(
        lambda xs: mean_or_none([o.score for o in xs if o.category != 5 and not o.refused])
    )
    out["overall (paper)"] = ci(lambda xs: overall(xs, weights))
    out["latency p50 s"] = ci(lambda xs: percentile([o.seconds for o in xs], 0.5))
    out["latency p95 s"] = ci(lambda xs: percentile([o.seconds for o in xs], 0.95))
    out["tokens/answer"] = ci(
        lambda xs: mean_or_none([float(o.prompt_tokens + o.completion_tokens) for o in xs])
    )
    out["model calls/question"] = ci(lambda xs: mean_or_none([float(o.calls) for o in xs]))
    out["prompt tokens evaluated/question"] = ci(
        lambda xs: mean_or_none([float(o.evaluated_tokens) for o in xs])
    )
    out["prompt tokens evaluated p50"] = ci(
        lambda xs: percentile([float(o.evaluated_tokens) for o in xs], 0.5)
    )
    out["prompt tokens evaluated p95"] = ci(
        lambda xs: percentile([float(o.evaluated_tokens) for o in xs], 0.95)
    )
    out["generated tokens/question"] = ci(
        lambda xs: mean_or_none([float(o.completion_tokens) for o in xs])
    )
    return out


def print_figures(title: str, outs: list[Outcome], weights: dict[int, float], seed: int) -> None:
    n = Counter(CATEGORIES[o.category] for o in outs)
    print(
        f"\n{title}: {len(outs)} questions ({dict(sorted(n.items()))}), "
        f"{sum(not o.ok for o in outs)} failed"
    )
    print("| figure | value [95% bootstrap] |\n|---|---|")
    for name, est in figures(outs, weights, seed).items():
        scale = 100.0 if name == "overall (paper)" else 1.0
        print(f"| {name} | {est.show(1 if scale == 100.0 else 3, scale)} |")


# -- the run ------------------------------------------------------------------------------
def parse_assignments(raw: list[str], *, grid: bool) -> dict[str, list[float | int]]:
    """`KEY=V` (or `KEY=V1,V2` with `grid`) for the tunable agent keys; BenchError else."""
    out: dict[str, list[float | int]] = {}
    for item in raw:
        key, eq, vals = item.partition("=")
        if not eq or key not in TUNABLE:
            raise BenchError(f"{item!r}: expected KEY=VALUE with KEY one of {', '.join(TUNABLE)}")
        parts = vals.split(",")
        if not grid and len(parts) != 1:
            raise BenchError(f"{item!r}: one value (use --cv for several)")
        try:
            out[key] = [TUNABLE[key](p) for p in parts]
        except ValueError:
            raise BenchError(f"{item!r}: {key} takes {TUNABLE[key].__name__} values") from None
    return out


def grid_points(cv: dict[str, list[float | int]]) -> list[dict[str, float | int]]:
    keys = sorted(cv)
    return [
        dict(zip(keys, combo, strict=True)) for combo in itertools.product(*(cv[k] for k in keys))
    ]


def label(values: dict[str, float | int]) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted(values.items())) or "defaults"


def run_arm(
    arm: str,
    args: argparse.Namespace,
    llm: CachedLLM,
    convs: dict[str, dict[str, Any]],
    qs: list[Question],
    values: dict[str, float | int],
) -> list[Outcome]:
    outs: list[Outcome] = []
    for mine in rounds(qs, args.round_size, args.seed):
        name = mine[0].conv
        t0 = time.perf_counter()
        if arm == "full":
            lines = ask_full(llm, convs[name], mine)
        elif (
            arm == "memagent" and args.offline and not is_imported(args.workdir / args.shape / name)
        ):
            continue  # offline: no import either
        else:
            home = (
                prepare_home(args.workdir, name, convs[name], args.shape)
                if arm == "memagent"
                else empty_home(args.workdir)
            )
            lines = ask_batch(home, llm, mine, values)
        got = outcomes_for(mine, lines, offline=args.offline)
        outs += got
        print(
            f"  [{arm} {label(values)}] {name}: {len(got)} answered in "
            f"{time.perf_counter() - t0:.0f}s (cache {llm.hits}/{llm.calls} hits)",
            file=sys.stderr,
            flush=True,
        )
    return outs


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m bench.qa_locomo",
        description=__doc__,
        formatter_class=argparse.RawTextHelpFormatter,
    )
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--conversations", nargs="*", default=None, help="default: all in --data")
    ap.add_argument("--sample", type=int, default=None, help="questions, stratified (default: all)")
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--shape", choices=SHAPES, default="full")
    ap.add_argument("--arms", nargs="*", choices=ARMS, default=["memagent"])
    ap.add_argument("--model", default="embedded")
    ap.add_argument("--threads", type=int, default=2, help="llama.cpp CPU threads")
    ap.add_argument("--n-ctx", type=int, default=8192, help="32768 for the full arm")
    ap.add_argument("--workdir", type=Path, default=RESULTS / "qa_locomo_homes")
    ap.add_argument("--cache", type=Path, default=RESULTS / "qa_cache.jsonl")
    ap.add_argument("--set", nargs="*", default=[], metavar="KEY=V", help="agent config")
    ap.add_argument(
        "--cv",
        nargs="*",
        default=[],
        metavar="KEY=V1,V2",
        help="leave-one-conversation-out over this grid",
    )
    ap.add_argument("--objective", choices=OBJECTIVES, default="overall")
    ap.add_argument("--json-out", type=Path, default=None, help="every outcome, as JSON")
    ap.add_argument("--round-size", type=int, default=10, help="questions a conversation per round")
    ap.add_argument(
        "--offline",
        action="store_true",
        help="answer only from the cache (re-score a partial run; no model)",
    )
    return ap


def check_args(args: argparse.Namespace) -> tuple[dict[str, dict[str, Any]], list[Question]]:
    if args.sample is not None and args.sample < 1:
        raise BenchError(f"--sample {args.sample}: must be at least 1")
    if args.round_size < 1:
        raise BenchError(f"--round-size {args.round_size}: must be at least 1")
    if not args.data.is_dir():
        raise BenchError(f"no LoCoMo data at {args.data} (set --data or $MEMAGENT_EVAL)")
    found = {p.stem: p for p in sorted(args.data.glob("conv-*.json"))}
    wanted = args.conversations or sorted(found)
    missing = [c for c in wanted if c not in found]
    if missing or not wanted:
        raise BenchError(f"no conversation {', '.join(missing) or '(none)'} under {args.data}")
    if args.cv and len(wanted) < 2:
        raise BenchError("--cv needs at least two conversations")
    convs = {}
    for name in wanted:
        try:
            convs[name] = load_conversation(found[name])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise BenchError(f"{found[name]}: not a LoCoMo conversation ({exc})") from None
    qs = [q for name in wanted for q in questions_of(name, convs[name])]
    return convs, pick_questions(qs, args.sample, args.seed)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        fixed = {k: v[0] for k, v in parse_assignments(args.set, grid=False).items()}
        cv = parse_assignments(args.cv, grid=True)
        convs, qs = check_args(args)
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from memagent.core.config import LLMConfig
    from memagent.llm import load_llm

    inner = load_llm(args.model, LLMConfig(n_ctx=args.n_ctx, threads=args.threads))
    llm = cached_llm(inner, args.cache, offline=args.offline)
    weights_count = Counter(q.category for name in convs for q in questions_of(name, convs[name]))
    weights = {c: n / sum(weights_count.values()) for c, n in weights_count.items()}
    print(
        f"LoCoMo QA: {len(qs)} questions from {', '.join(sorted(convs))}, seed {args.seed}, "
        f"shape {args.shape}, model {llm.name}; cache {args.cache} ({len(llm)} entries)"
    )
    t0 = time.perf_counter()
    detail: dict[str, list[dict[str, Any]]] = {}
    try:
        for arm in args.arms:
            points = grid_points(cv) if cv and arm == "memagent" else [{}]
            runs = {label(fixed | p): run_arm(arm, args, llm, convs, qs, fixed | p) for p in points}
            for name, outs in runs.items():
                detail[f"{arm} {name}"] = [asdict(o) for o in outs]
                print_figures(f"{arm} ({name})", outs, weights, args.seed)
            if len(runs) > 1:
                report_cv(runs, sorted(convs), weights, args)
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            "interrupted: the answers so far are in the cache; run again to go on", file=sys.stderr
        )
        return 130
    print(f"\n{llm.calls} model calls, {llm.hits} from the cache, {time.perf_counter() - t0:.0f}s")
    if llm.misses:
        print(
            f"prompt tokens llama.cpp served from its cache on the {llm.misses} calls run now: "
            f"{llm.measured_cached} (the replayed estimate for them: {llm.estimated_cached})"
        )
    print(
        "published anchors, overall (paper's way): "
        + "; ".join(f"{k} {v}" for k, v in ANCHORS.items())
    )
    if args.json_out:
        args.json_out.write_text(json.dumps(detail, indent=1), encoding="utf-8")
    return 0


def report_cv(
    runs: dict[str, list[Outcome]],
    convs: list[str],
    weights: dict[int, float],
    args: argparse.Namespace,
) -> None:
    """Leave-one-conversation-out: per fold the grid point best on the other four."""

    def objective(outs: list[Outcome]) -> float:
        got = overall(outs, weights) if args.objective == "overall" else f1_answerable(outs)
        return -1.0 if got is None else got

    per = {
        name: {c: [o for o in outs if o.conv == c] for c in convs} for name, outs in runs.items()
    }
    folds = leave_one_out(convs, per, objective)
    print(f"\nleave-one-conversation-out ({args.objective}):")
    print("| held out | picked on the others | train | held-out F1 1-4 | held-out overall |")
    print("|---|---|---|---|---|")
    pooled: list[Outcome] = []
    for f in folds:
        held = per[f.picked][f.held_out]
        pooled += held
        f1, ov = f1_answerable(held), overall(held, weights)
        print(
            f"| {f.held_out} | {f.picked} | {f.train_score:.3f} | "
            f"{'–' if f1 is None else round(f1, 3)} | {'–' if ov is None else round(100 * ov, 1)} |"
        )
    print_figures(
        "held-out, pooled over the folds (the figure to quote)", pooled, weights, args.seed
    )
    best = max(runs, key=lambda n: objective(runs[n]))
    print(f"in-sample best (optimistic, for comparison): {best}")


if __name__ == "__main__":
    raise SystemExit(main())
