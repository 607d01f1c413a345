from __future__ import annotations

import pytest

from memagent.llm import LLM, ScriptedLLM, ScriptExhausted


def test_replays_in_order_and_records_calls() -> None:
    llm = ScriptedLLM(["first reply", "second"])
    assert isinstance(llm, LLM)
    r = llm.chat([{"role": "user", "content": "hi there"}], response_schema={"type": "object"})
    assert r.text == "first reply"
    assert r.usage.prompt_tokens == 2 and r.usage.completion_tokens == 2
    assert llm.calls[0].response_schema == {"type": "object"}
    assert "".join(llm.stream([{"role": "user", "content": "x"}])) == "second"
    with pytest.raises(ScriptExhausted):
        llm.chat([{"role": "user", "content": "again"}])


def test_function_model_and_stop() -> None:
    llm = ScriptedLLM(fn=lambda msgs, schema: f"echo {msgs[-1].content} END tail")
    assert llm.chat([{"role": "user", "content": "a"}], stop=["END"]).text == "echo a "


def test_needs_exactly_one_source() -> None:
    with pytest.raises(ValueError):
        ScriptedLLM()
    with pytest.raises(ValueError):
        ScriptedLLM(["x"], fn=lambda m, s: "y")


def test_bad_message_rejected() -> None:
    llm = ScriptedLLM(["x"])
    with pytest.raises(ValueError):
        llm.chat([{"role": "wizard", "content": "x"}])
