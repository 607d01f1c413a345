"""bench.qa_locomo and its helpers (bench.qa_stats, bench.qa_cache) with the
scripted model: stratified deterministic sampling, bootstrap intervals on known
cases, leave-one-conversation-out that never sees the held-out conversation, the
prompt-hash cache, the `ask --batch` path with asked_at, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from bench import qa_locomo
from bench.qa_cache import CachedJudgeLLM, CachedLLM, cached_llm
from bench.qa_locomo import Outcome, Question, grounding_first
from bench.qa_stats import allocate, bootstrap_ci, leave_one_out, stratified_sample

from memagent.core import MemoryHome
from memagent.llm import LLMError
from memagent.llm.scripted import ScriptedLLM
from memagent.llm.yesno import YesNoJudge
from memagent.memory.chunks import ChunkDraft, ChunkStore
from memagent.setup import init_home


# -- sampling ---------------------------------------------------------------------------
def _items(sizes: dict[str, dict[str, int]]) -> list[tuple[str, str, int]]:
    return [(g, s, i) for g, cells in sizes.items() for s, n in cells.items() for i in range(n)]


SIZES = {
    "conv-a": {"1": 20, "2": 10, "5": 10},
    "conv-b": {"1": 5, "2": 25, "5": 10},
    "conv-c": {"1": 4, "2": 2},
}


def _sample(n: int, seed: int) -> list[tuple[str, str, int]]:
    return stratified_sample(
        _items(SIZES), n, group=lambda x: x[0], stratum=lambda x: x[1], seed=seed
    )


def test_sample_is_stratified_over_groups_and_categories() -> None:
    got = _sample(30, seed=1)
    assert len(got) == 30 and len(set(got)) == 30
    per = {g: [x for x in got if x[0] == g] for g in SIZES}
    # equal shares (10 each) except conv-c, which holds only 6: its rest goes to the others
    assert len(per["conv-c"]) == 6
    assert len(per["conv-a"]) == 12 and len(per["conv-b"]) == 12
    # inside a group, categories in proportion: conv-a is 20/10/10 of 40 -> 6/3/3 of 12
    assert sorted(sum(1 for x in per["conv-a"] if x[1] == s) for s in "125") == [3, 3, 6]


def test_sample_is_deterministic_by_seed() -> None:
    assert _sample(25, seed=7) == _sample(25, seed=7)
    assert _sample(25, seed=7) != _sample(25, seed=8)
    assert len(_sample(10_000, seed=7)) == len(_items(SIZES))  # more than there is: all


def test_allocate_never_exceeds_a_cell_and_sums_to_n() -> None:
    assert allocate(5, {"x": 1, "y": 100}) == {"x": 0, "y": 5}
    got = allocate(7, {"x": 3, "y": 3, "z": 3})
    assert sum(got.values()) == 7 and max(got.values()) <= 3


def test_sample_of_real_questions_covers_every_conversation() -> None:
    qs = [
        Question(f"conv-{c}", f"q{i}", 1 + i % 5, "?", "", "2023-01-02")
        for c in range(5)
        for i in range(50)
    ]
    got = qa_locomo.pick_questions(qs, 200, seed=12)
    assert {q.conv for q in got} == {f"conv-{c}" for c in range(5)}
    assert all(sum(q.conv == f"conv-{c}" for q in got) == 40 for c in range(5))
    order = qa_locomo.rounds(got, 10, seed=12)
    assert [r[0].conv for r in order[:5]] == [f"conv-{c}" for c in range(5)]
    assert sorted(q.qid + q.conv for r in order for q in r) == sorted(q.qid + q.conv for q in got)


# -- bootstrap --------------------------------------------------------------------------
def mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def test_bootstrap_interval_of_a_proportion_matches_the_normal_approximation() -> None:
    xs = [0.0] * 50 + [1.0] * 50
    est = bootstrap_ci(xs, mean, seed=3, b=4000)
    assert est.value == 0.5 and est.n == 100
    assert est.low is not None and est.high is not None
    # 0.5 +- 1.96 * sqrt(0.25 / 100) = 0.402 .. 0.598
    assert abs(est.low - 0.402) < 0.025 and abs(est.high - 0.598) < 0.025
    assert bootstrap_ci(xs, mean, seed=3, b=4000) == est  # deterministic by seed


def test_bootstrap_of_a_constant_is_a_point_and_of_nothing_is_undefined() -> None:
    est = bootstrap_ci([0.7] * 30, mean, seed=0)
    assert est.low == pytest.approx(0.7) and est.high == pytest.approx(0.7)
    empty = bootstrap_ci([], mean, seed=0)
    assert empty.value is None and empty.low is None and empty.show() == "–"
    with pytest.raises(ValueError):
        bootstrap_ci([1.0], mean, b=0)


def test_every_figure_has_an_interval() -> None:
    outs = [
        Outcome("c", f"q{i}", 1 + i % 5, "x" if i % 3 else "I don't have that in memory.",
                float(i % 2), 1.0 + i, 100, 5, True)
        for i in range(40)
    ]  # fmt: skip
    figs = qa_locomo.figures(outs, {c: 0.2 for c in range(1, 6)}, seed=1)
    for name in ("F1 cats 1-4", "F1 temporal", "adversarial refusal", "answerable refused",
                 "overall (paper)", "latency p50 s", "latency p95 s", "tokens/answer"):  # fmt: skip
        assert figs[name].low is not None and figs[name].high is not None, name
        assert figs[name].low <= figs[name].value <= figs[name].high  # type: ignore[operator]
    assert figs["tokens/answer"].value == 105.0


# -- leave-one-conversation-out -----------------------------------------------------------
def test_loco_picks_without_seeing_the_held_out_conversation() -> None:
    # "a" is by far the best on c1 only; "b" on the other two
    scores = {"a": {"c1": 1.0, "c2": 0.1, "c3": 0.1}, "b": {"c1": 0.0, "c2": 0.5, "c3": 0.5}}
    cands = {n: {c: [(c, v)] * 3 for c, v in per.items()} for n, per in scores.items()}
    seen: list[set[str]] = []

    def objective(items: list[tuple[str, float]]) -> float:
        seen.append({c for c, _ in items})
        return sum(v for _, v in items) / len(items)

    folds = {f.held_out: f for f in leave_one_out(["c1", "c2", "c3"], cands, objective)}
    assert folds["c1"].picked == "b"  # a's win on c1 is not visible when c1 is held out
    assert folds["c2"].picked == "a" and folds["c3"].picked == "a"
    assert folds["c1"].train_score == pytest.approx(0.5)
    assert all(len(s) == 2 for s in seen)  # every call saw two conversations, never three


def test_loco_ties_go_to_the_default_and_needs_two_groups() -> None:
    cands = {"x": {"c1": [1.0], "c2": [1.0]}, "y": {"c1": [1.0], "c2": [1.0]}}
    folds = leave_one_out(["c1", "c2"], cands, lambda xs: sum(xs), default="y")
    assert {f.picked for f in folds} == {"y"}
    with pytest.raises(ValueError):
        leave_one_out(["c1"], cands, lambda xs: 0.0)


def test_cv_report_prints_held_out_figures_per_fold(capsys: pytest.CaptureFixture[str]) -> None:
    def outs(conv: str, good: bool) -> list[Outcome]:
        return [Outcome(conv, f"q{i}", 4, "", 1.0 if good else 0.0, 1.0, 10, 1, True)
                for i in range(4)]  # fmt: skip

    runs = {
        "verify_min=0.5": outs("c1", True) + outs("c2", False) + outs("c3", False),
        "verify_min=0.9": outs("c1", False) + outs("c2", True) + outs("c3", True),
    }
    args = qa_locomo.build_parser().parse_args(["--objective", "f1", "--seed", "1"])
    qa_locomo.report_cv(runs, ["c1", "c2", "c3"], {4: 1.0}, args)
    out = capsys.readouterr().out
    assert "| c1 | verify_min=0.9 | 1.000 | 0.0 |" in out  # held out c1: picked on c2, c3
    assert "| c2 | verify_min=0.5 | 0.500 | 0.0 |" in out  # a tie: the first in order
    assert "held-out, pooled over the folds" in out


# -- the cache --------------------------------------------------------------------------
def _msgs(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


def test_cache_hit_avoids_the_model_call(tmp_path: Path) -> None:
    inner = ScriptedLLM(["one", "two"], verdicts=["0.25"])
    llm = cached_llm(inner, tmp_path / "c.jsonl")
    assert isinstance(llm, CachedJudgeLLM) and isinstance(llm, YesNoJudge)
    assert llm.chat(_msgs("q")).text == "one"
    assert llm.chat(_msgs("q")).text == "one"  # replayed, not "two"
    assert llm.yes_probability(_msgs("q")).p_yes == 0.25
    assert llm.yes_probability(_msgs("q")).p_yes == 0.25
    assert len(inner.calls) == 2 and (llm.calls, llm.hits) == (4, 2)
    assert llm.chat(_msgs("q"), max_tokens=7).text == "two"  # another parameter: a miss
    # a new process: the file answers, the model is never asked
    again = cached_llm(ScriptedLLM([], verdicts=[]), tmp_path / "c.jsonl")
    assert again.chat(_msgs("q")).text == "one"
    assert again.yes_probability(_msgs("q")).p_yes == 0.25
    assert again.hits == 2 and again.replayed_s >= 0.0


def test_cache_skips_a_torn_line_and_stores_no_failure(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    llm = cached_llm(ScriptedLLM(["ok"]), path)
    llm.chat(_msgs("a"))
    with path.open("a", encoding="utf-8") as f:
        f.write('{"key": "abc", "text": "tor')  # a killed run
    again = cached_llm(ScriptedLLM([]), path)
    assert len(again) == 1 and again.chat(_msgs("a")).text == "ok"
    with pytest.raises(LLMError):
        again.chat(_msgs("b"))  # the scripted model has nothing left
    assert len(cached_llm(ScriptedLLM([]), path)) == 1


def test_offline_cache_never_calls_the_model(tmp_path: Path) -> None:
    inner = ScriptedLLM(["never"])
    llm = cached_llm(inner, tmp_path / "c.jsonl", offline=True)
    with pytest.raises(LLMError, match="offline"):
        llm.chat(_msgs("x"))
    assert inner.calls == [] and llm.misses == 1


def test_prefix_cache_counts_what_a_reused_prefix_saves_hit_or_miss(tmp_path: Path) -> None:
    system = {"role": "system", "content": "rules " * 50}
    mem_a, mem_b = "Memory: Caroline went to Sweden. " * 10, "Memory: Melanie ran a race. " * 10

    def msgs(mem: str, tail: str = "") -> list[dict[str, str]]:
        return [system, {"role": "user", "content": mem + tail}]

    def run(order: list[str]) -> tuple[int, int]:
        inner = ScriptedLLM(["Sweden"], verdicts=["0.9", "0.8"])
        llm = cached_llm(inner, tmp_path / "p.jsonl")
        for step in order:
            if step == "answer":
                llm.chat(msgs(mem_a))
            else:
                llm.yes_probability(msgs(mem_a if step == "check" else mem_b, " yes or no?"))
        return llm.prefix.prompt, llm.prefix.evaluated

    prompt, probe_between = run(["check", "probe", "answer"])  # calls run now
    again, probe_first = run(["probe", "check", "answer"])  # replayed from the file
    assert again == prompt  # the same calls, the same prompt tokens
    assert probe_first < probe_between  # the answer follows its check: its memory reused
    assert 0 < probe_first < prompt


def test_grounding_check_comes_first_whatever_order_the_agent_asked() -> None:
    assert grounding_first([0.95, 0.8], 0.8) == [0.8, 0.95]  # the probe was asked first
    assert grounding_first([0.8, 0.95], 0.8) == [0.8, 0.95]
    assert grounding_first([0.8], 0.8) == [0.8] and grounding_first([0.3, 0.9], None) == [0.3, 0.9]


def test_plain_model_is_not_made_a_judge(tmp_path: Path) -> None:
    class Plain:
        name = "plain"

        def chat(self, messages: Any, **kw: Any) -> Any:
            raise AssertionError

        def stream(self, messages: Any, **kw: Any) -> Any:
            raise AssertionError

    llm = cached_llm(Plain(), tmp_path / "c.jsonl")  # type: ignore[arg-type]
    assert type(llm) is CachedLLM and not isinstance(llm, YesNoJudge)


# -- end to end: the ask --batch path on a scripted model -------------------------------------
CONV = {
    "speaker_a": "Ann",
    "speaker_b": "Bob",
    "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": [
        {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a cat named Pixel."},
        {"speaker": "Bob", "dia_id": "D1:2", "text": "I support Leeds United."},
    ],
    "session_2_date_time": "9:00 am on 20 May, 2023",
    "session_2": [{"speaker": "Ann", "dia_id": "D2:1", "text": "Pixel learned to fetch."}],
}
QA = [
    {"question": "What is the name of Ann's cat?", "answer": "Pixel", "category": 4},
    {"question": "Which club does Bob support?", "answer": "Leeds United", "category": 4},
    {"question": "When did Pixel learn to fetch?", "answer": "20 May 2023", "category": 2},
    {"question": "What is Bob's dog called?", "adversarial_answer": "Rex", "category": 5},
]


def _dataset(tmp: Path) -> tuple[Path, Path]:
    data, work = tmp / "data", tmp / "work"
    data.mkdir()
    for name in ("conv-1", "conv-2"):
        (data / f"{name}.json").write_text(
            json.dumps({"conversation": CONV, "qa": QA}), encoding="utf-8"
        )
        home = MemoryHome.open(work / "full" / name)  # built ahead: keyword only, no embedder
        init_home(home)
        cfg = home.layout.config
        cfg.write_text(cfg.read_text().replace("enabled = true", "enabled = false"))
        store = ChunkStore(MemoryHome.open(home.root), embeddings=False)
        store.create_many(
            [ChunkDraft(content=f"{t['speaker']}: {t['text']}", created_at=when,
                        conversation_id=f"{name}:{s}", source={"speaker": t["speaker"]})
             for s, when in ((1, "2023-05-08T13:56:00+00:00"), (2, "2023-05-20T09:00:00+00:00"))
             for t in CONV[f"session_{s}"]]  # type: ignore[attr-defined]
        )  # fmt: skip
        store.close()
    return data, work


def _script(tmp: Path, name: str, replies: list[str], verdicts: list[str]) -> str:
    path = tmp / name
    path.write_text(json.dumps({"replies": replies, "verdicts": verdicts}), encoding="utf-8")
    return f"scripted:{path}"


def _table(out: str) -> list[str]:
    return [x for x in out.splitlines() if x.startswith("| F1") or x.startswith("| adv")]


def test_run_answers_through_the_batch_path_and_reruns_from_the_cache(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, work = _dataset(tmp_path)
    cache = tmp_path / "cache.jsonl"
    common = ["--data", str(data), "--workdir", str(work), "--cache", str(cache),
              "--sample", "6", "--seed", "3"]  # fmt: skip
    model = _script(tmp_path, "a.json", [json.dumps({"reply": "Pixel"})] * 20, ["yes"] * 40)
    assert qa_locomo.main([*common, "--model", model]) == 0
    first = capsys.readouterr().out
    assert "6 questions" in first and "0 failed" in first
    assert "F1 cats 1-4 |" in first and "[" in first  # value [low–high]
    batch = [json.loads(x) for x in (work / "full" / "conv-1.batch.jsonl").read_text().splitlines()]
    assert {b["asked_at"] for b in batch} == {"2023-05-21"}  # the day after the last session
    assert cache.is_file() and cache.read_text().count("\n") > 0
    # nothing left in the script: every answer must come from the cache
    empty = _script(tmp_path, "b.json", [], [])
    assert qa_locomo.main([*common, "--model", empty]) == 0
    second = capsys.readouterr().out
    assert _table(second) == _table(first) and "0 failed" in second
    assert qa_locomo.main([*common, "--model", empty, "--offline"]) == 0
    assert _table(capsys.readouterr().out) == _table(first)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--sample", "0"], "--sample 0: must be at least 1"),
        (["--sample", "-5"], "--sample -5"),
        (["--set", "nope=1"], "expected KEY=VALUE"),
        (["--set", "verify_min=0.5,0.6"], "one value"),
        (["--cv", "verify_min=high"], "takes float values"),
        (["--conversations", "conv-99"], "no conversation conv-99"),
        (["--round-size", "0"], "--round-size 0"),
        (["--cv", "recall_k=3,5", "--conversations", "conv-1"], "at least two conversations"),
    ],
)
def test_malformed_arguments_give_one_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    data, work = _dataset(tmp_path)
    cache = tmp_path / "cache.jsonl"
    rc = qa_locomo.main(["--data", str(data), "--workdir", str(work), "--cache", str(cache),
                         "--model", "scripted:/nonexistent.json", *argv])  # fmt: skip
    err = capsys.readouterr().err.strip()
    assert rc == 2 and err.startswith("error: ") and message in err and "\n" not in err
    assert not cache.exists()  # nothing written


def test_missing_data_and_bad_types_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert qa_locomo.main(["--data", str(tmp_path / "none")]) == 2
    assert "no LoCoMo data" in capsys.readouterr().err
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "conv-1.json").write_text("[1, 2", encoding="utf-8")
    assert qa_locomo.main(["--data", str(bad)]) == 2
    assert "not a LoCoMo conversation" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        qa_locomo.main(["--sample", "many"])
    assert exc.value.code == 2


def test_imported_home_goes_through_memagent_import_and_redoes_a_broken_one(
    tmp_path: Path,
) -> None:
    home = tmp_path / "full" / "conv-1"
    (home / "chunks" / "junk").mkdir(parents=True)  # a killed import left this behind
    home.with_name("conv-1.importing").touch()
    rows = [{"id": f"D1:{i}", "role": "user", "content": f"Ann: line {i}",
             "timestamp": f"2023-05-08T13:56:0{i}+00:00", "conversation_id": "c"}
            for i in range(3)]  # fmt: skip

    def write(path: Path) -> None:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")

    assert qa_locomo.imported_home(home, write) == home
    assert not home.with_name("conv-1.importing").exists()
    assert not (home / "chunks" / "junk").exists()
    store = ChunkStore(MemoryHome.open(home), embeddings=False)
    assert sorted(r["content"] for r in store.list(limit=10)) == [r["content"] for r in rows]
    store.close()
    calls: list[Path] = []
    assert qa_locomo.imported_home(home, calls.append) == home and calls == []  # kept


def test_failed_import_is_one_error(tmp_path: Path) -> None:
    home = tmp_path / "h"
    with pytest.raises(qa_locomo.BenchError, match="import of h failed"):
        qa_locomo.imported_home(home, lambda p: p.write_text("{broken\n", encoding="utf-8"))
    assert home.with_name("h.importing").exists()  # the next run starts it again


def test_cv_runs_every_grid_point_and_reports_held_out_folds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, work = _dataset(tmp_path)
    model = _script(tmp_path, "a.json", [json.dumps({"reply": "Pixel"})] * 40, ["0.7"] * 80)
    rc = qa_locomo.main(["--data", str(data), "--workdir", str(work),
                         "--cache", str(tmp_path / "c.jsonl"), "--model", model,
                         "--cv", "verify_min=0.5,0.99", "--objective", "f1"])  # fmt: skip
    out = capsys.readouterr().out
    assert rc == 0
    assert "memagent (verify_min=0.5)" in out and "memagent (verify_min=0.99)" in out
    folds = [x for x in out.splitlines() if x.startswith("| conv-")]
    assert [x.split("|")[1].strip() for x in folds] == ["conv-1", "conv-2"]
    # P(yes) 0.7: 0.99 refuses every answer, 0.5 lets "Pixel" through; F1 picks 0.5
    assert all("verify_min=0.5 " in x for x in folds)
    assert "held-out, pooled over the folds" in out
