"""Profile learning never holds the user up and never loses a statement: each one
is queued in the home before it is learned; a bounded close leaves the rest queued,
and a later agent learns it (`memagent.agent.learning`)."""

from __future__ import annotations

import json
import threading
from typing import Any

from memagent.agent import Agent
from memagent.agent.learning import PendingLearning
from memagent.core import MemoryHome
from memagent.core.state import FileState
from memagent.llm import Message, ScriptedLLM


def learner(gate: threading.Event | None = None) -> ScriptedLLM:
    """Replies "Yum."; learns "likes ramen" (waiting for `gate` first, if given)."""

    def fn(messages: list[Message], schema: dict[str, Any] | None) -> str:
        if "list the facts" in messages[0].content:
            if gate is not None:
                gate.wait(30)
            return json.dumps({"facts": [{"fact": "likes ramen", "tags": ["food"]}]})
        if schema and "operations" in json.dumps(schema):
            op = {
                "operation": "append",
                "file": "resource_user_food_prefs.json",
                "path": "food.likes",
                "value": {"item": "ramen", "display": "Ramen"},
            }
            return json.dumps({"operations": [op]})
        return json.dumps({"reply": "Yum."})

    return ScriptedLLM(fn=fn)


def food(home: MemoryHome) -> str:
    return (home.layout.profile / "resource_user_food_prefs.json").read_text(encoding="utf-8")


def test_a_bounded_close_keeps_the_statement_and_a_later_agent_learns_it(
    home: MemoryHome,
) -> None:
    gate = threading.Event()
    a = Agent(home, learner(gate), prompt_set="instruct", embeddings=False, learn_profile=True)
    assert a.turn("I love ramen.").reply == "Yum."
    a.close(learn_wait=0.05)  # the learning call is still waiting on the gate
    assert a.learning_left == 1
    queued = PendingLearning(FileState(home)).pending()
    assert [q.message for q in queued] == ["I love ramen."]
    assert "Ramen" not in food(home)
    assert list(home.layout.chunks.rglob("chunk-*.json"))  # the statement itself is stored

    with Agent(home, learner(), embeddings=False, learn_profile=True) as b:
        assert b.learn_pending() == 1
    assert "Ramen" in food(home)
    assert PendingLearning(FileState(home)).pending() == []
    gate.set()  # the abandoned call ends too (learning twice is harmless)


def test_learned_statements_leave_no_queue_and_questions_are_not_queued(
    home: MemoryHome,
) -> None:
    with Agent(home, learner(), prompt_set="instruct", embeddings=False, learn_profile=True) as a:
        a.turn("I love ramen.")
        a.turn("What do I love?")
        a.turn("thanks!")
    assert "Ramen" in food(home)
    assert PendingLearning(FileState(home)).pending() == []
    with Agent(home, learner(), embeddings=False, learn_profile=True) as b:
        assert b.learn_pending() == 0


def test_unreadable_queue_documents_are_skipped(home: MemoryHome) -> None:
    state = FileState(home)
    for name, data in [
        ("learn/a.json", b"not json"),
        ("learn/b.json", b'{"message": 42}'),
        ("learn/c.json", b'{"message": "   "}'),
        ("learn/d.json", json.dumps({"message": "I love ramen.", "turn": "x"}).encode()),
    ]:
        state.write(name, data, actor="test", op="test")
    assert [(p.message, p.turn) for p in PendingLearning(state).pending()] == [("I love ramen.", 0)]
