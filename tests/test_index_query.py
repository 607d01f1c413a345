"""One reading of a message (`QueryFacts`): what it holds, that reading a hostile
text is safe and linear, and that a whole agent turn reads its message once."""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from memagent.agent import Agent
from memagent.core import InvalidInput, MemoryHome
from memagent.index import QueryFacts, facts_of
from memagent.llm import ScriptedLLM
from memagent.memory.chunks import ChunkDraft, ChunkStore

MAY_9 = datetime(2023, 5, 9, 12, tzinfo=UTC).timestamp()


def test_a_question_is_read_into_every_fact() -> None:
    f = QueryFacts.read("How many times did Caroline go to the gym last week?", MAY_9)
    assert f.now == MAY_9
    assert f.terms == ("many", "times", "caroline", "go", "gym", "last", "week")
    assert "caroline" in f.word_set and f.words[0] == "how"
    assert [r.phrase for r in f.time_ranges] == ["last week"]
    assert f.quantity and f.breadth and f.request and not f.small_talk
    assert not f.about_assistant and not f.about_user and not f.personal and f.focus is None
    assert f.names("Caroline") and not f.names("Carol")


def test_a_statement_small_talk_and_a_question_about_the_user() -> None:
    told = QueryFacts.read("My sister Ana lives in Oslo.")
    assert not told.request and told.about_user and told.personal
    assert QueryFacts.read("thanks a lot!").small_talk
    asked = QueryFacts.read("What is my sister's name?")
    assert asked.focus is not None and (asked.focus.owner, asked.focus.attribute) == (
        "sister",
        "name",
    )
    assert QueryFacts.read("What did you suggest for dinner?").about_assistant
    assert QueryFacts.read("who am I").terms == () and QueryFacts.read("who am I").words == (
        "who",
        "am",
        "i",
    )


def test_facts_are_frozen_and_carry_their_now() -> None:
    f = QueryFacts.read("when did I move?", 100.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        f.text = "other"  # type: ignore[misc]
    assert facts_of(f) is f and facts_of(f, 100.0) is f
    with pytest.raises(InvalidInput, match="its own 'now'"):
        facts_of(f, 200.0)
    assert facts_of("when did I move?", 100.0) == f
    before = time.time()
    assert facts_of("when?").now >= before  # None: the clock


@pytest.mark.parametrize(
    "text",
    [
        "how long " * 2500,
        "my " * 7000,
        "last week before " * 1200,
        "x" * 20_000,
        "\x00\u2028 ünïcödé ? " * 900,
        "",
    ],
)
def test_reading_hostile_text_is_safe_and_linear(text: str) -> None:
    started = time.perf_counter()
    f = QueryFacts.read(text, MAY_9)
    assert f.text == text
    assert time.perf_counter() - started < 5.0  # a hang guard, not a budget


def test_an_oversized_or_empty_query_is_refused_before_it_is_read(home: MemoryHome) -> None:
    store = ChunkStore(home, embeddings=False)
    try:
        for bad in ("", "   ", "x" * 4001):
            with pytest.raises(InvalidInput):
                store.recall(bad)
        with pytest.raises(InvalidInput, match="its own 'now'"):
            store.recall(QueryFacts.read("tea", 1.0), now=2.0)
    finally:
        store.close()


# -- one turn reads its message once ------------------------------------------------------

DETECTORS = {
    "memagent.index.asking": ["looks_like_request", "is_small_talk", "about_user", "is_personal"],
    "memagent.index.answers": ["asks_quantity"],
    "memagent.index.breadth": ["wants_many"],
    "memagent.index.roles": ["asks_about_assistant"],
    "memagent.index.temporal": ["time_ranges"],
    "memagent.index.owner": ["focus_of"],
    "memagent.index.query": ["query_terms"],
}


def _count_calls_on(text: str, monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Wrap every detector wherever a module of the package holds it, counting its
    calls on `text` (a detector read on another text, a recalled line, is not
    the message being read again)."""
    calls: Counter[str] = Counter()
    originals: dict[int, tuple[str, Callable[..., Any]]] = {}
    for module_name, names in DETECTORS.items():
        module = sys.modules[module_name]
        for name in names:
            originals[id(getattr(module, name))] = (name, getattr(module, name))

    def counting(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            if args and args[0] == text:
                calls[name] += 1
            return fn(*args, **kwargs)

        return wrapped

    wrappers = {key: counting(name, fn) for key, (name, fn) in originals.items()}
    for module_name, module in list(sys.modules.items()):
        if not module_name.startswith("memagent") or module is None:
            continue
        for attr, value in list(vars(module).items()):
            if callable(value) and id(value) in wrappers:
                monkeypatch.setattr(module, attr, wrappers[id(value)])
    return calls


@pytest.mark.parametrize("prompt_set", ["instruct", "qa"])
def test_one_agent_turn_reads_its_message_once(
    home: MemoryHome, monkeypatch: pytest.MonkeyPatch, prompt_set: str
) -> None:
    store = ChunkStore(home, embeddings=False)
    store.create_many(
        [
            ChunkDraft(
                content="I went to the gym twice on 3 May.", created_at="2023-05-03T10:00:00Z"
            ),
            ChunkDraft(content="My sister Ana has 2 cats.", created_at="2023-05-04T10:00:00Z"),
        ]
    )
    store.close()
    message = "How many times did I go to the gym last week?"
    llm = ScriptedLLM(fn=lambda _m, _s: json.dumps({"reply": "Twice."}))
    with Agent(home, llm, learn_profile=False, embeddings=False, prompt_set=prompt_set) as a:
        calls = _count_calls_on(message, monkeypatch)
        r = a.turn(message, as_of="2023-05-09")
    assert r.ok and r.memory_sources  # recall ran and found the gym
    every = [name for names in DETECTORS.values() for name in names]
    assert calls == Counter(every), calls
