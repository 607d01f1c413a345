"""The default agent on the embedded instruct model (slow: runs the real model;
a handful of short generations, so CI on 2 cores stays reasonable)."""

from __future__ import annotations

import pytest

from memagent.agent import Agent
from memagent.core import MemoryHome
from memagent.llm import load_llm

pytestmark = pytest.mark.slow

# Words from the old few-shot examples that a small model used to copy into answers.
EXAMPLE_TEXT = ("leo", "mia", "porto", "tom", "cello", "river")


def test_embedded_agent_recalls_a_fact_and_refuses_what_it_was_not_told(
    home: MemoryHome,
) -> None:
    llm = load_llm("embedded")
    with Agent(home, llm, learn_profile=False, embeddings=False) as a:
        empty = a.turn("What is my dog's name?")
    assert empty.ok, empty.error
    assert "don't have that in memory" in empty.reply.lower().replace("’", "'")
    assert not any(w in empty.reply.lower().split() for w in EXAMPLE_TEXT)
    with Agent(home, llm, learn_profile=False, embeddings=False) as a:
        told = a.turn("My cat is named Pixel.")
    assert told.ok and told.reply
    with Agent(home, llm, learn_profile=False, embeddings=False) as a:
        asked = a.turn("What is my cat's name?")
    assert asked.ok, asked.error
    assert any(s.kind == "chunk" for s in asked.memory_sources)
    assert "pixel" in asked.reply.lower()
    assert "your" in asked.reply.lower()  # it speaks to the user
    assert asked.usage.prompt_tokens > 0 and asked.usage.completion_tokens > 0
