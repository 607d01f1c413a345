"""The default agent on the embedded model (slow: runs the real 270M model)."""

from __future__ import annotations

import pytest

from memagent.agent import Agent
from memagent.core import MemoryHome
from memagent.llm import load_llm

pytestmark = pytest.mark.slow


def test_embedded_agent_recalls_a_fact_in_a_new_conversation(home: MemoryHome) -> None:
    llm = load_llm("embedded")
    with Agent(home, llm, learn_profile=False, embeddings=False) as a:
        told = a.turn("My cat is named Pixel.")
    assert told.ok and told.reply
    with Agent(home, llm, learn_profile=False, embeddings=False) as a:
        asked = a.turn("What is my cat's name?")
    assert asked.ok, asked.error
    assert any(s["kind"] == "chunk" for s in asked.memory_sources)
    assert "pixel" in asked.reply.lower()
    assert asked.usage.prompt_tokens > 0 and asked.usage.completion_tokens > 0
