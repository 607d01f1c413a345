"""A relative date the model copied from a memory line is replaced by the date the
line's bracket resolved it to (`memagent.agent.answers`)."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from memagent.agent import Agent
from memagent.agent.answers import resolve_copied_dates
from memagent.core import MemoryHome
from memagent.llm import ScriptedLLM
from memagent.memory.chunks import ChunkDraft, ChunkStore

MEMORY = "\n".join(
    [
        "- [6 July 2023] Caroline: We had a picnic last week [the week before 6 July 2023].",
        "- [9 August 2023] Maria: Last week [the week before 9 August 2023] I got a medal.",
        "- [9 August 2023] Maria: I went to the shelter yesterday [8 August 2023].",
    ]
)


def test_a_copied_phrase_becomes_the_date_of_its_line() -> None:
    assert (
        resolve_copied_dates("last week", "When did Caroline have a picnic?", MEMORY)
        == "the week before 6 July 2023"
    )
    assert (
        resolve_copied_dates("Last week", "When did Maria get a medal?", MEMORY)
        == "The week before 9 August 2023"
    )
    assert resolve_copied_dates("yesterday", "When did Maria go to the shelter?", MEMORY) == (
        "8 August 2023"
    )


def test_a_copied_bracket_is_reduced_to_the_date() -> None:
    got = resolve_copied_dates(
        "last week [the week before 6 July 2023]", "When was the picnic?", MEMORY
    )
    assert got == "the week before 6 July 2023"


def test_a_phrase_memory_never_resolved_is_left_alone() -> None:
    assert resolve_copied_dates("last month", "When?", MEMORY) == "last month"
    assert resolve_copied_dates("last week", "When?", "- Caroline: last week, a picnic") == (
        "last week"
    )
    assert resolve_copied_dates("a picnic", "What?", MEMORY) == "a picnic"


def test_an_ambiguous_phrase_is_left_alone() -> None:
    # two lines resolve "last week" differently and the question points to neither
    assert resolve_copied_dates("last week", "When did it happen?", MEMORY) == "last week"


@given(st.text(max_size=200), st.text(max_size=200), st.text(max_size=600))
def test_any_text_gives_text(reply: str, question: str, memory: str) -> None:
    got = resolve_copied_dates(reply, question, memory)
    assert isinstance(got, str)
    if "[" not in memory:
        assert got == reply


def test_a_hostile_memory_line_is_handled_in_linear_time() -> None:
    memory = "- " + "last week [" * 5000 + "x" * 10_000
    assert resolve_copied_dates("last week", "When?", memory) == "last week"


def test_the_agent_answers_with_the_date_not_the_copied_words(home: MemoryHome) -> None:
    store = ChunkStore(home, embeddings=False)
    store.create_many(
        [
            ChunkDraft(
                content="Caroline: We had a lovely picnic last week with the kids.",
                created_at="2023-07-06T13:56:00+00:00",
                conversation_id="import:1",
                source={"kind": "import", "speaker": "Caroline"},
            )
        ]
    )
    store.close()
    llm = ScriptedLLM([json.dumps({"reply": "last week"})], verdicts=["0.95"])
    with Agent(home, llm, prompt_set="qa", learn_profile=False, embeddings=False) as a:
        r = a.turn("When did Caroline have a picnic?", as_of="2023-08-01")
    assert r.reply == "the week before 6 July 2023"
