"""Chat commands answered without the model: each one against a stand-in host, so
what a command asks of the agent (flush, a new conversation, recall, forget) is
seen directly, and hostile arguments get a usage line, never an exception."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import pytest

from memagent.agent.commands import Command, answer_command, parse_command
from memagent.agent.conversations import ConversationMessage
from memagent.agent.memory import MemoryAccess
from memagent.core import NotFound

C1 = "chunk-20250101-0123456789ab"


class FakeMemory:
    def __init__(self, hits: list[dict[str, Any]] | None = None) -> None:
        self.hits = hits or []
        self.forgotten: list[str] = []

    def recall(self, query: str, k: int = 5) -> list[dict[str, Any]]:
        return self.hits[:k]

    def forget(self, memory_id: str) -> dict[str, Any]:
        if memory_id != C1:
            raise NotFound(f"no memory {memory_id}")
        self.forgotten.append(memory_id)
        return {"id": memory_id}


class Host:
    def __init__(self, memory: FakeMemory, messages: list[ConversationMessage]) -> None:
        self.memory = cast(MemoryAccess, memory)
        self.messages = messages
        self.flushes = 0
        self.started: list[str] = []

    def flush(self) -> None:
        self.flushes += 1

    def new_conversation(self) -> str:
        self.started.append(f"conv-{len(self.started) + 1}")
        return self.started[-1]

    def recent_messages(self, n: int) -> Sequence[ConversationMessage]:
        return self.messages[-n:]


def said(n: int) -> list[ConversationMessage]:
    return [
        ConversationMessage(role="user" if i % 2 == 0 else "assistant", content=f"m{i}", ts="t")
        for i in range(n)
    ]


def answer(text: str, host: Host) -> str:
    command = parse_command(text)
    assert command is not None
    return answer_command(command, host)


def test_new_starts_a_conversation_and_names_it() -> None:
    host = Host(FakeMemory(), [])
    assert answer("/new", host) == "Started a new conversation (conv-1)."
    assert host.started == ["conv-1"]


@pytest.mark.parametrize(
    ("arg", "shown"),
    [("", 10), ("3", 3), ("0", 10), ("-2", 10), ("201", 10), ("9" * 5000, 10), ("x", 10)],
)
def test_history_takes_a_sane_count_or_the_default(arg: str, shown: int) -> None:
    host = Host(FakeMemory(), said(30))
    lines = answer(f"/history {arg}", host).splitlines()
    assert len(lines) == shown
    assert lines[-1] == "assistant: m29"


def test_history_of_an_empty_conversation_says_so() -> None:
    assert answer("/history", Host(FakeMemory(), [])) == "Nothing said yet in this conversation."


def test_recall_waits_for_stored_turns_and_lists_ids_with_one_line_each() -> None:
    hits = [{"id": "c1", "content": "Jane\nlikes   tea" + " x" * 200}, {"id": "c2", "content": 7}]
    host = Host(FakeMemory(hits), [])
    lines = answer("/recall tea", host).splitlines()
    assert host.flushes == 1
    assert lines[0].startswith("c1  Jane likes tea") and len(lines[0]) <= 4 + 120
    assert lines[1] == "c2  7"


def test_recall_and_forget_without_an_argument_give_usage_and_touch_nothing() -> None:
    memory = FakeMemory()
    host = Host(memory, [])
    assert answer("/recall", host) == "Usage: /recall QUERY"
    assert answer("/forget", host).startswith("Usage: /forget ID")
    assert host.flushes == 0 and memory.forgotten == []


def test_forget_reports_an_unknown_id_in_the_answer() -> None:
    memory = FakeMemory()
    host = Host(memory, [])
    other = "chunk-20250101-ffffffffffff"
    assert answer(f"/forget {other}", host) == f"Could not forget {other}: no memory {other}"
    assert answer("/forget nope", host).startswith("Could not forget nope: 'nope' is not an id")
    assert answer(f"/forget {C1}", host).startswith(f"Forgot {C1}")
    assert memory.forgotten == [C1]


def test_edit_and_undo_give_usage_without_an_id_or_text() -> None:
    memory = FakeMemory()
    host = Host(memory, [])
    assert answer("/edit", host).startswith("Usage: /edit ID NEW TEXT")
    assert answer(f"/edit {C1}", host).startswith("Usage: /edit ID NEW TEXT")
    assert answer(f"/edit {C1}    ", host).startswith("Usage: /edit ID NEW TEXT")
    assert answer("/undo", host).startswith("Usage: /undo ID")
    assert host.flushes == 0


def test_unknown_command_lists_the_known_ones() -> None:
    reply = answer_command(Command("frobnicate", ""), Host(FakeMemory(), []))
    assert reply.startswith("Unknown command /frobnicate.") and "/history" in reply
