"""Agent state in the database: conversations and traces are rows, so a chat
started by an agent on one server (one local home) continues on another with
its history and its notes; the same `State` works on files."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memagent.agent import Agent, Conversations, Traces
from memagent.core import Conflict, InvalidInput, MemoryHome, NotFound, sha256_hex
from memagent.core.state import FileState
from memagent.llm import ScriptedLLM
from memagent.postgres import Database, PgState
from memagent.setup import init_home
from memagent.stores import open_stores


@pytest.fixture(scope="module")
def db(pg_url: str) -> Iterator[Database]:
    database = Database.open(pg_url, max_size=4)
    yield database
    database.close()


def _step(**parts: Any) -> str:
    return json.dumps(parts)


@pytest.fixture(params=["files", "database"])
def state(request: pytest.FixtureRequest, home: MemoryHome) -> Any:
    if request.param == "files":
        return FileState(home)
    return PgState(request.getfixturevalue("db"), f"st-{uuid.uuid4().hex[:10]}")


def test_state_documents(state: Any) -> None:
    assert state.names("conversations") == []
    with pytest.raises(NotFound):
        state.read("conversations/none.json")
    state.write("conversations/b.json", b"{}", actor="t", op="x")
    state.write("conversations/a.json", b'{"a": 1}', actor="t", op="x")
    state.write("traces/t.json", b"[]", actor="t", op="x")
    state.write("conversations/a.json", b'{"a": 2}', actor="t", op="x")
    assert state.names("conversations") == ["conversations/a.json", "conversations/b.json"]
    assert state.read("conversations/a.json") == b'{"a": 2}'
    state.delete("conversations/b.json", actor="t", op="x")
    assert state.names("conversations") == ["conversations/a.json"]
    with pytest.raises(NotFound):
        state.delete("conversations/b.json", actor="t", op="x")


def test_conversations_and_traces_on_a_state(state: Any, home: MemoryHome) -> None:
    convs = Conversations(home, state)
    conv = convs.new()
    convs.append(conv, "hello", "hi")
    assert convs.ids() == [conv.id]
    assert convs.load(conv.id).messages[0].content == "hello"
    for bad in ("../../etc/passwd", "c-1", "c-20250101-120000-abc123'; --"):
        with pytest.raises(InvalidInput):
            convs.load(bad)
    with pytest.raises(NotFound):
        convs.load("c-20250101-120000-abc123")
    traces = Traces(home, state)
    with pytest.raises(NotFound):
        traces.last()


def test_a_chat_started_on_one_server_continues_on_another(pg_url: str, tmp_path: Path) -> None:
    user = f"st-{uuid.uuid4().hex[:10]}"
    homes = [MemoryHome.open(tmp_path / name) for name in ("a", "b")]
    for h in homes:
        init_home(h)
    note = _step(
        actions=[{"action": "create_file", "path": "people/ana.md", "content": "Ana: Lisbon"}]
    )
    with open_stores(homes[0], store=pg_url, user=user, embeddings=False) as stores:
        with Agent(
            homes[0], ScriptedLLM([note, _step(reply="Noted.")]), stores=stores,
            learn_profile=False, embeddings=False,
        ) as a:  # fmt: skip
            first = a.turn("My sister Ana lives in Lisbon.")
            conversation = a.conversation_id
        assert first.ok
    llm = ScriptedLLM([_step(reply="Ana lives in Lisbon.")])
    with open_stores(homes[1], store=pg_url, user=user, embeddings=False) as stores:
        with Agent(
            homes[1], llm, stores=stores, conversation=conversation,
            learn_profile=False, embeddings=False,
        ) as b:  # fmt: skip
            assert [m.content for m in b.conversation.messages][:1] == [
                "My sister Ana lives in Lisbon."
            ]
            second = b.turn("Where does Ana live?")
        assert second.ok
        assert stores.vault.read("people/ana.md") == "Ana: Lisbon"
        assert len(Conversations(homes[1], stores.state).load(conversation).messages) == 4
        assert Traces(homes[1], stores.state).last()["conversation"] == conversation
    seen = " ".join(m.content for m in llm.calls[0].messages)
    assert "My sister Ana lives in Lisbon." in seen  # the history came from the database
    # neither local home holds the note or the conversation
    for h in homes:
        assert not (h.layout.vault / "people").exists()
        assert not list((h.layout.state).rglob("c-*.json"))


def test_persona_choices_live_in_the_database(db: Database, tmp_path: Path) -> None:
    from memagent.agent.personas import Personas

    user = f"st-{uuid.uuid4().hex[:10]}"
    homes = [MemoryHome.open(tmp_path / name) for name in ("a", "b")]
    for h in homes:
        init_home(h)
    on_a, on_b = (Personas(h, PgState(db, user)) for h in homes)
    assert on_b.active_name() == homes[1].config.agent.persona
    on_a.use("RESEARCH_ANALYST")
    on_a.set_slider("humor", 90)
    assert on_b.active_name() == "RESEARCH_ANALYST"
    assert on_b.active().sliders["humor"] == 90
    # the homes' own files and config are untouched
    assert "RESEARCH_ANALYST" not in (homes[0].layout.config).read_text()
    assert Personas(homes[0]).load("RESEARCH_ANALYST").sliders.get("humor") != 90
    with pytest.raises(NotFound):
        on_a.use("NOBODY")
    with pytest.raises(InvalidInput):
        on_a.use("../etc")
    with pytest.raises(InvalidInput):
        on_a.set_slider("humor", 101)
    assert on_b.active().sliders["humor"] == 90


def test_swap_writes_only_over_the_expected_document(state: Any) -> None:
    name = "sandbox/s.json"
    assert state.swap(name, b"1", None, actor="t", op="x")
    assert not state.swap(name, b"2", None, actor="t", op="x")  # someone wrote it first
    assert not state.swap(name, b"2", sha256_hex(b"other"), actor="t", op="x")
    assert state.read(name) == b"1"
    assert state.swap(name, b"2", sha256_hex(b"1"), actor="t", op="x")
    assert state.read(name) == b"2"


def test_sandbox_sessions_persist_in_the_state(
    state: Any, home: MemoryHome, tmp_path: Path
) -> None:
    from memagent.sandbox import Session, run_persisted, save_session, state_digest

    assert run_persisted(home, "s", Session(), "kept = 41", state=state)["error"] is None
    other = MemoryHome.open(tmp_path / "other")  # another server's local home
    init_home(other)
    assert run_persisted(other, "s", Session(), "kept + 1", state=state)["result"] == 42
    assert state.names("sandbox") == ["sandbox/s.json"]
    assert not (other.layout.state / "sandbox").exists()
    saved = state_digest(home, "s", state=state)
    stale = Session()
    stale.run("kept = 0")
    with pytest.raises(Conflict, match="saved by another run"):
        save_session(home, "s", stale, expected=sha256_hex(b"stale"), state=state)
    assert state_digest(other, "s", state=state) == saved


def test_a_python_session_continues_on_another_server(pg_url: str, tmp_path: Path) -> None:
    user = f"st-{uuid.uuid4().hex[:10]}"
    homes = [MemoryHome.open(tmp_path / name) for name in ("a", "b")]
    for h in homes:
        init_home(h)
    start = ScriptedLLM([_step(python="count = 41\nfinal_answer('Counting from 41.')")])
    with (
        open_stores(homes[0], store=pg_url, user=user, embeddings=False) as stores,
        Agent(
            homes[0], start, stores=stores, mode="python", learn_profile=False, embeddings=False
        ) as a,
    ):
        first = a.turn("Count from 41.")
        conversation = a.conversation_id
    assert first.reply == "Counting from 41."
    more = ScriptedLLM([_step(python="count += 1\nfinal_answer(str(count))")])
    with open_stores(homes[1], store=pg_url, user=user, embeddings=False) as stores:
        with Agent(
            homes[1], more, stores=stores, mode="python", conversation=conversation,
            learn_profile=False, embeddings=False,
        ) as b:  # fmt: skip
            second = b.turn("One more?")
        assert second.reply == "42"  # the variable came from the database
        assert stores.state.names("sandbox") == [f"sandbox/agent-{conversation}.json"]
    for h in homes:
        assert not (h.layout.state / "sandbox").exists()
