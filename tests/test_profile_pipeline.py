from __future__ import annotations

import json
from datetime import date, timedelta
from typing import Any

import pytest

from memagent.core import InvalidInput, MemoryHome
from memagent.llm import ScriptedLLM
from memagent.memory.profile import (
    LearnFailed,
    ProfileStore,
    SwitchboardOutput,
    apply_operations,
    parse_operation,
    undo,
)
from memagent.memory.profile import (
    learn_with_planner as learn,
)

TODAY = date(2026, 3, 2)
FOOD = "resource_user_food_prefs.json"
HEALTH = "resource_user_health.json"
ROUTINE = "resource_user_routine.json"


@pytest.fixture
def store(home: MemoryHome) -> ProfileStore:
    return ProfileStore(home, today=lambda: TODAY)


def facts(*items: tuple[str, list[str], bool]) -> str:
    return json.dumps({"facts": [{"fact": f, "tags": t, "temporary": tmp} for f, t, tmp in items]})


def ops(*operations: dict[str, Any]) -> str:
    return json.dumps({"operations": list(operations)})


def live(store: ProfileStore, file: str, path: str) -> list[dict[str, Any]]:
    data = store.load(file).to_json(today=store.today())
    node: Any = data
    for part in path.split("."):
        node = node[part]
    return list(node)


def likes(store: ProfileStore, item: str) -> None:
    """The user's profile already says they like `item`."""
    op = {"operation": "append", "file": FOOD, "path": "food.likes", "value": {"item": item}}
    apply_operations(store, [parse_operation(op)])


def test_allergy_end_to_end(store: ProfileStore) -> None:
    llm = ScriptedLLM(
        [
            facts(("The user is allergic to peanuts", ["health", "allergy"], False)),
            ops(
                {
                    "operation": "append",
                    "file": HEALTH,
                    "path": "health.allergies",
                    "value": {"item": "peanuts", "display": "Peanuts"},
                    "expiry": None,
                }
            ),
        ]
    )
    result = learn(store, llm, "I'm allergic to peanuts")
    assert result.ok and result.llm_calls == 2
    assert [i["item"] for i in live(store, HEALTH, "health.allergies")] == ["peanuts"]
    switch_call, plan_call = llm.calls
    assert switch_call.response_schema == SwitchboardOutput.model_json_schema()
    assert switch_call.messages[-1].content == "I'm allergic to peanuts"
    assert any(m.role == "assistant" for m in switch_call.messages)  # few-shot examples
    schema = plan_call.response_schema
    assert schema is not None
    assert schema["$defs"]["AppendOp"]["properties"]["file"]["enum"][0] == HEALTH
    assert "health.allergies" in schema["$defs"]["AppendOp"]["properties"]["path"]["enum"]
    prompt = plan_call.messages[-1].content
    assert "Today is 2026-03-02" in prompt and "allergic to peanuts" in prompt
    assert HEALTH in prompt and FOOD not in prompt
    record = store.home.ops(limit=1)[0]
    assert record.op == "learn" and record.meta and record.meta["source"].startswith("I'm")
    assert undo(store).undoes == result.result.batch
    assert live(store, HEALTH, "health.allergies") == []


def test_contradiction_becomes_a_remove_not_a_second_item(store: ProfileStore) -> None:
    likes(store, "sushi")
    llm = ScriptedLLM(
        [
            facts(("The user dislikes sushi now", ["food"], False)),
            ops(
                {
                    "operation": "remove",
                    "file": FOOD,
                    "path": "food.likes",
                    "value": {"item": "sushi"},
                },
                {
                    "operation": "append",
                    "file": FOOD,
                    "path": "food.dislikes",
                    "value": {"item": "sushi", "display": "Sushi"},
                    "expiry": None,
                },
            ),
        ]
    )
    result = learn(store, llm, "I've gone off sushi")
    assert result.ok
    assert '"item": "sushi"' in llm.calls[1].messages[-1].content  # the planner saw it
    assert live(store, FOOD, "food.likes") == []
    assert [i["item"] for i in live(store, FOOD, "food.dislikes")] == ["sushi"]


def test_contradiction_with_only_an_append_still_moves(store: ProfileStore) -> None:
    likes(store, "Sushi")
    llm = ScriptedLLM(
        [
            facts(("The user dislikes sushi", ["food"], False)),
            ops(
                {
                    "operation": "append",
                    "file": FOOD,
                    "path": "food.dislikes",
                    "value": {"item": "sushi"},
                }
            ),
        ]
    )
    result = learn(store, llm, "I hate sushi")
    assert result.result.outcomes[0].note == "moved from food.likes"
    assert live(store, FOOD, "food.likes") == []
    assert len(live(store, FOOD, "food.dislikes")) == 1


def test_temporary_fact_gets_an_expiry(home: MemoryHome) -> None:
    day = [TODAY]
    store = ProfileStore(home, today=lambda: day[0])
    llm = ScriptedLLM(
        [
            facts(("The user is in Berlin this week", ["travel", "location"], True)),
            ops(
                {
                    "operation": "append",
                    "file": ROUTINE,
                    "path": "whereabouts.current",
                    "value": {"item": "in_berlin", "display": "In Berlin"},
                    "expiry": "+7d",
                }
            ),
        ]
    )
    assert learn(store, llm, "I'm in Berlin this week").ok
    assert "temporary" in llm.calls[1].messages[-1].content
    [item] = live(store, ROUTINE, "whereabouts.current")
    assert item["expiry"] == (TODAY + timedelta(days=7)).isoformat()
    day[0] = TODAY + timedelta(days=8)
    assert live(store, ROUTINE, "whereabouts.current") == []


def test_nothing_to_remember_skips_the_planner(store: ProfileStore) -> None:
    llm = ScriptedLLM(['{"facts": []}'])
    log = store.home.layout.ops_log.read_bytes()
    result = learn(store, llm, "what's the capital of France?")
    assert result.ok and result.operations == [] and len(llm.calls) == 1
    assert store.home.layout.ops_log.read_bytes() == log


def test_invalid_reply_gets_one_repair_round(store: ProfileStore) -> None:
    llm = ScriptedLLM(
        [
            '{"facts": [{"fact": "likes tea"}]}',
            "```json\n" + facts(("The user likes tea", ["drink"], False)) + "\n```",
            ops(
                {
                    "operation": "append",
                    "file": FOOD,
                    "path": "drink.likes",
                    "value": {"item": "tea"},
                }
            ),
        ]
    )
    assert learn(store, llm, "I like tea").ok
    repair = llm.calls[1].messages
    assert repair[-2].role == "assistant" and repair[-2].content.startswith('{"facts"')
    assert "facts.0.tags" in repair[-1].content and "Field required" in repair[-1].content
    assert [i["item"] for i in live(store, FOOD, "drink.likes")] == ["tea"]


def test_planner_ops_that_the_handler_rejects_are_repaired(store: ProfileStore) -> None:
    llm = ScriptedLLM(
        [
            facts(("The user likes tea", ["drink"], False)),
            ops(
                {
                    "operation": "append",
                    "file": FOOD,
                    "path": "drinks.liked",
                    "value": {"item": "tea"},
                }
            ),
            ops(
                {
                    "operation": "append",
                    "file": FOOD,
                    "path": "drink.likes",
                    "value": {"item": "tea"},
                }
            ),
        ]
    )
    assert learn(store, llm, "I like tea").ok
    assert "no section 'drinks.liked'" in llm.calls[2].messages[-1].content


def test_planner_may_not_write_to_files_it_was_not_shown(store: ProfileStore) -> None:
    bad = ops(
        {
            "operation": "append",
            "file": HEALTH,
            "path": "health.allergies",
            "value": {"item": "tea"},
        }
    )
    llm = ScriptedLLM([facts(("The user likes tea", ["drink"], False)), bad, bad])
    log = store.home.layout.ops_log.read_bytes()
    with pytest.raises(LearnFailed, match="memory planner") as info:
        learn(store, llm, "I like tea")
    assert "is not one of" in str(info.value)
    assert store.home.layout.ops_log.read_bytes() == log


def test_still_invalid_after_repair_fails_cleanly(store: ProfileStore) -> None:
    llm = ScriptedLLM(["not json", '{"facts": "nope"}'])
    log = store.home.layout.ops_log.read_bytes()
    with pytest.raises(LearnFailed, match="switchboard"):
        learn(store, llm, "I like tea")
    assert store.home.layout.ops_log.read_bytes() == log
    assert llm.remaining == 0


@pytest.mark.parametrize("message", ["", "   ", "x" * 8001])
def test_bad_messages_are_refused_before_any_model_call(store: ProfileStore, message: str) -> None:
    llm = ScriptedLLM([])
    with pytest.raises(InvalidInput):
        learn(store, llm, message)
    assert llm.calls == []


def test_unknown_tags_route_to_general_preferences(store: ProfileStore) -> None:
    llm = ScriptedLLM(
        [
            facts(("The user collects stamps", ["philately"], False)),
            ops(
                {
                    "operation": "append",
                    "file": "resource_user_general_prefs.json",
                    "path": "preferences.likes",
                    "value": {"item": "stamp collecting"},
                }
            ),
        ]
    )
    result = learn(store, llm, "I collect stamps")
    assert result.routed[0].routes[0].file == "resource_user_general_prefs.json"
    assert result.to_json()["routes"] == [
        {"fact": "The user collects stamps", "files": ["resource_user_general_prefs.json"]}
    ]
