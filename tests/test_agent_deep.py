"""Recursive retrieval (`deep_ask`) with the scripted model."""

from __future__ import annotations

import json

import pytest

from memagent.agent import MemoryAccess, deep_ask
from memagent.core import InvalidInput, MemoryHome
from memagent.llm import Message, ScriptedLLM


def code(src: str) -> str:
    return json.dumps({"python": src})


@pytest.fixture
def memory(home: MemoryHome) -> MemoryAccess:
    mem = MemoryAccess(home, embeddings=False)
    mem.remember("My dog is called Rex and he is a beagle.")
    mem.remember("I work at the harbour office.")
    return mem


def test_search_read_and_final(memory: MemoryAccess) -> None:
    llm = ScriptedLLM(
        [
            code(
                "hits = search_chunks('dog', k=3)\nprint(hits[0]['content'])\nfirst = hits[0]['id']"
            ),
            code("text = read_chunk(first)\nFINAL('Rex' if 'Rex' in text else 'unknown')"),
        ]
    )
    result = deep_ask(memory, llm, "What is my dog called?")
    assert result.ok and result.answer == "Rex" and result.iterations == 2
    fed_back = llm.calls[1].messages[-1].content
    assert fed_back.startswith("<result>") and "beagle" in fed_back
    assert llm.calls[0].response_schema is not None


def test_llm_query_is_counted_and_depth_bounded(memory: MemoryAccess) -> None:
    def fn(messages: list[Message], schema: dict[str, object] | None) -> str:
        if schema is None:  # a sub-query
            return "Rex"
        return code("FINAL(llm_query('Name of the dog in: My dog is called Rex'))")

    result = deep_ask(memory, ScriptedLLM(fn=fn), "Dog?")
    assert result.ok and result.answer == "Rex" and result.llm_queries == 1

    llm = ScriptedLLM([code("llm_query('x')"), code("FINAL('gave up')")])
    result = deep_ask(memory, llm, "Dog?", max_depth=0)
    assert "nested deeper than 0" in llm.calls[1].messages[-1].content
    assert result.answer == "gave up"


def test_iterations_are_bounded_with_an_honest_answer(memory: MemoryAccess) -> None:
    llm = ScriptedLLM([code(f"x = {i}") for i in range(3)])
    result = deep_ask(memory, llm, "Where do I work?", max_iterations=3)
    assert not result.ok and result.iterations == 3
    assert result.answer.startswith("I couldn't find an answer within 3 steps")


def test_garbage_and_sandbox_escapes_are_fed_back(memory: MemoryAccess) -> None:
    llm = ScriptedLLM(["not json", code("import os\nos.system('true')"), code("FINAL('ok')")])
    result = deep_ask(memory, llm, "Anything?")
    assert result.ok and result.answer == "ok"
    assert "not a JSON object" in llm.calls[1].messages[-1].content
    assert "Error" in llm.calls[2].messages[-1].content


@pytest.mark.parametrize(
    "kwargs",
    [
        {"question": ""},
        {"question": "x" * 4001},
        {"question": "ok", "max_iterations": 0},
        {"question": "ok", "max_depth": 9},
    ],
)
def test_bad_requests(memory: MemoryAccess, kwargs: dict[str, object]) -> None:
    llm = ScriptedLLM([])
    with pytest.raises(InvalidInput):
        deep_ask(memory, llm, **kwargs)  # type: ignore[arg-type]
    assert not llm.calls


def test_repeated_code_is_refused_without_running(memory: MemoryAccess) -> None:
    llm = ScriptedLLM([code("print(1)"), code("print(1)"), code("FINAL('done')")])
    result = deep_ask(memory, llm, "Anything?")
    assert "ran exactly this code before" in llm.calls[2].messages[-1].content
    assert result.answer == "done" and result.iterations == 3
