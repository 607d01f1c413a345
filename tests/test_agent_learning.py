"""Profile learning never holds the user up and never loses a statement: each one
is queued in the home before it is learned; a bounded close leaves the rest queued,
and a later agent learns it (`memagent.agent.learning`)."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from memagent.agent import Agent
from memagent.agent.commands import parse_command
from memagent.agent.learning import PendingLearning
from memagent.core import MemoryHome
from memagent.core.state import FileState
from memagent.llm import Message, ScriptedLLM
from memagent.memory.profile import worth_learning


def learner(gate: threading.Event | None = None, delay_s: float = 0.0) -> ScriptedLLM:
    """Replies "Yum."; learns "likes ramen" (waiting for `gate` first, if given);
    `delay_s`: every reply takes that long, like a slow model."""

    def fn(messages: list[Message], schema: dict[str, Any] | None) -> str:
        facts = ((schema or {}).get("properties") or {}).get("facts")
        if facts is not None and facts.get("type") == "string":  # the gate
            return json.dumps({"facts": "yes"})
        if facts is not None:
            if gate is not None:
                gate.wait(30)
            return json.dumps({"facts": [{"kind": "food_like", "value": "ramen", "name": ""}]})
        return json.dumps({"reply": "Yum."})

    return ScriptedLLM(fn=fn, delay_s=delay_s)


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
    assert "ramen" not in food(home)
    assert list(home.layout.chunks.rglob("chunk-*.json"))  # the statement itself is stored

    with Agent(home, learner(), embeddings=False, learn_profile=True) as b:
        assert b.learn_pending() == 0  # picked up when the agent started
    assert "Likes ramen" in food(home)
    assert PendingLearning(FileState(home)).pending() == []
    gate.set()  # the abandoned call ends too (learning twice is harmless)


def test_learned_statements_leave_no_queue_and_questions_are_not_queued(
    home: MemoryHome,
) -> None:
    with Agent(home, learner(), prompt_set="instruct", embeddings=False, learn_profile=True) as a:
        a.turn("I love ramen.")
        a.turn("What do I love?")
        a.turn("thanks!")
    assert "Likes ramen" in food(home)
    assert PendingLearning(FileState(home)).pending() == []
    with Agent(home, learner(), embeddings=False, learn_profile=True) as b:
        assert b.learn_pending() == 0


def test_questions_are_never_queued_behind_a_busy_learner(home: MemoryHome) -> None:
    """`memagent ask` after a chat: the learner is still on an earlier statement
    when the process leaves; the questions asked meanwhile must not pile up in
    the queue (only the statement stays for the next session)."""
    gate = threading.Event()
    a = Agent(home, learner(gate), prompt_set="instruct", embeddings=False, learn_profile=True)
    a.turn("I love ramen.")
    a.turn("What do I love?")
    a.turn("Is my dog allergic to anything?")
    a.close(learn_wait=0.05)
    assert a.learning_left == 1
    assert [q.message for q in PendingLearning(FileState(home)).pending()] == ["I love ramen."]
    gate.set()


def test_what_is_worth_learning() -> None:
    assert worth_learning("I love ramen.")
    assert worth_learning("I'm vegan, any recipe ideas?")  # a fact before the question
    assert not worth_learning("What do I love?")
    assert not worth_learning("   ")
    assert not worth_learning("I love ramen. " * 2000)  # over the statement limit


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


def test_the_queue_drains_in_the_same_session_with_a_slow_model(home: MemoryHome) -> None:
    """Each statement takes the slow model seconds to learn; the chat goes on
    meanwhile, and by the end of the session the queue is empty."""
    with Agent(
        home, learner(delay_s=0.2), prompt_set="instruct", embeddings=False, learn_profile=True
    ) as a:
        for text in ("I love ramen.", "I really love ramen.", "Ramen is great, I love it."):
            assert a.turn(text).reply == "Yum."
        assert a.flush_learning(timeout=60)
        assert PendingLearning(FileState(home)).pending() == []
    assert "Likes ramen" in food(home)


def test_recall_and_flush_do_not_wait_behind_learning(home: MemoryHome) -> None:
    gate = threading.Event()
    a = Agent(home, learner(gate), prompt_set="instruct", embeddings=False, learn_profile=True)
    try:
        a.turn("I love ramen.")
        a.flush()  # the chunk writes only: returns while learning waits on the gate
        command = parse_command("/recall ramen")
        assert command is not None
        assert "ramen" in a.run_command(command).lower()  # answered while learning waits
        assert not a.flush_learning(timeout=0.05)
        assert [p.message for p in PendingLearning(FileState(home)).pending()] == ["I love ramen."]
    finally:
        gate.set()
        a.close(learn_wait=30)
    assert a.learning_left == 0 and "Likes ramen" in food(home)


def test_leaving_with_agent_is_bounded_and_says_what_is_left(
    home: MemoryHome, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import memagent.agent.loop as loop

    monkeypatch.setattr(loop, "EXIT_LEARN_WAIT_S", 0.05)
    gate = threading.Event()
    with Agent(home, learner(gate), prompt_set="instruct", embeddings=False) as a:
        a.turn("I love ramen.")
    assert a.learning_left == 1
    assert "1 statement(s) not learned" in capsys.readouterr().err
    assert [p.message for p in PendingLearning(FileState(home)).pending()] == ["I love ramen."]
    gate.set()


def test_a_fact_asked_with_a_question_is_learned(home: MemoryHome) -> None:
    llm = learner()
    with Agent(home, llm, prompt_set="instruct", embeddings=False, learn_profile=True) as a:
        a.turn("I love ramen. Can you suggest a recipe for tonight?")
        assert a.flush_learning(timeout=60)
    assert "Likes ramen" in food(home)
    asked = [
        c.messages[-1].content
        for c in llm.calls
        if c.response_schema and "facts" in str(c.response_schema)
    ]
    assert asked == ["Statement: I love ramen."]  # the question never reached the extraction


def test_told_counts_only_this_sessions_statements(home: MemoryHome) -> None:
    gate = threading.Event()
    a = Agent(home, learner(gate), prompt_set="instruct", embeddings=False, learn_profile=True)
    a.turn("I love ramen.")
    a.close(learn_wait=0.05)
    assert a.told == 1 and a.learning_left == 1
    b = Agent(home, learner(gate), prompt_set="instruct", embeddings=False, learn_profile=True)
    b.turn("What do I like?")  # a question: not queued; the earlier statement is not b's
    b.flush_learning(timeout=0.05)
    assert b.told == 0
    b.close(learn_wait=0.0)
    assert b.learning_left == 1  # still queued in the home, nothing lost
    gate.set()


def test_a_one_question_agent_leaves_earlier_statements_queued(home: MemoryHome) -> None:
    """`memagent ask` builds its agent with `learn_earlier=False`: the statements an
    earlier chat left are not learned now, so its answer is the model's only call."""
    gate = threading.Event()
    a = Agent(home, learner(gate), prompt_set="instruct", embeddings=False, learn_profile=True)
    a.turn("I love ramen.")
    a.close(learn_wait=0.05)
    assert a.learning_left == 1
    llm = learner()
    with Agent(
        home, llm, prompt_set="instruct", embeddings=False, learn_profile=True, learn_earlier=False
    ) as b:
        assert b.turn("What do I like?").reply == "Yum."
        b.flush_learning(timeout=5)
    assert not any(c.response_schema and "facts" in str(c.response_schema) for c in llm.calls)
    assert [q.message for q in PendingLearning(FileState(home)).pending()] == ["I love ramen."]
    assert "ramen" not in food(home)
    gate.set()


def test_the_ask_command_builds_its_agent_without_earlier_learning(
    monkeypatch: pytest.MonkeyPatch, home: MemoryHome
) -> None:
    import memagent.agent as agent_pkg
    from memagent.cli.commands import chat as chat_cmd

    seen: dict[str, Any] = {}

    class Stop(Exception):
        pass

    def fake_agent(*args: Any, **kwargs: Any) -> Agent:
        seen.update(kwargs)
        raise Stop

    monkeypatch.setattr(agent_pkg, "Agent", fake_agent)
    monkeypatch.setattr("memagent.llm.load_llm", lambda *a, **k: ScriptedLLM([]))
    with pytest.raises(Stop):
        chat_cmd.ask("What do I like?", home=str(home.root))
    assert seen["learn_earlier"] is False
    with pytest.raises(Stop):
        chat_cmd._agent(home, None, None, None, None, None)
    assert seen["learn_earlier"] is True  # chat: earlier statements learn while it waits
