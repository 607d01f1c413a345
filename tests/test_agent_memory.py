"""Clean memory: what the agent stores, what recall brings back as a fact, and
what goes in front of the model (relevant lines only, each with its date)."""

from __future__ import annotations

import json
import re

import pytest

from memagent.agent import Agent
from memagent.agent.memory import MemoryAccess, RecalledMemory, relevant
from memagent.agent.prompts import load_prompt_set
from memagent.core import MemoryHome
from memagent.index import Why, non_fact
from memagent.llm import ScriptedLLM
from memagent.memory.chunks import ChunkStore

DATED = r"- \[\d{1,2} [A-Z][a-z]+ \d{4}\] "


def noted(messages: object, schema: object) -> str:
    return json.dumps({"reply": "Noted."})


@pytest.mark.parametrize("embeddings", [False, True])
def test_a_question_never_outranks_the_fact_it_asks_about(
    home: MemoryHome, embeddings: bool
) -> None:
    with Agent(home, ScriptedLLM(fn=noted), learn_profile=False, embeddings=embeddings) as a:
        a.turn("Jane likes tea.")
        for q in ("Who likes tea?", "Does Jane like tea?", "Tell me who likes tea", "tea?"):
            a.turn(q)
    store = ChunkStore(home, embeddings=embeddings)
    try:
        for query in ("Who likes tea?", "Does Jane like tea?", "tea", "Jane tea likes"):
            hits = store.recall(query, k=5)
            assert hits[0].row.content == "Jane likes tea.", query
            questions = [h for h in hits if non_fact(h.row.source)]
            assert questions and all(h.score < hits[0].score for h in questions)
            assert all(h.why["boosts"]["non_fact"] < 1 for h in questions)
    finally:
        store.close()


def test_imported_assistant_turns_are_not_facts(home: MemoryHome) -> None:
    store = ChunkStore(home, embeddings=False)
    try:
        from memagent.memory.chunks import ChunkDraft

        store.create_many(
            [
                ChunkDraft(content="Paul moved to Rome in May.", source={"role": "user"}),
                ChunkDraft(
                    content="Paul moved to Rome? Paul, Rome, moving: tell me more about Rome!",
                    source={"kind": "import", "role": "assistant"},
                ),
            ]
        )
        hits = store.recall("Where did Paul move? Rome", k=5)
        assert hits[0].row.content == "Paul moved to Rome in May."
    finally:
        store.close()


def test_non_fact_marks() -> None:
    assert non_fact({"role": "assistant"}) and non_fact({"type": "question"})
    assert non_fact({"role": "user", "type": "command"})
    assert not non_fact({"role": "user", "type": "statement"})
    assert not non_fact({"speaker": "Caroline"}) and not non_fact(None) and not non_fact({})


def test_exchanges_store_only_what_the_user_said_marked(home: MemoryHome) -> None:
    llm = ScriptedLLM([json.dumps({"reply": "Got it: Rex."}), json.dumps({"reply": "Rex."})])
    with Agent(home, llm, learn_profile=False, embeddings=False) as a:
        a.turn("My dog is called Rex.")
        a.turn("What is my dog called?")
    docs = [json.loads(p.read_text()) for p in home.layout.chunks.rglob("chunk-*.json")]
    by_type = {d["source"]["type"]: d for d in docs}
    assert by_type["statement"]["content"] == "My dog is called Rex."
    assert by_type["question"]["content"] == "What is my dog called?"
    assert all(d["source"]["role"] == "user" for d in docs)
    assert by_type["statement"]["source"]["reply"] == "Got it: Rex."  # kept, not searchable
    assert not any("Got it" in d["content"] for d in docs)


def test_context_lines_carry_dates_and_leave_out_questions(home: MemoryHome) -> None:
    with Agent(home, ScriptedLLM(fn=noted), learn_profile=False, embeddings=False) as a:
        a.turn("I drive a blue Volvo car.")
        a.turn("What car do I drive?")
        a.flush()
        ctx = a.memory.context("Which car do I drive?", budget_tokens=1000, k=5)
    lines = ctx.text.splitlines()
    assert len(lines) == 1, lines  # the earlier question is not memory
    assert re.fullmatch(DATED + r"You said: I drive a blue Volvo car\.", lines[0])


def test_the_assistants_words_reach_context_only_when_asked_about(home: MemoryHome) -> None:
    """An imported reply is left out of context (the model's claim, not a fact),
    except for a question about what the assistant said: there it is the evidence."""
    from memagent.memory.chunks import ChunkDraft

    with Agent(home, ScriptedLLM(fn=noted), learn_profile=False, embeddings=False) as a:
        store = a.memory.chunks
        assert store is not None
        store.create_many(
            [
                ChunkDraft(
                    content="Which venue in Portland is good for indie music shows?",
                    source={"kind": "import", "role": "user"},
                ),
                ChunkDraft(
                    content="For indie music shows in Portland try Revolution Hall.",
                    source={"kind": "import", "role": "assistant"},
                ),
            ]
        )
        asked = a.memory.context(
            "Can you remind me of the Portland venue you recommended for indie music shows?",
            budget_tokens=1000,
            k=5,
        )
        plain = a.memory.context(
            "Which Portland venue is good for indie music shows?", budget_tokens=1000, k=5
        )
    said = [ln for ln in asked.text.splitlines() if "Revolution Hall" in ln]
    assert len(said) == 1 and re.fullmatch(
        DATED + r"The assistant said: .*Revolution Hall\.", said[0]
    )
    assert "Revolution Hall" not in plain.text


def test_a_stored_reply_is_shown_for_a_question_about_it(home: MemoryHome) -> None:
    def reply(messages: object, schema: object) -> str:
        return json.dumps({"reply": "Try reading Dune by Frank Herbert."})

    with Agent(home, ScriptedLLM(fn=reply), learn_profile=False, embeddings=False) as a:
        a.turn("Can you recommend a science fiction book for my holiday?")
        a.flush()
        asked = a.memory.context(
            "Which science fiction book did you recommend for my holiday?",
            budget_tokens=1000,
            k=5,
        )
        plain = a.memory.context(
            "Which science fiction book fits my holiday?", budget_tokens=1000, k=5
        )
    assert "The assistant replied: Try reading Dune by Frank Herbert." in asked.text
    assert "Dune" not in plain.text


def test_imported_speaker_lines_say_who_and_when(home: MemoryHome) -> None:
    from memagent.memory.chunks import ChunkDraft

    store = ChunkStore(home, embeddings=False)
    store.create_many(
        [
            ChunkDraft(
                content="I went to the support group yesterday.",
                created_at="2023-05-08T13:56:00+00:00",
                source={"kind": "import", "speaker": "Caroline"},
            )
        ]
    )
    store.close()
    memory = MemoryAccess(home, embeddings=False)
    try:
        ctx = memory.context("When did Caroline go to the support group?", budget_tokens=500, k=5)
    finally:
        memory.close()
    assert ctx.text == (
        "- [8 May 2023] Caroline said: I went to the support group yesterday [7 May 2023]."
    )


def test_an_imported_user_line_that_names_its_speaker_is_not_you(home: MemoryHome) -> None:
    """A chat export's 'Caroline: …' line has role user (whoever exported it), but
    the model must read it as Caroline's, not as the person asking."""
    from memagent.memory.chunks import ChunkDraft

    store = ChunkStore(home, embeddings=False)
    store.create_many(
        [
            ChunkDraft(
                content="Caroline: I went to the support group.",
                created_at="2023-05-08T13:56:00+00:00",
                source={"kind": "import", "role": "user", "speaker": "Caroline"},
            )
        ]
    )
    store.close()
    memory = MemoryAccess(home, embeddings=False)
    try:
        ctx = memory.context("Where did Caroline go?", budget_tokens=500, k=5)
    finally:
        memory.close()
    assert ctx.text == "- [8 May 2023] Caroline: I went to the support group."


def test_weak_dense_only_hits_are_not_relevant() -> None:
    def found(why: dict[str, object]) -> RecalledMemory:
        return RecalledMemory.make(
            id="x", kind="chunk", content="x", score=1.0, why=Why.from_json(why)
        )

    assert relevant(found({"keyword": {"rank": 1}, "dense": {"cosine": 0.01}}))
    assert relevant(found({"dense": {"cosine": 0.6}}))
    assert not relevant(found({"dense": {"cosine": 0.2}}))
    assert relevant(found({}))  # keyword-only search: every hit matched a keyword


def test_empty_memory_tells_the_model_there_is_nothing(home: MemoryHome) -> None:
    llm = ScriptedLLM([json.dumps({"reply": "I don't have that in memory."})])
    with Agent(home, llm, learn_profile=False, embeddings=False, prompt_set="instruct") as a:
        r = a.turn("What is my favourite colour?")
    assert r.ok and r.reply == "I don't have that in memory."
    prompt = llm.calls[0].messages[-1].content
    assert "- (nothing relevant)" in prompt and "Message: What is my favourite colour?" in prompt
    system = llm.calls[0].messages[0].content
    assert "I don't have that in memory." in system
    assert len(llm.calls[0].messages) == 2  # system + this turn: no few-shot examples


def test_no_few_shot_example_holds_a_concrete_fact() -> None:
    """A small model copies example facts into answers ("Your flat is in Porto");
    examples may only show the pattern, with <placeholders>."""
    assert load_prompt_set("instruct").examples == []
    for convo in load_prompt_set("small").examples:
        for m in convo:
            words = re.findall(r"\b[A-Z][a-z]+\b", re.sub(r"<[^>]*>", "", m["content"]))
            allowed = {"Memory", "Message", "Hi", "Hello", "How", "Got", "Your", "You", "My"}
            allowed |= {"What", "Where", "I", "Who", "When"}
            assert set(words) <= allowed, m["content"]


def test_default_prompt_sets() -> None:
    from memagent.agent.turn import default_prompt_set

    assert default_prompt_set("embedded", "json") == "instruct"
    assert default_prompt_set("embedded:gemma-270m", "json") == "small"
    assert default_prompt_set("embedded", "python") == "python"
    assert default_prompt_set("openai:gpt-4o", "json") == "json"


def test_a_stored_exchange_sides_are_text_or_none() -> None:
    from memagent.agent.recalled import EXCHANGE_KIND, RecalledMemory

    def made(user: object, reply: object) -> RecalledMemory:
        source = {"kind": EXCHANGE_KIND, "user": user, "reply": reply}
        return RecalledMemory.make(id="c", kind="chunk", content="x", score=1.0, source=source)

    hit = made("My cat is Pixel.", "Noted.")
    assert (hit.user, hit.reply) == ("My cat is Pixel.", "Noted.")
    # a hand-edited record: blanks and non-strings read as nothing said
    for odd in ("   ", 42, None, ["Noted."], {"text": "Noted."}):
        assert made(odd, odd).user is None and made(odd, odd).reply is None
    assert made("hi", "Noted.").source == {"kind": EXCHANGE_KIND}
