"""Checks of a reply after the model gave it (`memagent.agent.reply_check`) and the
support measure they read (`memagent.agent.support`): a reply resting on what was
said about someone else, a question for an answer, a bare yes/no to a wh-question."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memagent.agent import Agent
from memagent.agent.memory import MemoryContext
from memagent.agent.recalled import RecalledMemory
from memagent.agent.reply_check import check_reply
from memagent.agent.support import support
from memagent.core import MemoryHome
from memagent.llm import ScriptedLLM
from memagent.memory.chunks import ChunkDraft, ChunkStore

NOT_IN_MEMORY = "I don't have that in memory."


def hit(speaker: str, text: str, day: str = "2023-10-20") -> RecalledMemory:
    return RecalledMemory.make(
        id=f"c-{abs(hash(text))}",
        kind="chunk",
        content=f"{speaker}: {text}",
        score=1.0,
        created_at=f"{day}T10:00:00+00:00",
        source={"kind": "import", "speaker": speaker},
    )


ACCIDENT = [
    hit("Caroline", "Oops, sorry about the accident! Thank goodness your son's okay."),
    hit("Caroline", "Glad your son is okay, Melanie. Family's everything."),
    hit("Caroline", "I felt so proud and grateful at the parade.", "2023-07-15"),
]


def ctx_of(hits: list[RecalledMemory], named: list[str]) -> MemoryContext:
    speakers = sorted({h.speaker for h in hits if h.speaker})
    return MemoryContext("", 0, hits=hits, named=named, speakers=speakers)


def test_a_reply_from_what_was_said_to_someone_else_is_refused() -> None:
    ctx = ctx_of(ACCIDENT, ["Caroline"])
    question = "How did Caroline's son handle the accident?"
    got = support("glad your son is okay", question, ctx.hits, ctx.named)
    assert got.words >= 1 and got.others > got.named
    miss = check_reply("glad your son is okay", question, ctx, short=True)
    assert miss is not None and miss.rule == "someone_else"
    assert "someone else" in miss.reason()


def test_a_reply_from_the_named_persons_own_words_stands() -> None:
    ctx = ctx_of(ACCIDENT, ["Caroline"])
    question = "How did Caroline feel at the parade?"
    assert support("proud and grateful", question, ctx.hits, ctx.named).named == 1.0
    assert check_reply("proud and grateful", question, ctx, short=True) is None


def test_a_statement_with_a_question_tag_tells_a_plain_question_does_not() -> None:
    question = "What do sunflowers represent according to Caroline?"
    tagged = [hit("Caroline", "Sunflowers mean warmth and happiness, right? Roses are red.")]
    ctx = ctx_of(tagged, ["Caroline"])
    assert check_reply("warmth and happiness", question, ctx, short=True) is None
    asked = [hit("Caroline", "Do sunflowers mean warmth and happiness?")]
    miss = check_reply("warmth and happiness", question, ctx_of(asked, ["Caroline"]), short=True)
    assert miss is not None and miss.rule == "someone_else"


def test_a_date_from_the_line_counts_as_the_lines_words() -> None:
    ctx = ctx_of(ACCIDENT, ["Caroline"])
    got = support("15 July 2023", "When was Caroline at the parade?", ctx.hits, ctx.named)
    assert got.words == 3 and got.named == 1.0


def test_a_question_naming_no_speaker_is_not_judged_by_whose_line() -> None:
    ctx = ctx_of(ACCIDENT, [])
    assert check_reply("glad your son is okay", "What happened?", ctx, short=True) is None


def test_a_reply_of_only_the_questions_words_has_nothing_to_measure() -> None:
    ctx = ctx_of(ACCIDENT, ["Caroline"])
    got = support("the accident", "How did Caroline handle the accident?", ctx.hits, ctx.named)
    assert got.words == 0
    assert (
        check_reply("the accident", "How did Caroline handle the accident?", ctx, short=True)
        is None
    )


def test_a_question_is_no_answer_in_short_replies() -> None:
    ctx = ctx_of(ACCIDENT, [])
    q = "What is Caroline's reason for running?"
    miss = check_reply("Love that purple color! For walking or running?", q, ctx, short=True)
    assert miss is not None and miss.rule == "question"
    assert check_reply("For walking or running?", q, ctx, short=False) is None  # chat may ask back


def test_a_bare_yes_to_a_wh_question_is_no_answer() -> None:
    ctx = ctx_of(ACCIDENT, [])
    miss = check_reply("Yes.", "How does Maria plan to honor her pet?", ctx, short=True)
    assert miss is not None and miss.rule == "verdict"
    assert check_reply("Yes", "Is Oscar Melanie's pet?", ctx, short=True) is None
    assert check_reply("Yes, by adopting", "How does she plan it?", ctx, short=True) is None


@pytest.mark.parametrize(
    ("question", "answers"),
    [
        ("Did I mostly recently increase or decrease the limit?", False),
        ("Does John live close to a beach or the mountains?", False),
        ("Would Caroline be considered religious or not?", True),
        ("Was it a good month? Answer yes or no.", True),
        ("Has Tim been to North Carolina and/or Tennessee?", True),
        ("Is Oscar Melanie's pet?", True),
    ],
)
def test_a_bare_yes_to_an_either_or_question_is_no_answer(question: str, answers: bool) -> None:
    ctx = ctx_of(ACCIDENT, [])
    miss = check_reply("Yes", question, ctx, short=True)
    assert (miss is None) is answers
    assert check_reply("increase", question, ctx, short=True) is None


@given(st.text(max_size=300), st.text(max_size=300), st.lists(st.text(max_size=200), max_size=6))
def test_any_text_gives_a_verdict_or_none(reply: str, question: str, lines: list[str]) -> None:
    hits = [hit("Ann" if i % 2 else "Bob", line) for i, line in enumerate(lines)]
    for named in ([], ["Ann"], ["Ann", "Bob"]):
        miss = check_reply(reply, question, ctx_of(hits, named), short=True)
        assert miss is None or miss.rule in ("someone_else", "question", "verdict")


def told(home: MemoryHome) -> None:
    store = ChunkStore(home, embeddings=False)
    store.create_many(
        [
            ChunkDraft(
                content=f"{speaker}: {text}",
                created_at=f"2023-10-20T13:56:{i:02d}+00:00",
                conversation_id="import:1",
                source={"kind": "import", "speaker": speaker},
            )
            for i, (speaker, text) in enumerate(
                [
                    ("Melanie", "We had a car accident on our road trip; my son was scared."),
                    ("Caroline", "Oh no! Glad your son is okay. I handled my own accident badly."),
                ]
            )
        ]
    )
    store.close()


def test_the_agent_refuses_a_reply_about_someone_else(home: MemoryHome) -> None:
    told(home)
    llm = ScriptedLLM([json.dumps({"reply": "glad your son is okay"})], verdicts=["0.95"])
    with Agent(home, llm, prompt_set="qa", learn_profile=False, embeddings=False) as a:
        r = a.turn("How did Caroline's son handle the accident?")
        a.flush()
        trace = a.traces.last()
    assert r.reply == NOT_IN_MEMORY and r.refused_by == "reply"
    assert "someone else" in trace["memory"]["refused"]


def test_the_agent_keeps_a_reply_from_the_named_persons_line(home: MemoryHome) -> None:
    told(home)
    llm = ScriptedLLM([json.dumps({"reply": "scared"})], verdicts=["0.95"])
    with Agent(home, llm, prompt_set="qa", learn_profile=False, embeddings=False) as a:
        r = a.turn("How did Melanie's son feel after the accident?")
    assert r.reply == "scared" and r.refused_by is None


def test_a_streamed_reply_is_not_taken_back_but_the_trace_says_why(home: MemoryHome) -> None:
    told(home)
    llm = ScriptedLLM([json.dumps({"reply": "glad your son is okay"})], verdicts=["0.95"])
    shown: list[str] = []
    with Agent(home, llm, prompt_set="qa", learn_profile=False, embeddings=False) as a:
        r = a.turn("How did Caroline's son handle the accident?", on_text=shown.append)
        a.flush()
        trace = a.traces.last()
    assert r.reply == "glad your son is okay" and "".join(shown) == r.reply
    assert r.refused_by is None and "someone else" in trace["memory"]["reply_check"]
