"""A held habit the plan moves is written as one short line (`memory.profile.moves`):
the day, part of the day or clock time put in by Python where the statement says one
new one, else the model's line as it is now, else the clause as before. Scripted
model, fixed dates."""

from __future__ import annotations

import json
from typing import Any

import pytest

from memagent.core import MemoryHome
from memagent.llm import Message, ScriptedLLM
from memagent.memory.profile.extract import Reading, learn_statement
from memagent.memory.profile.revise import REWRITE_SCHEMA, STILL_SCHEMA
from profile_support import learner, profile_lines, seed, store_of

CHOIR = ("routine", "choir", "")
SWIM_MOVED = "Switched my swim to every lunchtime now, the pool is quieter."


def _model(facts: list[dict[str, str]], now: str | None = None) -> ScriptedLLM:
    return learner(facts, question_schema=STILL_SCHEMA, verdicts=["0.1"], answer="", now=now)


def _rewrites_asked(llm: ScriptedLLM) -> int:
    return sum(1 for c in llm.calls if c.response_schema == REWRITE_SCHEMA)


def test_a_moved_habit_is_its_held_line_with_the_new_day(home: MemoryHome) -> None:
    seed(home, "I sing in a choir on Tuesdays", CHOIR)
    llm = _model([{"kind": "routine", "value": "wednesday nights", "name": ""}])
    res = learn_statement(
        store_of(home),
        llm,
        "Choir's moved to wednesday nights this term, the church hall got double booked.",
    )
    assert profile_lines(home) == ["routine.weekly: I sing in a choir on Wednesday nights"]
    assert res.rewrites == [
        ("I sing in a choir on Tuesdays", "I sing in a choir on Wednesday nights")
    ]
    assert _rewrites_asked(llm) == 0  # said plainly: no model call


def test_a_move_said_otherwise_asks_the_model_for_the_line(home: MemoryHome) -> None:
    seed(home, "I swim every morning before work", ("routine", "swim", ""))
    llm = _model(
        [{"kind": "routine", "value": "swim", "name": ""}],
        now="I swim every lunchtime",
    )
    learn_statement(
        store_of(home), llm, "Switched my swim to every lunchtime now, the pool is quieter."
    )
    assert profile_lines(home) == ["routine.daily: I swim every lunchtime"]
    assert _rewrites_asked(llm) == 1


@pytest.mark.parametrize(
    "now",
    [
        None,  # no line
        "I swim every morning before work",  # unchanged
        "I swim every lunchtime at the Ritz",  # words not said
        "I no longer swim",  # an end
        "x" * 500,
        '{"item": "swim"}',
    ],
)
def test_a_bad_line_leaves_the_plans_clause(home: MemoryHome, now: str | None) -> None:
    seed(home, "I swim every morning before work", ("routine", "swim", ""))
    llm = _model([{"kind": "routine", "value": "swim", "name": ""}], now=now)
    learn_statement(
        store_of(home), llm, "Switched my swim to every lunchtime now, the pool is quieter."
    )
    assert profile_lines(home) == [
        "routine.daily: Switched my swim to every lunchtime now, the pool is quieter"
    ]


def test_a_broken_reply_leaves_the_plans_clause(home: MemoryHome) -> None:
    seed(home, "I swim every morning before work", ("routine", "swim", ""))

    def fn(messages: list[Message], schema: dict[str, Any] | None) -> str:
        if schema == REWRITE_SCHEMA:
            return "not json {"
        if schema == STILL_SCHEMA:
            return ""
        return json.dumps({"facts": [{"kind": "routine", "value": "swim", "name": ""}]})

    learn_statement(
        store_of(home),
        ScriptedLLM(fn=fn, verdicts=["0.1"]),
        "Switched my swim to every lunchtime now, the pool is quieter.",
    )
    assert profile_lines(home) == [
        "routine.daily: Switched my swim to every lunchtime now, the pool is quieter"
    ]


def test_the_reading_switch_leaves_the_clause(home: MemoryHome) -> None:
    seed(home, "I sing in a choir on Tuesdays", CHOIR)
    llm = _model([{"kind": "routine", "value": "wednesday nights", "name": ""}])
    learn_statement(
        store_of(home),
        llm,
        "Choir's moved to wednesday nights this term.",
        reading=Reading(must_read=0.0, rewrite=False),
    )
    assert profile_lines(home) == ["routine.weekly: Choir's moved to wednesday nights this term"]


def test_a_new_habit_beside_a_held_one_is_not_a_move(home: MemoryHome) -> None:
    seed(home, "I sing in a choir on Tuesdays", CHOIR)
    llm = _model([{"kind": "routine", "value": "pottery", "name": ""}])
    no_kind_check = Reading(must_read=0.0, check_kinds=False)
    learn_statement(store_of(home), llm, "I do pottery on Thursdays.", reading=no_kind_check)
    assert profile_lines(home) == [
        "routine.weekly: I do pottery on Thursdays",
        "routine.weekly: I sing in a choir on Tuesdays",
    ]
    assert _rewrites_asked(llm) == 0
