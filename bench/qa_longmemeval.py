"""Question answering on LongMemEval_S (dev slice): memory vs no memory vs oracle.

Each question has its own haystack (~50 sessions, ~500 turns). Three arms answer
it with the same model and the same `qa` prompt set:

- **memory**: the haystack imported the way a user imports a chat export
  (`memagent import` of JSON lines `{"id", "role", "content", "timestamp",
  "conversation_id"}`, one conversation id per session), then asked through the
  `ask --batch --short --json` functions with `"asked_at"` = the question's date.
- **floor**: the same batch on an empty home (what the model knows without memory).
- **oracle**: only the evidence sessions (`answer_session_ids`), their turns as
  dated memory lines in the qa prompt's user turn (the LongMemEval paper's oracle
  setting: the ceiling of a perfect retriever). Sessions longer than
  `--oracle-chars` keep their evidence turns whole (up to 1,500 characters) and the
  other turns cut short; the count of trimmed oracles is printed.

Scored by the offline judge of `bench.qa_judge` (every content word of the gold
present after stemming, numbers as digits or words; `_abs` questions as refusals;
preference questions — rubric gold — reported apart, outside the overall figure).
Reported per question type and overall with bootstrap 95% intervals, plus latency
p50 and tokens per answer. Model calls are cached by prompt hash
(`bench/results/qa_lme_cache.jsonl`); homes are kept in `--workdir`; `--offline`
re-scores what the cache holds without the model.

    python -m bench.qa_longmemeval [--limit N] [--arms memory floor oracle]

`--limit N` takes the first N questions in round-robin order over the types, so a
partial run covers every type.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from bench.qa_cache import RESULTS, CachedLLM, cached_llm
from bench.qa_judge import PREFERENCE, judge
from bench.qa_locomo import (
    BenchError,
    Question,
    ask_batch,
    empty_home,
    imported_home,
    is_imported,
)
from bench.qa_stats import Estimate, bootstrap_ci, mean_or_none, percentile
from bench.recall_longmemeval import DATA, lme_time, stratified

ARMS = ("memory", "floor", "oracle")
EVIDENCE_CHARS = 1500
OTHER_CHARS = 160


@dataclass
class Result:
    qid: str
    qtype: str
    arm: str
    answer: str
    correct: bool
    seconds: float
    tokens: int
    ok: bool


def asked_at(q: dict[str, Any]) -> str:
    return lme_time(str(q["question_date"])).isoformat()


def import_lines(q: dict[str, Any]) -> list[dict[str, Any]]:
    """The haystack as the JSON lines `memagent import` reads (module doc)."""
    out: list[dict[str, Any]] = []
    sessions = zip(
        q["haystack_session_ids"], q["haystack_dates"], q["haystack_sessions"], strict=True
    )
    for s, (sid, date, turns) in enumerate(sessions):
        when = lme_time(str(date))
        for i, t in enumerate(turns):
            if not isinstance(t.get("content"), str) or not t["content"].strip():
                continue
            stamp = (when + timedelta(seconds=i)).isoformat()
            out.append(
                {
                    "id": f"{s}:{i}",
                    "role": str(t.get("role", "user")),
                    "content": t["content"],
                    "timestamp": stamp,
                    "conversation_id": f"{q['question_id']}:{sid}",
                }
            )
    return out


def memory_home(workdir: Path, q: dict[str, Any]) -> Path:
    """The question's home, imported once through `memagent import`."""
    lines = import_lines(q)

    def write(path: Path) -> None:
        # ASCII escapes: a raw U+2028 inside a line would split it for a line reader
        text = "".join(json.dumps(x) + "\n" for x in lines)
        path.write_text(text, encoding="utf-8")

    return imported_home(workdir / str(q["question_id"]), write)


def oracle_lines(q: dict[str, Any], budget: int) -> tuple[str, bool]:
    """The evidence sessions as dated memory lines; whether they were trimmed."""
    wanted = {str(s) for s in q["answer_session_ids"]}
    turns: list[tuple[str, str, bool]] = []
    sessions = zip(
        q["haystack_session_ids"], q["haystack_dates"], q["haystack_sessions"], strict=True
    )
    for sid, date, sess in sessions:
        if str(sid) not in wanted:
            continue
        when = lme_time(str(date))
        for t in sess:
            who = "You said" if t.get("role") == "user" else "The assistant said"
            head = f"- ({when.day} {when:%B %Y}) {who}: "
            turns.append(
                (head, " ".join(str(t.get("content", "")).split()), bool(t.get("has_answer")))
            )
    full = "\n".join(h + c for h, c, _ in turns)
    if len(full) <= budget:
        return full, False
    cut = [h + (c[:EVIDENCE_CHARS] if ev else c[:OTHER_CHARS]) for h, c, ev in turns]
    if len("\n".join(cut)) > budget:
        cut = [h + c[:EVIDENCE_CHARS] for h, c, ev in turns if ev]
    return "\n".join(cut)[:budget], True


def ask_oracle(llm: CachedLLM, q: dict[str, Any], budget: int) -> tuple[dict[str, Any], bool]:
    from memagent.agent.prompts import load_prompt_set
    from memagent.agent.protocol import reply_schema
    from memagent.llm import LLMError

    qa = load_prompt_set("qa")
    memory, trimmed = oracle_lines(q, budget)
    msgs = [
        {"role": "system", "content": qa.render("system", persona="")},
        {
            "role": "user",
            "content": qa.render("user_turn", memory=memory, message=str(q["question"])),
        },
    ]
    t0, before = time.perf_counter(), llm.replayed_s
    try:
        res = llm.chat(msgs, response_schema=reply_schema(), max_tokens=96)
        answer, ok = str(json.loads(res.text)["reply"]), True
        tokens = res.usage.prompt_tokens + res.usage.completion_tokens
    except (LLMError, ValueError, KeyError) as exc:
        answer, ok, tokens = f"(failed: {exc})", False, 0
    secs = time.perf_counter() - t0 + llm.replayed_s - before
    line = {"answer": answer if ok else "", "ok": ok, "latency_s": secs, "tokens": tokens}
    return line, trimmed


def answer(arm: str, args: argparse.Namespace, llm: CachedLLM, q: dict[str, Any]) -> Result | None:
    """The arm's judged answer; None offline when it is not wholly in the cache."""
    qid, qtype = str(q["question_id"]), str(q["question_type"])
    missed, trimmed = llm.misses, False
    if args.offline and arm == "memory" and not is_imported(args.workdir / qid):
        return None
    if arm == "oracle":
        line, trimmed = ask_oracle(llm, q, args.oracle_chars)
    else:
        home = memory_home(args.workdir, q) if arm == "memory" else empty_home(args.workdir)
        one = Question(qid, qid, 0, str(q["question"]), str(q["answer"]), asked_at(q))
        line = ask_batch(home, llm, [one], {})[0]
        line["tokens"] = int(line["prompt_tokens"]) + int(line["completion_tokens"])
    if args.offline and llm.misses != missed:
        return None
    if arm == "oracle":
        args.trimmed += trimmed
    got = str(line["answer"]) if line["ok"] else ""
    return Result(
        qid,
        qtype,
        arm,
        got,
        judge(qid, got, str(q["answer"])),
        float(line["latency_s"]),
        int(line["tokens"]),
        bool(line["ok"]),
    )


def accuracy(rs: list[Result]) -> float | None:
    return mean_or_none([float(r.correct) for r in rs])


def report(results: list[Result], arms: list[str], seed: int) -> None:
    types = sorted({r.qtype for r in results})
    print("\n| arm | " + " | ".join(types) + " | overall (no preference) | p50 s | tokens/answer |")
    print("|" + "---|" * (len(types) + 4))
    for arm in arms:
        mine = [r for r in results if r.arm == arm]
        if not mine:
            continue
        cells = []
        for t in types:
            sub = [r for r in mine if r.qtype == t]
            est = bootstrap_ci(sub, accuracy, seed=seed)
            cells.append(f"{est.show(2)} (n={len(sub)})" + (" †" if t == PREFERENCE else ""))
        core = [r for r in mine if r.qtype != PREFERENCE]
        ov: Estimate = bootstrap_ci(core, accuracy, seed=seed)
        p50 = bootstrap_ci(mine, lambda xs: percentile([r.seconds for r in xs], 0.5), seed=seed)
        tok = bootstrap_ci(mine, lambda xs: mean_or_none([float(r.tokens) for r in xs]), seed=seed)
        print(
            f"| {arm} | " + " | ".join(cells) + f" | {ov.show(3)} (n={len(core)}) | "
            f"{p50.show(1)} | {tok.show(0)} |"
        )
    print(
        "† preference: gold is a rubric; the content-word judge is a rough proxy, "
        "reported apart and left out of overall"
    )


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m bench.qa_longmemeval",
        description=__doc__,
        formatter_class=argparse.RawTextHelpFormatter,
    )
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--limit", type=int, default=None, help="first N, round-robin over types")
    ap.add_argument("--arms", nargs="*", choices=ARMS, default=list(ARMS))
    ap.add_argument("--model", default="embedded")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--n-ctx", type=int, default=8192)
    ap.add_argument("--oracle-chars", type=int, default=12000, help="oracle memory budget")
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--workdir", type=Path, default=RESULTS / "qa_lme_homes")
    ap.add_argument("--cache", type=Path, default=RESULTS / "qa_lme_cache.jsonl")
    ap.add_argument(
        "--offline",
        action="store_true",
        help="answer only from the cache (re-score a partial run; no model, no import)",
    )
    ap.add_argument("--json-out", type=Path, default=None)
    return ap


def load_questions(args: argparse.Namespace) -> list[dict[str, Any]]:
    if args.limit is not None and args.limit < 1:
        raise BenchError(f"--limit {args.limit}: must be at least 1")
    if args.oracle_chars < 1000:
        raise BenchError(f"--oracle-chars {args.oracle_chars}: must be at least 1000")
    if not args.arms:
        raise BenchError("--arms: give at least one of " + ", ".join(ARMS))
    try:
        data = json.loads(args.data.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BenchError(f"cannot read LongMemEval data {args.data}: {exc}") from None
    need = (
        "question_id",
        "question_type",
        "question",
        "question_date",
        "answer",
        "haystack_session_ids",
        "haystack_dates",
        "haystack_sessions",
        "answer_session_ids",
    )
    if not isinstance(data, list) or not all(
        isinstance(q, dict) and all(k in q for k in need) for q in data
    ):
        raise BenchError(f"{args.data}: expected a list of LongMemEval questions")
    qs = stratified(data)
    return qs[: args.limit] if args.limit else qs


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        qs = load_questions(args)
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from memagent.core.config import LLMConfig
    from memagent.llm import load_llm

    llm = cached_llm(
        load_llm(args.model, LLMConfig(n_ctx=args.n_ctx, threads=args.threads)),
        args.cache,
        offline=args.offline,
    )
    args.trimmed = 0
    print(
        f"LongMemEval_S dev: {len(qs)} questions, arms {', '.join(args.arms)}, model {llm.name}; "
        f"cache {args.cache} ({len(llm)} entries)"
    )
    results: list[Result] = []
    t0 = time.perf_counter()
    try:
        for n, q in enumerate(qs, 1):
            for arm in args.arms:
                r = answer(arm, args, llm, q)
                if r is None:
                    continue
                results.append(r)
                print(
                    f"  {n:2d} [{arm}] {r.qtype[:16]} {'✓' if r.correct else '✗'} "
                    f"{r.seconds:5.1f}s {str(q['question'])[:50]!r} -> {r.answer[:50]!r} "
                    f"(gold {str(q['answer'])[:30]!r})",
                    file=sys.stderr,
                    flush=True,
                )
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: reporting the answers so far (the cache keeps them)", file=sys.stderr)
    if not results:
        return 1
    per_type: dict[str, int] = defaultdict(int)
    for r in results:
        if r.arm == args.arms[0]:
            per_type[r.qtype] += 1
    print(
        f"\n{len({r.qid for r in results})} questions answered {dict(sorted(per_type.items()))}; "
        f"{llm.calls} model calls, {llm.hits} from the cache, {time.perf_counter() - t0:.0f}s; "
        f"oracle trimmed to --oracle-chars {args.oracle_chars}: {args.trimmed}"
    )
    report(results, args.arms, args.seed)
    if args.json_out:
        args.json_out.write_text(
            json.dumps([r.__dict__ for r in results], indent=1), encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
