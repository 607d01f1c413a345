"""The profile as a person reads it, and as the agent gets it before answering."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

from memagent.agent import Agent
from memagent.core import MemoryHome
from memagent.llm import Message, ScriptedLLM
from memagent.memory.profile import ProfileStore, learn
from memagent.memory.profile.summary import fact_lines, item_line

WED = date(2026, 3, 4)


def extraction(facts: list[dict[str, str]]) -> ScriptedLLM:
    return ScriptedLLM(fn=lambda m, s: json.dumps({"facts": facts}))


def test_item_lines_say_what_the_list_means() -> None:
    assert item_line("health.allergies", "Peanuts", None) == "Allergic to: Peanuts"
    assert item_line("health.allergies", "Allergic to peanuts", None) == "Allergic to peanuts"
    assert item_line("personal.facts", "Dog named Nova", None) == "Dog named Nova"
    assert (
        item_line("whereabouts.current", "In Berlin", "2026-03-06")
        == "In Berlin (until 2026-03-06)"
    )
    assert item_line("routine.weekly", "Tennis", None) == "Weekly: Tennis"


def test_fact_lines_are_dated_and_leave_out_what_expired(home: MemoryHome) -> None:
    store = ProfileStore(home, today=lambda: WED)
    learn(
        store,
        extraction([{"kind": "allergy", "value": "peanuts", "name": ""}]),
        "I'm allergic to peanuts.",
    )
    learn(
        store,
        extraction([{"kind": "whereabouts", "value": "Berlin", "name": ""}]),
        "I'm in Berlin until Friday.",
    )
    lines = fact_lines(store.load_all(), WED)
    assert any(line.startswith("In Berlin (until Fri 2026-03-06) (noted ") for line in lines)
    assert any(line.startswith("Allergic to peanuts (noted ") for line in lines)
    assert [x for x in fact_lines(store.load_all(), date(2026, 3, 7)) if "Berlin" in x] == []


def test_a_question_about_the_user_is_answered_from_the_profile(home: MemoryHome) -> None:
    store = ProfileStore(home)
    learn(
        store,
        extraction([{"kind": "allergy", "value": "peanuts", "name": ""}]),
        "I'm allergic to peanuts.",
    )
    seen: list[list[Message]] = []

    def fn(messages: list[Message], schema: dict[str, Any] | None) -> str:
        seen.append(messages)
        return json.dumps({"reply": "Peanuts."})

    with Agent(
        home, ScriptedLLM(fn=fn), prompt_set="instruct", embeddings=False, learn_profile=False
    ) as a:
        assert a.turn("What can't I eat?").reply == "Peanuts."
        ctx = a.memory.context("What's the capital of France?", budget_tokens=1000, k=5)
    assert "Profile: Allergic to peanuts (noted " in "\n".join(m.content for m in seen[0])
    assert "peanuts" not in ctx.text  # not a question about the user
