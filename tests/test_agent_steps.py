"""The three steps of a turn, each called on its own with the scripted model:
`prepare` reads and checks without a model step, `act` runs the model's steps on a
prepared turn, `finish` shapes the reply and stores the exchange."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from memagent.agent import Agent
from memagent.agent.honesty import Checked
from memagent.agent.steps import Acted, PreparedTurn
from memagent.core import DeadlineExceeded, MemoryHome
from memagent.core.deadline import deadline
from memagent.llm import ScriptedLLM


def step(**parts: Any) -> str:
    return json.dumps(parts)


def agent(home: MemoryHome, llm: ScriptedLLM, **kw: Any) -> Agent:
    return Agent(home, llm, learn_profile=False, embeddings=False, **kw)


def chunks(home: MemoryHome) -> int:
    return len(list(home.layout.chunks.rglob("chunk-*.json")))


def test_prepare_reads_the_message_and_builds_the_prompt_without_a_model_step(
    home: MemoryHome,
) -> None:
    with agent(home, ScriptedLLM([step(reply="Noted.")])) as a:
        a.turn("My dog is called Rex.")
    llm = ScriptedLLM([])
    with agent(home, llm) as a:
        asked = datetime(2030, 1, 8, tzinfo=UTC)
        turn = a.prepare("  What is my dog called?  ", asked)
        assert not llm.calls  # no model step yet (and the json set runs no check)
        assert turn.message == "What is my dog called?" and turn.facts.request
        assert turn.asked == asked and turn.trace.memory.as_of == asked.isoformat()
        assert "Rex" in turn.context.text and turn.context.tokens > 0
        assert any(s.kind == "chunk" for s in turn.context.sources)
        assert turn.trace.memory.sources == turn.context.sources
        assert turn.base[0].role == "system" and turn.checked.reply is None
        assert [m.role for m in turn.work] == ["user"]
        assert "Rex" in turn.work[0].content and turn.messages == turn.base + turn.work
        assert turn.trace.turn == 1 and not turn.trace.steps
    assert chunks(home) == 1  # preparing stores nothing


def test_prepare_runs_the_honesty_checks_and_a_refusal_is_the_reply(home: MemoryHome) -> None:
    llm = ScriptedLLM([])
    with agent(home, llm, prompt_set="instruct") as a:
        turn = a.prepare("What is my dog's name?")
        assert turn.checked.refused_by == "focus" and turn.checked.reply
        assert turn.trace.memory.refused
        acted = a.act(turn)
    assert acted.reply == turn.checked.reply and acted.steps == 0
    assert not llm.calls


def test_act_runs_the_model_steps_of_a_prepared_turn(home: MemoryHome) -> None:
    write = {"action": "create_file", "path": "entities/rex.md", "content": "# Rex\nA dog."}
    llm = ScriptedLLM(["garbage", step(actions=[write]), step(reply="Noted: Rex.")])
    with agent(home, llm) as a:
        turn = a.prepare("Remember my dog Rex.")
        acted = a.act(turn)
        assert acted.reply == "Noted: Rex." and acted.steps == 3
        assert acted.error is not None and "JSON" in acted.error  # the garbage step's
        assert len(turn.trace.steps) == 3 and turn.trace.steps[0].error
        assert turn.usage.prompt_tokens > 0
        # each step's response and its result joined the turn's messages
        assert [m.role for m in turn.work] == ["user", "assistant", "user", "assistant", "user"]
        assert (home.layout.vault / "entities" / "rex.md").is_file()
        assert chunks(home) == 0  # acting stores no exchange: finish does


def test_act_gives_up_after_max_steps_or_two_model_failures(home: MemoryHome) -> None:
    bad = {"action": "update_file", "path": "user.md", "old_content": "NOPE", "new_content": "x"}
    with agent(home, ScriptedLLM([step(actions=[bad])] * 2), max_steps=2) as a:
        acted = a.act(a.prepare("Save that."))
    assert acted.reply is None and acted.steps == 2 and acted.failed_write
    assert acted.error is not None and "old_content was not found" in acted.error

    def down(messages: object, schema: object) -> str:
        from memagent.llm import LLMError

        raise LLMError("the backend is down")

    with agent(home, ScriptedLLM(fn=down)) as a:
        acted = a.act(a.prepare("Hello there, how are you?"))
    assert acted.reply is None and acted.steps == 2
    assert acted.error == "the model failed: the backend is down"


def test_act_stops_at_the_request_deadline(home: MemoryHome) -> None:
    llm = ScriptedLLM([step(reply="late")])
    with agent(home, llm) as a:
        turn = a.prepare("Hi")
        with deadline(0.0), pytest.raises(DeadlineExceeded):
            a.act(turn)
    assert not llm.calls


def test_finish_shapes_the_reply_and_stores_the_exchange_before_it_returns(
    home: MemoryHome,
) -> None:
    with agent(home, ScriptedLLM([])) as a:
        turn = a.prepare("My sister Ana lives in Lisbon.")
        pieces: list[str] = []
        result = a.finish(turn, Acted(reply="Noted: my sister Ana lives in Lisbon.", steps=1),
                          pieces.append)  # fmt: skip
        assert result.ok and result.steps == 1
        assert result.reply == "Noted: your sister Ana lives in Lisbon."  # the user's voice
        assert pieces == [result.reply]
        assert chunks(home) == 1  # stored before finish returned
        assert turn.trace.reply == result.reply and turn.trace.ok
        assert a.conversation.turns == 1
        a.flush()
        saved = a.traces.last()
    assert saved["reply"] == result.reply and saved["memory"]["tokens"] == turn.context.tokens


def test_finish_without_a_reply_says_why_and_stores_only_what_the_user_said(
    home: MemoryHome,
) -> None:
    with agent(home, ScriptedLLM([])) as a:
        turn = a.prepare("Save my bike is red.")
        failed = Acted(steps=6, error="action 0 (update_file) failed: no", failed_write=True)
        result = a.finish(turn, failed)
    assert not result.ok and result.error == failed.error
    assert result.reply.startswith("I couldn't save that because action 0")
    stored = json.loads(next(home.layout.chunks.rglob("chunk-*.json")).read_text())
    assert stored["content"] == "Save my bike is red." and stored["source"]["reply"] == ""


def test_finish_sends_only_the_rest_of_a_reply_streamed_in_part(home: MemoryHome) -> None:
    with agent(home, ScriptedLLM([]), record=False) as a:
        turn = a.prepare("Hi")
        pieces: list[str] = []
        a.finish(turn, Acted(reply="Hello there.", steps=1, emitted="Hello"), pieces.append)
        a.finish(turn, Acted(reply="Something else.", steps=1, emitted="Hel"), pieces.append)
    assert pieces == [" there.", "\nSomething else."]
    assert chunks(home) == 0  # record=False writes nothing


def test_a_turn_is_the_three_steps(home: MemoryHome) -> None:
    """`turn` = prepare → act → finish: the same model calls and the same result."""
    replies = [step(reply="Noted.")]
    with agent(home, ScriptedLLM(list(replies)), record=False) as a:
        whole = a.turn("I like tea.")
    llm = ScriptedLLM(list(replies))
    with agent(home, llm, record=False) as a:
        turn = a.prepare("I like tea.")
        assert isinstance(turn, PreparedTurn) and isinstance(turn.checked, Checked)
        parts = a.finish(turn, a.act(turn))
    assert (parts.reply, parts.ok, parts.steps) == (whole.reply, whole.ok, whole.steps)
    assert len(llm.calls) == 1
