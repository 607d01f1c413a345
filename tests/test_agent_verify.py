"""The grounding check (`memagent.agent.verify`): before answering from memory, the
model's probability that the recalled lines answer the question is read; under
`agent.verify_min` the reply is the refusal and the model is not asked to answer."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memagent.agent import Agent
from memagent.cli.app import app
from memagent.core import CorruptFile, MemoryHome
from memagent.core.config import load_config
from memagent.llm import ChatResult, LLMError, ScriptedLLM
from memagent.llm.base import MessageLike
from memagent.memory.chunks import ChunkDraft, ChunkStore

QUESTION = "Where is Caroline's grandma from?"
ANSWER = json.dumps({"reply": "Sweden"})


def told(home: MemoryHome) -> None:
    store = ChunkStore(home, embeddings=False)
    store.create_many(
        [
            ChunkDraft(
                content=f"Caroline: {text}",
                created_at=f"2023-05-08T13:56:{i:02d}+00:00",
                conversation_id="import:1",
                source={"kind": "import", "speaker": "Caroline"},
            )
            for i, text in enumerate(
                ["My grandma gave me this necklace; she is from Sweden.", "I love my grandma."]
            )
        ]
    )
    store.close()


def set_verify_min(home: MemoryHome, value: float) -> MemoryHome:
    cfg = home.layout.config
    text = cfg.read_text(encoding="utf-8")
    assert text.count("\nverify_min = ") == 1  # `init` writes every default
    cfg.write_text(re.sub(r"\nverify_min = .*\n", f"\nverify_min = {value}\n", text))
    return MemoryHome.open(home.root)


def ask(home: MemoryHome, llm: object, question: str = QUESTION, prompt_set: str = "qa") -> tuple:
    with Agent(home, llm, prompt_set=prompt_set, learn_profile=False, embeddings=False) as a:  # type: ignore[arg-type]
        r = a.turn(question)
        a.flush()
        trace = a.traces.last()
    return r, trace


def test_a_low_probability_refuses_without_asking_for_the_answer(home: MemoryHome) -> None:
    told(home)
    llm = ScriptedLLM([ANSWER], verdicts=["0.2"])
    r, trace = ask(set_verify_min(home, 0.5), llm)
    assert r.ok and r.reply == "I don't have that in memory." and r.p_grounded == 0.2
    assert len(llm.calls) == 1 and llm.remaining == 1  # only the yes/no question
    check = llm.calls[0].messages
    assert "Sweden" in check[-1].content and QUESTION in check[-1].content
    assert check[-1].content.endswith("Answer yes or no.")
    assert trace["memory"]["verify"] == {"p_yes": 0.2, "threshold": 0.5}
    assert "do not answer it" in trace["memory"]["refused"]


def test_the_check_shares_the_answers_prompt_prefix(home: MemoryHome) -> None:
    told(home)
    llm = ScriptedLLM([ANSWER], verdicts=["0.9"])
    r, _ = ask(set_verify_min(home, 0.5), llm)
    assert r.reply == "Sweden" and len(llm.calls) == 2
    check, answer = llm.calls[0].messages, llm.calls[1].messages
    assert [m.role for m in check] == [m.role for m in answer]
    assert check[0] == answer[0]  # the same system text: llama.cpp's cache serves it
    assert check[-1].content.startswith(answer[-1].content)  # memory + question, then the ask
    assert r.usage.prompt_tokens > 2 * len(QUESTION.split())


def test_the_checks_tokens_are_the_backends_count(home: MemoryHome) -> None:
    told(home)
    llm = ScriptedLLM([ANSWER], verdicts=["0.9"])
    r, _ = ask(set_verify_min(home, 0.5), llm)
    # the scripted model counts words: both prompts, as sent, and one token for the verdict
    sent = [sum(len(m.content.split()) for m in c.messages) for c in llm.calls]
    assert r.usage.prompt_tokens == sum(sent)
    assert r.usage.completion_tokens == len(ANSWER.split()) + 1


def test_the_qa_set_sends_no_persona(home: MemoryHome) -> None:
    told(home)
    llm = ScriptedLLM([ANSWER], verdicts=["0.9"])
    ask(set_verify_min(home, 0.5), llm)
    system = llm.calls[0].messages[0].content
    assert system.startswith("You answer questions from memory.") and "Style:" not in system


@pytest.mark.parametrize(("p", "threshold", "answered"),
    [("0.3", 0.25, True), ("0.3", 0.35, False), ("0.5", 0.5, True), ("yes", 0.99, True),
     ("no", 0.01, False)])  # fmt: skip
def test_threshold(home: MemoryHome, p: str, threshold: float, answered: bool) -> None:
    told(home)
    r, _ = ask(set_verify_min(home, threshold), ScriptedLLM([ANSWER], verdicts=[p]))
    assert (r.reply == "Sweden") is answered


def test_zero_turns_the_check_off(home: MemoryHome) -> None:
    told(home)
    llm = ScriptedLLM([ANSWER], verdicts=["no"])
    r, trace = ask(set_verify_min(home, 0.0), llm)
    assert r.reply == "Sweden" and len(llm.calls) == 1 and "verify" not in trace["memory"]


@pytest.mark.parametrize("verdict", ["maybe", "1.7", "", '{"reply": "no"}'])
def test_a_malformed_verdict_never_refuses(home: MemoryHome, verdict: str) -> None:
    told(home)
    r, trace = ask(set_verify_min(home, 0.5), ScriptedLLM([ANSWER], verdicts=[verdict]))
    assert r.ok and r.reply == "Sweden" and r.p_grounded is None
    assert trace["memory"]["verify"]["p_yes"] is None and trace["memory"]["verify"]["error"]


class NoProbabilities:
    """A backend with chat only (no token probabilities), or with a broken judge."""

    name = "plain"

    def __init__(self, judge: object = None) -> None:
        self.inner = ScriptedLLM([ANSWER])
        if judge is not None:
            self.yes_probability = judge

    def chat(self, messages: Sequence[MessageLike], **kw: object) -> ChatResult:
        return self.inner.chat(messages)

    def stream(self, messages: Sequence[MessageLike], **kw: object) -> object:
        return self.inner.stream(messages)


def fails(messages: object) -> float:
    raise LLMError("the server closed the connection")


@pytest.mark.parametrize(
    ("llm", "why"),
    [
        (NoProbabilities(), "gives no token probabilities"),
        (NoProbabilities(fails), "closed the connection"),
        (NoProbabilities(lambda m: float("nan")), "malformed"),
        (NoProbabilities(lambda m: "0.1"), "malformed"),
    ],
)
def test_no_verdict_from_the_backend_answers_as_before(
    home: MemoryHome, llm: NoProbabilities, why: str
) -> None:
    told(home)
    r, trace = ask(set_verify_min(home, 0.5), llm)
    assert r.reply == "Sweden" and why in trace["memory"]["verify"]["error"]
    # the answer's own prompt is counted; the check's only when the model was asked
    answer_tokens = len(ANSWER.split())
    asked = why != "gives no token probabilities"
    assert r.usage.completion_tokens == answer_tokens + (1 if asked else 0)


def test_which_questions_the_chat_set_checks(home: MemoryHome) -> None:
    """`instruct` (chat, default `ask`, `Agent.run`, `/v1/chat`) checks questions
    about the user's own life; a question about someone else or the world, or
    one asking for a judgement, is not checked there."""
    told(home)
    llm = ScriptedLLM([json.dumps({"reply": "From Sweden."})], verdicts=["no"])
    r, trace = ask(set_verify_min(home, 0.5), llm, prompt_set="instruct")
    assert "Sweden" in r.reply and len(llm.calls) == 1 and "verify" not in trace["memory"]
    llm = ScriptedLLM([json.dumps({"reply": "From Sweden."})], verdicts=["no"])
    r, trace = ask(home, llm, question="Would Caroline like Sweden?", prompt_set="instruct")
    assert len(llm.calls) == 1 and "verify" not in trace["memory"]
    mine = ScriptedLLM([json.dumps({"reply": "Sweden."})], verdicts=["no"])
    r, trace = ask(home, mine, question="Where is my grandma from?", prompt_set="instruct")
    assert r.reply == "I don't have that in memory." and trace["memory"]["verify"]["p_yes"] == 0
    assert len(mine.calls) == 1 and mine.remaining == 1  # the check only: no answer asked
    empty = ScriptedLLM([json.dumps({"reply": "Your dog is Rex."})], verdicts=["yes"])
    r, trace = ask(home, empty, question="What is my dog called?")  # no line on a dog
    assert r.reply == "I don't have that in memory." and not empty.calls  # the focus check
    assert "mentions your dog" in trace["memory"]["refused"]


def test_cli_ask_short_and_batch_refuse_on_a_low_verdict(home: MemoryHome, tmp_path: Path) -> None:
    told(set_verify_min(home, 0.5))
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"replies": [ANSWER], "verdicts": ["0.1", "0.9"]}))
    runner = CliRunner()
    h, model = str(home.root), f"scripted:{script}"
    res = runner.invoke(app, ["ask", QUESTION, "--short", "--home", h, "--model", model])
    assert res.exit_code == 0, res.stderr
    assert res.stdout.strip() == "I don't have that in memory."
    qs = tmp_path / "q.jsonl"
    qs.write_text("".join(json.dumps({"id": i, "question": QUESTION}) + "\n" for i in (1, 2)))
    res = runner.invoke(
        app, ["ask", "--batch", str(qs), "--json", "--short", "--home", h, "--model", model]
    )
    assert res.exit_code == 0, res.stderr
    first, second = (json.loads(x) for x in res.stdout.splitlines())
    assert first["answer"] == "I don't have that in memory." and first["ok"]
    assert second["answer"] == "Sweden"  # P(yes) 0.9: answered
    assert (first["p_grounded"], second["p_grounded"]) == (0.1, 0.9)


def test_chat_with_the_qa_set_refuses_on_a_low_verdict(home: MemoryHome, tmp_path: Path) -> None:
    told(set_verify_min(home, 0.5))
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"replies": [ANSWER], "verdicts": ["0.05", "0.95"]}))
    res = CliRunner().invoke(
        app,
        ["chat", "--home", str(home.root), "--model", f"scripted:{script}", "--no-learn",
         "--prompt-set", "qa"],
        input=f"{QUESTION}\n{QUESTION}\n",
    )  # fmt: skip
    assert res.exit_code == 0, res.stderr
    assert [x for x in res.stdout.split("\n") if x] == ["I don't have that in memory.", "Sweden"]


@pytest.mark.parametrize(
    "question",
    ["Would Caroline's grandma likely enjoy Sweden?", "What might Caroline say about her grandma?"],
)
def test_a_question_asking_for_a_judgement_is_not_checked(home: MemoryHome, question: str) -> None:
    told(home)
    llm = ScriptedLLM([ANSWER], verdicts=["no"])
    r, trace = ask(set_verify_min(home, 0.5), llm, question=question)
    assert r.reply == "Sweden" and len(llm.calls) == 1 and r.p_grounded is None
    assert trace["memory"]["verify"] == {"skipped": "the question asks for a judgement"}


@pytest.mark.parametrize("value", ["1.5", "-0.1", '"high"', "nan"])
def test_a_verify_min_outside_zero_to_one_is_a_clear_config_error(
    home: MemoryHome, value: str
) -> None:
    cfg = home.layout.config
    text = cfg.read_text(encoding="utf-8")
    cfg.write_text(re.sub(r"\nverify_min = .*\n", f"\nverify_min = {value}\n", text))
    written = cfg.read_bytes()
    with pytest.raises(CorruptFile, match=r"agent\.verify_min"):
        ask(MemoryHome.open(home.root), ScriptedLLM([ANSWER], verdicts=["yes"]))
    assert cfg.read_bytes() == written


# -- the contrast probe: the same question about the other speaker -------------------


def two_speakers(home: MemoryHome) -> MemoryHome:
    store = ChunkStore(home, embeddings=False)
    lines = [
        ("Caroline", "My grandma gave me this necklace; she is from Sweden."),
        ("Melanie", "My grandma is from Norway, she taught me to knit."),
        ("Melanie", "I ran a charity race for mental health last Saturday."),
    ]
    store.create_many(
        [
            ChunkDraft(
                content=f"{who}: {text}",
                created_at=f"2023-05-08T13:56:{i:02d}+00:00",
                conversation_id="import:1",
                source={"kind": "import", "speaker": who},
            )
            for i, (who, text) in enumerate(lines)
        ]
    )
    store.close()
    return set_agent(home, verify_min=0.5, contrast_below=0.9, contrast_margin=0.05)


def set_agent(home: MemoryHome, **values: float) -> MemoryHome:
    cfg = home.layout.config
    text = cfg.read_text(encoding="utf-8")
    for key, value in values.items():
        assert text.count(f"\n{key} = ") == 1  # `init` writes every default
        text = re.sub(rf"\n{key} = .*\n", f"\n{key} = {value}\n", text)
    cfg.write_text(text)
    return MemoryHome.open(home.root)


@pytest.mark.parametrize(
    ("verdicts", "answered"),
    [(["0.8", "0.95"], False), (["0.8", "0.84"], True), (["0.8", "no"], True)],
)
def test_the_question_about_the_other_speaker_refuses_when_it_fits_better(
    home: MemoryHome, verdicts: list[str], answered: bool
) -> None:
    h = two_speakers(home)
    llm = ScriptedLLM([ANSWER], verdicts=verdicts)
    r, trace = ask(h, llm)
    assert (r.reply == "Sweden") is answered
    assert len(llm.calls) == (3 if answered else 2)
    probe = llm.calls[1].messages
    assert probe[0] == llm.calls[0].messages[0]  # the same system text
    assert "Where is Melanie's grandma from?" in probe[-1].content
    assert "Norway" in probe[-1].content and "Sweden" not in probe[-1].content  # its own memory
    contrast = trace["memory"]["contrast"]
    assert contrast["question"] == "Where is Melanie's grandma from?"
    assert contrast["p_yes"] == float(verdicts[1] if verdicts[1] != "no" else 0.0)
    if not answered:
        assert "another person" in trace["memory"]["refused"]
    # every call's prompt is counted
    assert r.usage.prompt_tokens == sum(
        sum(len(m.content.split()) for m in c.messages) for c in llm.calls
    )


@pytest.mark.parametrize(
    ("verdicts", "answered"), [(["0.95", "0.8"], False), (["0.84", "0.8"], True)]
)
def test_when_every_probe_is_read_it_is_asked_first_and_the_answer_follows_the_check(
    home: MemoryHome, verdicts: list[str], answered: bool
) -> None:
    # contrast_below 1 (the default): the swapped question first, the question's own
    # check last, so the answer's prompt is the check's less its last line (served
    # from llama.cpp's prompt cache); the decision is the one the other order makes
    h = set_agent(two_speakers(home), contrast_below=1.0)
    llm = ScriptedLLM([ANSWER], verdicts=verdicts)
    r, trace = ask(h, llm)
    assert (r.reply == "Sweden") is answered and r.p_grounded == 0.8
    assert r.refused_by == (None if answered else "contrast")
    assert len(llm.calls) == (3 if answered else 2)
    probe, check = llm.calls[0].messages, llm.calls[1].messages
    assert "Where is Melanie's grandma from?" in probe[-1].content
    assert QUESTION in check[-1].content and "Sweden" in check[-1].content
    if answered:
        answer = llm.calls[2].messages
        assert answer[:-1] == check[:-1]
        assert check[-1].content.startswith(answer[-1].content)  # a prefix of the check
    assert trace["memory"]["contrast"]["p_yes"] == float(verdicts[0])
    assert trace["memory"]["verify"] == {"p_yes": 0.8, "threshold": 0.5}


def test_a_refused_check_refuses_whatever_the_probe_said_first(home: MemoryHome) -> None:
    h = set_agent(two_speakers(home), contrast_below=1.0)
    for probe in ("0.1", "0.99", "maybe"):  # low, high, no verdict
        llm = ScriptedLLM([ANSWER], verdicts=[probe, "0.3"])
        r, trace = ask(h, llm)
        assert r.reply == "I don't have that in memory." and r.refused_by == "verify"
        assert len(llm.calls) == 2 and llm.remaining == 1  # never asked for the answer
        assert "do not answer it" in trace["memory"]["refused"]


def test_a_probe_with_nothing_to_ask_costs_no_call_in_either_order(home: MemoryHome) -> None:
    h = set_agent(two_speakers(home), contrast_below=1.0)
    llm = ScriptedLLM([json.dumps({"reply": "a charity race"})], verdicts=["0.8", "yes"])
    r, trace = ask(h, llm, question="What did Melanie do last Saturday for her grandma?")
    assert r.reply == "a charity race" and len(llm.calls) == 2
    assert "attribution" in trace["memory"]["contrast"]["skipped"]


def test_no_probe_above_the_band_or_when_off(home: MemoryHome) -> None:
    h = two_speakers(home)
    llm = ScriptedLLM([ANSWER], verdicts=["0.95"])
    r, trace = ask(h, llm)  # over contrast_below: one check, then the answer
    assert r.reply == "Sweden" and len(llm.calls) == 2 and "contrast" not in trace["memory"]
    llm = ScriptedLLM([ANSWER], verdicts=["0.6"])
    r, trace = ask(set_agent(h, contrast_below=0.0), llm)
    assert r.reply == "Sweden" and len(llm.calls) == 2 and "contrast" not in trace["memory"]


def test_no_probe_when_attribution_refuses_the_swapped_question(home: MemoryHome) -> None:
    h = two_speakers(home)
    llm = ScriptedLLM([json.dumps({"reply": "a charity race"})], verdicts=["0.8", "yes"])
    r, trace = ask(h, llm, question="What did Melanie do last Saturday for her grandma?")
    # "What did Caroline do last Saturday …?" matches Melanie's line better: attribution
    # refuses it, so the lines are about Melanie; no model call for it, the answer goes ahead
    assert r.reply == "a charity race" and len(llm.calls) == 2
    assert "attribution" in trace["memory"]["contrast"]["skipped"]


def test_the_probe_finds_the_other_speaker_when_recall_shows_only_the_named_one(
    home: MemoryHome,
) -> None:
    # recall's speaker boost fills the context with the named person's lines; the
    # probe recalls the topic again without the name to find who else spoke of it
    store = ChunkStore(home, embeddings=False)
    lines = [("Jon", "Dance festival at my studio!")] + [
        ("Gina", f"My store had a stand at a dance festival by a studio, day {i}.")
        for i in range(20)
    ]
    store.create_many(
        [
            ChunkDraft(
                content=f"{who}: {text}",
                created_at=f"2023-05-08T13:{i // 60:02d}:{i % 60:02d}+00:00",
                conversation_id="import:1",
                source={"kind": "import", "speaker": who},
            )
            for i, (who, text) in enumerate(lines)
        ]
    )
    store.close()
    h = set_agent(home, verify_min=0.5, contrast_below=0.9, contrast_margin=0.05)
    llm = ScriptedLLM([json.dumps({"reply": "great"})], verdicts=["0.8", "0.95"])
    r, trace = ask(h, llm, question="How was Gina's dance festival at her studio?")
    assert trace["memory"]["contrast"]["question"] == "How was Jon's dance festival at her studio?"
    assert r.reply == "I don't have that in memory." and r.refused_by == "contrast"


def test_no_probe_without_one_named_speaker(home: MemoryHome) -> None:
    h = two_speakers(home)
    for question in (
        "Whose grandma is from Sweden?",
        "Are Caroline and Melanie's grandmas from Sweden?",
    ):
        llm = ScriptedLLM([ANSWER], verdicts=["0.8"])
        _, trace = ask(h, llm, question=question)
        assert len(llm.calls) == 2 and "contrast" not in trace["memory"]


@pytest.mark.parametrize(
    ("key", "value"),
    [("contrast_below", v) for v in ('"high"', "-0.1", "1.5", "nan", '"0.8; rm -rf /"', "1e400")]
    + [("contrast_margin", v) for v in ('"big"', "-1.5", "2", "nan", "[0.1]", "1e400")],
)
def test_contrast_config_must_be_in_range(home: MemoryHome, key: str, value: str) -> None:
    cfg = home.layout.config
    before = cfg.read_text(encoding="utf-8")
    assert before.count(f"\n{key} = ") == 1  # `init` writes every default
    cfg.write_text(re.sub(rf"\n{key} = .*\n", lambda _: f"\n{key} = {value}\n", before))
    with pytest.raises(CorruptFile, match=rf"agent\.{key}"):
        load_config(cfg)


def test_cli_ask_short_runs_the_contrast_probe(home: MemoryHome, tmp_path: Path) -> None:
    h = two_speakers(home)
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"replies": [ANSWER], "verdicts": ["0.8", "0.97", "0.8", "0.3"]}))
    qs = tmp_path / "q.jsonl"
    qs.write_text("".join(json.dumps({"id": i, "question": QUESTION}) + "\n" for i in (1, 2)))
    res = CliRunner().invoke(
        app,
        ["ask", "--batch", str(qs), "--json", "--short", "--home", str(h.root),
         "--model", f"scripted:{script}"],
    )  # fmt: skip
    assert res.exit_code == 0, res.stderr
    first, second = (json.loads(x) for x in res.stdout.splitlines())
    assert first["answer"] == "I don't have that in memory."  # fits Melanie's grandma better
    assert second["answer"] == "Sweden" and second["p_grounded"] == 0.8
