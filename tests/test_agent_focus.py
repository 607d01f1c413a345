"""The focus check (`memagent.agent.focus`): a question about "my W" is refused
when no recalled line mentions W, or the attribute asked of it; told facts pass."""

from __future__ import annotations

import json
from typing import Any

import pytest

from memagent.agent import Agent
from memagent.agent.focus import Focus, check, focus_of, is_personal
from memagent.agent.voice import NOT_IN_MEMORY
from memagent.core import MemoryHome
from memagent.llm import Message, ScriptedLLM

MEMORY = "\n".join(
    [
        "- Notes (user.md): # About - Sister: Ana, lives in Lisbon",
        "- [3 May 2025] You said: My name is Ilse Varga.",
        "- [3 May 2025] You said: My sister's wedding is on 14 June 2025 in Bergen.",
        "- [3 May 2025] You said: I'm allergic to penicillin.",
        "- [3 May 2025] You said: My husband Karim is a nurse.",
        "- [3 May 2025] You said: Karim's birthday is on 22 February.",
        "- [3 May 2025] You said: My parrot Kiwi is twelve.",
    ]
)


@pytest.mark.parametrize(
    ("question", "focus"),
    [
        ("When is my brother's wedding?", Focus("brother", "brother", "wedding")),
        ("Is my dog allergic to anything?", Focus("dog", "dog")),
        ("What is my best friend's job?", Focus("friend", "friend", "job")),
        ("What is my cat's favourite food?", Focus("cat", "cat", "food")),
        ("What is my mum's birthday?", Focus("mother", "mum", "birthday")),
        ("What is my boss's phone number?", Focus("boss", "boss", "phone")),
        ("Where are my parents' keys?", Focus("parent", "parents", "keys")),
        ("What is my name?", None),
        ("What am I allergic to?", None),
        ("Can you suggest a name for my dog?", None),
        ("Where is my piano?", None),
        ("", None),
    ],
)
def test_focus_of_a_question(question: str, focus: Focus | None) -> None:
    assert focus_of(question) == focus


@pytest.mark.parametrize(
    "question",
    [
        "When is my sister's wedding?",
        "What is my sister's name?",  # the note names her
        "Where does my sister live?",  # no attribute noun: left to the model
        "What is my husband's job?",  # "is a nurse"
        "When is my husband's birthday?",  # said of Karim, named as the husband
        "What is my bird called?",  # a parrot is a bird
        "How old is my pet?",
        "What is my name?",
    ],
)
def test_told_facts_pass(question: str) -> None:
    assert check(question, MEMORY) is None


@pytest.mark.parametrize(
    ("question", "missing"),
    [
        ("When is my brother's wedding?", "owner"),
        ("Is my dog allergic to anything?", "owner"),
        ("What is my dog's name?", "owner"),
        ("When is my sister's birthday?", "attribute"),
        ("Who is my husband's doctor?", "attribute"),
        ("What is my sister's husband called?", "attribute"),
        ("What is my father-in-law's name?", "owner"),
    ],
)
def test_near_misses_are_caught(question: str, missing: str) -> None:
    miss = check(question, MEMORY)
    assert miss is not None and miss.missing == missing
    assert miss.focus.owner_word in miss.reason()


def test_own_name_does_not_answer_the_sisters() -> None:
    memory = "- You said: My name is Ilse Varga.\n- You said: My sister's wedding is in Bergen."
    miss = check("What is my sister's name?", memory)
    assert miss is not None and miss.missing == "attribute"
    assert check("What is my sister's name?", memory + "\n- You said: My sister is Ana.") is None


def test_a_name_given_under_another_word_for_the_owner() -> None:
    memory = "- You said: My colleague Bilal loves chess.\n- You said: Bilal's birthday is 9 April."
    assert check("What is my coworker's name?", memory) is None
    assert check("When is my coworker's birthday?", memory) is None
    assert check("What is my coworker's address?", memory) is not None


def test_empty_memory_refuses_a_question_about_my_w_only() -> None:
    assert check("What is my cat's name?", "") is not None
    assert check("What is the capital of France?", "") is None


@pytest.mark.parametrize("size", [10_000, 200_000])
def test_hostile_and_oversized_input_is_handled(size: str) -> None:
    junk = "my sister's " * (int(size) // 12)
    assert check(junk + "?", "- " + "x" * int(size)) is not None
    assert check("my my my 's 's ?", "\x00\n\n- \n") is None
    assert focus_of("my " * 5000) is None


def test_is_personal() -> None:
    assert is_personal("Where do I work?") and is_personal("What is my cat's name?")
    assert not is_personal("What is the capital of France?")


def test_the_chat_refuses_near_misses_without_asking_the_model(home: MemoryHome) -> None:
    """The issue's report, in the default chat prompt set: a model that answers
    from whatever line it sees, and a grounding check that always says yes."""

    def fills_gaps(messages: list[Message], schema: dict[str, Any] | None) -> str:
        return json.dumps({"reply": "Your brother's wedding is on 14 June 2025 in Bergen."})

    llm = ScriptedLLM(fn=fills_gaps, verdicts=["yes"] * 10)
    with Agent(home, llm, prompt_set="instruct", learn_profile=False, embeddings=False) as a:
        for told in ("My name is Ilse Varga.", "My sister's wedding is on 14 June 2025 in Bergen."):
            a.memory.store_exchange(a.conversation_id, told, "Noted.", turn=1)
        for question in ("When is my brother's wedding?", "What is my sister's name?"):
            r = a.turn(question)
            assert r.reply == NOT_IN_MEMORY and r.refused_by == "focus"
            assert r.check_tokens == 0  # no model call for it
        told = a.turn("When is my sister's wedding?")
    assert told.refused_by is None and "14 June" in told.reply
    assert told.check_tokens > 0  # the grounding check ran, and said yes
    assert len([c for c in llm.calls if c.reply == "yes"]) == 1


def test_focus_check_can_be_turned_off(home: MemoryHome) -> None:
    cfg = home.layout.config
    cfg.write_text(cfg.read_text().replace("focus_check = true", "focus_check = false"))
    home = MemoryHome.open(home.root)
    llm = ScriptedLLM([json.dumps({"reply": "Rex."})], verdicts=["yes"])
    with Agent(home, llm, prompt_set="instruct", learn_profile=False, embeddings=False) as a:
        assert a.turn("What is my dog's name?").reply == "Rex."
