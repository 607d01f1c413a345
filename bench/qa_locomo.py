"""Question answering on LoCoMo with the embedded model: memagent vs the whole
conversation in the prompt vs no memory at all, same model, same run.

Each conversation is imported into a fresh memory home (one chunk per turn,
`speaker: text`, timestamped with its session date; see bench.recall_locomo),
then a sample of its questions is answered by three arms:

- **memagent**: the agent's own path (`Agent(prompt_set="qa")`, as `memagent ask
  --batch --short`): hybrid recall, the top hits as dated memory lines, speaker
  attribution, the grounding check (the model's P(yes) that the lines answer
  the question; under `--verify-min`, default the product's `agent.verify_min`,
  it refuses; then the contrast probe, `--contrast-below` / `--contrast-margin`:
  in the uncertain band the same question about the other speaker is checked
  too), then the model answers in a short phrase or says "I don't have
  that in memory."
- **full context**: the whole conversation, each session headed by its date, in
  the system message (a fixed prefix llama.cpp's prompt cache keeps), then the
  question; same rules.
- **no memory**: the same prompt as memagent with nothing recalled.

Scoring is LoCoMo's own (task_eval/evaluation.py): answers and gold are
normalised (lower case, punctuation, articles and "and" removed), tokens Porter-
stemmed, token F1; category 1 (multi-hop) splits both on commas and averages
the best match per gold part; category 3 keeps the gold before any ';';
category 5 (adversarial) scores 1 when the answer refuses (says it is not
mentioned / not in memory / not available). "Overall (paper)" averages all
five categories weighted by their share of the conversation's questions, as
the paper's overall column does.

    python -m bench.qa_locomo [--conversations conv-26] [--per-category 8]
                              [--arms memagent full no-memory] [--model embedded]

The machine this was built on has 2 shared cores (~75 prompt tokens/s): use a
subsample (`--per-category`, `--conversations`) and say so when reporting.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import string
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.recall_locomo import DATA, build_home, session_time, turns_of

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
REFUSALS = (
    "not mentioned",
    "no information",
    "don't have that",
    "do not have that",
    "not in memory",
    "not available",
    "don't know",
    "not specified",
)
ANCHORS = {
    "gpt-3.5-turbo, retrieval over dialog turns, top-10 (paper)": 39.7,
    "gpt-3.5-turbo, best retrieval (observations, top-5) (paper)": 43.3,
    "gpt-4-turbo, whole conversation 128K (paper)": 51.6,
    "humans (paper)": 87.9,
}


# -- LoCoMo scoring ---------------------------------------------------------------------
def _stemmer() -> Callable[[str], str]:
    import snowballstemmer

    porter = snowballstemmer.stemmer("porter")
    return lambda w: str(porter.stemWord(w))


_stem = _stemmer()


def normalize_answer(s: str) -> str:
    s = s.replace(",", "").lower()
    s = "".join(ch for ch in s if ch not in set(string.punctuation))
    s = re.sub(r"\b(a|an|the|and)\b", " ", s)
    return " ".join(s.split())


def f1_score(prediction: str, gold: str) -> float:
    pred = [_stem(w) for w in normalize_answer(prediction).split()]
    truth = [_stem(w) for w in normalize_answer(gold).split()]
    same = sum((Counter(pred) & Counter(truth)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred), same / len(truth)
    return 2 * precision * recall / (precision + recall)


def f1_multi(prediction: str, gold: str) -> float:
    preds = [p.strip() for p in prediction.split(",")]
    golds = [g.strip() for g in gold.split(",")]
    return statistics.fmean(max(f1_score(p, g) for p in preds) for g in golds)


def refuses(answer: str) -> bool:
    low = answer.lower().replace("’", "'")
    return any(r in low for r in REFUSALS)


def score(category: int, answer: str, gold: str) -> float:
    if category == 5:
        return 1.0 if refuses(answer) else 0.0
    if category == 3:
        gold = gold.split(";")[0].strip()
    if category == 1:
        return f1_multi(answer, gold)
    return f1_score(answer, gold)


# -- the arms ---------------------------------------------------------------------------
@dataclass
class Outcome:
    qid: str
    category: int
    answer: str
    score: float
    seconds: float
    prompt_tokens: int
    ok: bool
    p_grounded: float | None = None
    """The grounding check's P(yes) (memagent arm; None where it did not run)."""


@dataclass
class Arm:
    name: str
    outcomes: list[Outcome] = field(default_factory=list)
    on_answer: Callable[[], None] | None = None
    """Called after every answer (`--json-out` writes the answers so far)."""


def sample_questions(
    conv: dict[str, Any], per_category: int, seed: int, categories: list[int] | None = None
) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    by_cat: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for i, q in enumerate(conv["qa"]):
        by_cat[int(q["category"])].append({**q, "qid": f"q{i}"})
    out: list[dict[str, Any]] = []
    for cat in sorted(by_cat):
        if categories and cat not in categories:
            continue
        qs = by_cat[cat]
        out += qs if per_category <= 0 else rng.sample(qs, min(per_category, len(qs)))
    return out


def gold_of(q: dict[str, Any]) -> str:
    return str(q.get("answer", q.get("adversarial_answer", "")))


def transcript(conv: dict[str, Any]) -> str:
    lines: list[str] = []
    n = 1
    while f"session_{n}" in conv:
        when = session_time(conv[f"session_{n}_date_time"])
        # the date as memagent's memory lines write it ("8 May 2023"), so both arms
        # can quote a date the way LoCoMo's gold answers do
        lines.append(f"Session {n}, {when.day} {when:%B %Y}, {when:%H:%M}:")
        for t in conv[f"session_{n}"]:
            text = f"{t['speaker']}: {t['text']}"
            if t.get("blip_caption"):
                text += f" [shares a photo: {t['blip_caption']}]"
            lines.append(text)
        n += 1
    return "\n".join(lines)


def run_agent_arm(
    arm: Arm, home: Any, llm: Any, questions: list[dict[str, Any]], *, retrieval: bool
) -> None:
    from memagent.agent import Agent

    with Agent(
        home, llm, prompt_set="qa", record=False, learn_profile=False, retrieval=retrieval
    ) as agent:
        for q in questions:
            t0 = time.perf_counter()
            r = agent.turn(q["question"])
            arm.outcomes.append(
                Outcome(
                    q["qid"],
                    int(q["category"]),
                    r.reply,
                    score(int(q["category"]), r.reply if r.ok else "", gold_of(q)),
                    time.perf_counter() - t0,
                    r.usage.prompt_tokens,
                    r.ok,
                    r.p_grounded,
                )
            )
            _progress(arm, q, r.reply)


def run_full_context_arm(
    arm: Arm, conv: dict[str, Any], llm: Any, questions: list[dict[str, Any]]
) -> None:
    from memagent.agent.prompts import load_prompt_set
    from memagent.agent.protocol import reply_schema
    from memagent.llm import LLMError

    qa = load_prompt_set("qa")
    rules = qa.render("system", persona="").replace("Memory: lines", "the conversation below")
    system = f"{rules}\n\nConversation:\n{transcript(conv)}"
    for q in questions:
        t0 = time.perf_counter()
        try:
            res = llm.chat(
                [
                    {"role": "system", "content": system},
                    {"role": "user", "content": f"Question: {q['question']}"},
                ],
                response_schema=reply_schema(),
                max_tokens=96,
            )
            answer, ok, tokens = str(json.loads(res.text)["reply"]), True, res.usage.prompt_tokens
        except LLMError as exc:
            answer, ok, tokens = f"(failed: {exc})", False, 0
        arm.outcomes.append(
            Outcome(
                q["qid"],
                int(q["category"]),
                answer,
                score(int(q["category"]), answer if ok else "", gold_of(q)),
                time.perf_counter() - t0,
                tokens,
                ok,
            )
        )
        _progress(arm, q, answer)


def _progress(arm: Arm, q: dict[str, Any], answer: str) -> None:
    o = arm.outcomes[-1]
    print(
        f"  [{arm.name}] {len(arm.outcomes):3d} cat{o.category} {o.score:.2f} {o.seconds:5.1f}s "
        f"{q['question'][:60]!r} -> {answer[:60]!r} (gold {gold_of(q)[:40]!r})",
        file=sys.stderr,
        flush=True,
    )
    if arm.on_answer is not None:
        arm.on_answer()


# -- report -----------------------------------------------------------------------------
def pct(xs: list[float], p: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p * (len(xs) - 1)))]


def summary(arm: Arm, weights: dict[int, float]) -> dict[str, Any]:
    by_cat: dict[int, list[float]] = defaultdict(list)
    for o in arm.outcomes:
        by_cat[o.category].append(o.score)
    cats = {c: statistics.fmean(v) for c, v in by_cat.items()}
    f14 = [o.score for o in arm.outcomes if o.category != 5]
    wsum = sum(weights[c] for c in cats)
    overall = sum(cats[c] * weights[c] for c in cats) / wsum if wsum else float("nan")
    secs = [o.seconds for o in arm.outcomes]
    return {
        "arm": arm.name,
        "n": {CATEGORIES[c]: len(v) for c, v in sorted(by_cat.items())},
        "f1": {CATEGORIES[c]: round(v, 3) for c, v in sorted(cats.items()) if c != 5},
        "f1_cat1to4_mean": round(statistics.fmean(f14), 3) if f14 else None,
        "adversarial_refusal": round(cats[5], 3) if 5 in cats else None,
        "overall_paper": round(100 * overall, 1),
        "latency_p50_s": round(pct(secs, 0.5), 2),
        "latency_p95_s": round(pct(secs, 0.95), 2),
        "prompt_tokens_per_answer": round(statistics.fmean(o.prompt_tokens for o in arm.outcomes)),
        "failed": sum(not o.ok for o in arm.outcomes),
        # answerable questions the arm refused (speaker attribution's false refusals among them)
        "refused_cat1to4": sum(refuses(o.answer) for o in arm.outcomes if o.category != 5),
    }


def print_table(rows: list[dict[str, Any]]) -> None:
    cols = ["multi-hop", "temporal", "open-domain", "single-hop"]
    print("\n| arm | " + " | ".join(cols) + " | F1 1–4 | adversarial refusal | overall (paper) "
          "| p50 s | p95 s | prompt tok/answer | refused of cats 1–4 |")  # fmt: skip
    print("|" + "---|" * (len(cols) + 8))
    for r in rows:
        cells = [str(r["f1"].get(c, "–")) for c in cols]
        print(
            f"| {r['arm']} | " + " | ".join(cells) + f" | {r['f1_cat1to4_mean']} | "
            f"{r['adversarial_refusal']} | {r['overall_paper']} | {r['latency_p50_s']} | "
            f"{r['latency_p95_s']} | {r['prompt_tokens_per_answer']} | {r['refused_cat1to4']} |"
        )


def set_agent_config(path: Path, values: dict[str, float | int]) -> None:
    """Set keys of the `[agent]` table of a home's config.toml (text edit, rest kept)."""
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


def run_conversations(
    args: argparse.Namespace, llm: Any, arms: dict[str, Arm], weights: Counter[int], workdir: Path
) -> None:
    from memagent.core import MemoryHome

    for path in sorted(args.data.glob("conv-*.json")):
        if path.stem not in args.conversations:
            continue
        raw = json.loads(path.read_text(encoding="utf-8"))
        conv = {**raw.get("conversation", raw), "qa": raw["qa"]}
        weights.update(int(q["category"]) for q in conv["qa"])
        questions = sample_questions(conv, args.per_category, args.seed, args.categories)
        print(f"{path.stem}: {len(questions)} questions", file=sys.stderr)
        store = build_home(workdir, path.stem, turns_of(conv))
        store.close()
        home = MemoryHome.open(workdir / path.stem)
        values: dict[str, float | int] = {
            "recall_k": args.recall_k, "recall_min_ratio": 0.0, "context_tokens": 1600}  # fmt: skip
        for key in ("verify_min", "contrast_below", "contrast_margin"):
            if getattr(args, key) is not None:
                values[key] = getattr(args, key)
        set_agent_config(home.layout.config, values)
        home = MemoryHome.open(workdir / path.stem)
        # each arm runs all its questions in a row, so its fixed prompt prefix stays in
        # the cache; the full-context arm (long, slow) comes last
        if "memagent" in arms:
            run_agent_arm(arms["memagent"], home, llm, questions, retrieval=True)
        if "no-memory" in arms:
            run_agent_arm(arms["no-memory"], home, llm, questions, retrieval=False)
        if "full" in arms and (
            args.full_conversations is None or path.stem in args.full_conversations
        ):
            run_full_context_arm(arms["full"], conv, llm, questions)


def category_weights(args: argparse.Namespace) -> dict[int, float]:
    counts: Counter[int] = Counter()
    for name in args.conversations:
        raw = json.loads((args.data / f"{name}.json").read_text(encoding="utf-8"))
        counts.update(int(q["category"]) for q in raw["qa"])
    total = sum(counts.values())
    return {c: n / total for c, n in counts.items()}


def report_saved(args: argparse.Namespace) -> int:
    saved = json.loads(args.from_json.read_text(encoding="utf-8"))["answers"]
    arms = [Arm(name, [Outcome(**o) for o in outs]) for name, outs in saved.items() if outs]
    if not arms:
        print(f"no answers in {args.from_json}", file=sys.stderr)
        return 2
    w = category_weights(args)
    rows = [summary(a, w) for a in arms]
    print(f"LoCoMo QA, {', '.join(args.conversations)} (saved answers, {args.from_json})")
    for r in rows:
        print(f"{r['arm']}: n per category {r['n']}")
    print_table(rows)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--conversations", nargs="*", default=["conv-26"])
    ap.add_argument("--per-category", type=int, default=8, help="0: every question")
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--arms", nargs="*", default=["memagent", "full", "no-memory"])
    ap.add_argument("--model", default="embedded")
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--n-ctx", type=int, default=32768, help="room for the full-context arm")
    ap.add_argument("--recall-k", type=int, default=10)
    ap.add_argument(
        "--verify-min",
        type=float,
        default=None,
        help="the grounding check's P(yes) threshold (agent.verify_min; 0: off); "
        "default: the product's",
    )
    ap.add_argument(
        "--contrast-below",
        type=float,
        default=None,
        help="the contrast probe's band (agent.contrast_below; 0: off); default: the product's",
    )
    ap.add_argument(
        "--contrast-margin",
        type=float,
        default=None,
        help="the contrast probe's margin (agent.contrast_margin); default: the product's",
    )
    ap.add_argument("--threads", type=int, default=2, help="llama.cpp CPU threads")
    ap.add_argument("--json-out", type=Path, default=None, help="answers, written as they come")
    ap.add_argument("--categories", nargs="*", type=int, default=None, help="default: 1-5")
    ap.add_argument(
        "--full-conversations",
        nargs="*",
        default=None,
        help="conversations the (slow) full-context arm runs on; default: all",
    )
    ap.add_argument(
        "--from-json",
        type=Path,
        default=None,
        help="report the answers a (partial) --json-out run saved, answering nothing",
    )
    args = ap.parse_args(argv)
    if args.from_json:
        return report_saved(args)

    from memagent.core.config import LLMConfig
    from memagent.llm import load_llm

    llm = load_llm(args.model, LLMConfig(n_ctx=args.n_ctx, threads=args.threads))
    t0 = time.perf_counter()
    load_s = llm.load() if hasattr(llm, "load") else 0.0
    print(f"model {llm.name}: loaded in {load_s:.1f}s", file=sys.stderr)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="locomo-qa-"))
    arms = {name: Arm(name) for name in args.arms}
    if args.json_out:
        out_path = args.json_out

        def save() -> None:
            detail = {a.name: [o.__dict__ for o in a.outcomes] for a in arms.values()}
            tmp = out_path.with_suffix(".tmp")
            tmp.write_text(json.dumps({"answers": detail}, indent=1))
            tmp.replace(out_path)

        for arm in arms.values():
            arm.on_answer = save
    weights: Counter[int] = Counter()
    try:
        run_conversations(args, llm, arms, weights, workdir)
    except KeyboardInterrupt:  # Ctrl-C: report the answers so far
        print("interrupted: reporting the answers so far", file=sys.stderr)
    if not any(a.outcomes for a in arms.values()):
        print(f"no questions answered: no {args.conversations} under {args.data}", file=sys.stderr)
        return 2
    total = sum(weights.values())
    w = {c: n / total for c, n in weights.items()}
    rows = [summary(a, w) for a in arms.values() if a.outcomes]
    answers = sum(len(a.outcomes) for a in arms.values())
    print(
        f"\nLoCoMo QA, {', '.join(args.conversations)}; model {llm.name}; {answers} answers "
        f"in {time.perf_counter() - t0:.0f}s; sample sizes per category: {rows[0]['n']}"
    )
    print_table(rows)
    by = {r["arm"]: r for r in rows}
    if "memagent" in by and "full" in by:
        m, f = by["memagent"], by["full"]
        print(
            f"\nmemagent vs full context: F1 1–4 {m['f1_cat1to4_mean']} vs {f['f1_cat1to4_mean']}, "
            f"prompt tokens/answer {m['prompt_tokens_per_answer']} vs "
            f"{f['prompt_tokens_per_answer']} "
            f"({f['prompt_tokens_per_answer'] / max(m['prompt_tokens_per_answer'], 1):.1f}x fewer)"
        )
    if "memagent" in by and "no-memory" in by:
        m, n = by["memagent"], by["no-memory"]
        ratio = m["f1_cat1to4_mean"] / max(n["f1_cat1to4_mean"], 1e-3)
        print(f"memagent vs no memory: F1 1–4 {m['f1_cat1to4_mean']} vs "
              f"{n['f1_cat1to4_mean']} ({ratio:.1f}x)")  # fmt: skip
    print("published anchors, overall F1 (paper's way): " + "; ".join(
        f"{k} {v}" for k, v in ANCHORS.items()))  # fmt: skip
    if args.json_out:
        detail = {a.name: [o.__dict__ for o in a.outcomes] for a in arms.values()}
        args.json_out.write_text(json.dumps({"summary": rows, "answers": detail}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
