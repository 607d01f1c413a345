"""Read your writes: what a turn stores is in the next turn's recall, in
`Agent.run`, `memagent chat` and `/v1/chat`, even when the writes are slow; and
the next turn never waits for profile learning."""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from memagent.agent import Agent
from memagent.cli.app import app
from memagent.core import MemoryHome
from memagent.llm import Message, ScriptedLLM
from memagent.memory.chunks import ChunkStore

NOT_IN_MEMORY = "I don't have that in memory."


def memory_reader(messages: list[Message], schema: dict[str, Any] | None) -> str:
    """A model that answers only from the Memory lines it is shown: "Pixel" when
    a line says the cat's name, the refusal otherwise; "Noted." for a statement.
    Any other call (profile learning's schemas) gets an empty object."""
    if schema is not None and "reply" not in json.dumps(schema):
        return "{}"
    turn = [m for m in messages if m.role == "user"][-1].content
    message = turn.rsplit("Message:", 1)[-1].strip()
    if not message.rstrip().endswith("?"):
        return json.dumps({"reply": "Noted."})
    memory = turn.split("Message:", 1)[0]
    named = re.search(r"cat is named (\w+)", memory)
    if "cat" in message and named:
        return json.dumps({"reply": f"Your cat is named {named.group(1)}."})
    return json.dumps({"reply": NOT_IN_MEMORY})


def test_readme_agent_example_with_the_scripted_model(tmp_path: Path) -> None:
    """The README's example, word for word, with the scripted model in place of
    the embedded one (the same `instruct` prompt set the embedded model gets)."""
    llm = ScriptedLLM(fn=memory_reader)
    with Agent(tmp_path / "my-memory", llm, prompt_set="instruct", embeddings=False) as agent:
        agent.run("My cat is named Pixel.")
        assert agent.run("What is my cat's name?") == "Your cat is named Pixel."
        assert agent.run("What is my dog's name?") == NOT_IN_MEMORY


def test_next_turn_sees_the_statement_though_the_chunk_store_is_slow(
    home: MemoryHome, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A deliberately slow writer: every chunk write takes 0.3 s. The reply is
    final only once the chunk is on disk, so the next turn recalls it."""
    create = ChunkStore.create
    written: list[float] = []

    def slow_create(self: ChunkStore, *args: Any, **kwargs: Any) -> Any:
        time.sleep(0.3)
        chunk = create(self, *args, **kwargs)
        written.append(time.monotonic())
        return chunk

    monkeypatch.setattr(ChunkStore, "create", slow_create)
    llm = ScriptedLLM(fn=memory_reader)
    with Agent(home, llm, prompt_set="instruct", embeddings=False, learn_profile=False) as a:
        told = a.turn("My cat is named Pixel.")
        replied = time.monotonic()
        assert told.reply == "Noted."
        assert written and written[0] <= replied  # durable before "Noted." was returned
        chunks = list(home.layout.chunks.rglob("chunk-*.json"))
        assert [json.loads(p.read_text())["content"] for p in chunks] == ["My cat is named Pixel."]
        asked = a.turn("What is my cat's name?")
    assert asked.reply == "Your cat is named Pixel."
    assert any(s.kind == "chunk" for s in asked.memory_sources)


def test_next_turn_does_not_wait_for_profile_learning_or_the_conversation_file(
    home: MemoryHome,
) -> None:
    """Learning (an LLM call per statement) and the conversation file are slow
    background work; a gate holds both shut while the next turn runs."""
    gate = threading.Event()

    def fn(messages: list[Message], schema: dict[str, Any] | None) -> str:
        if schema is not None and "reply" not in json.dumps(schema):
            gate.wait(30)  # profile learning stalls until released
            return "{}"
        return memory_reader(messages, schema)

    llm = ScriptedLLM(fn=fn)
    a = Agent(home, llm, prompt_set="instruct", embeddings=False, learn_profile=True)
    save = a.conversations.save

    def slow_save(conv: Any) -> None:
        gate.wait(30)
        save(conv)

    a.conversations.save = slow_save  # type: ignore[method-assign]
    try:
        a.turn("My cat is named Pixel.")
        answer = a.turn("What is my cat's name?")
        assert not gate.is_set()  # answered while learning and saving were still held
        assert answer.reply == "Your cat is named Pixel."
    finally:
        gate.set()
        a.close()


def test_chat_tell_then_ask_in_one_session(
    home: MemoryHome, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`printf 'My cat is named Pixel.\\nWhat is my cat's name?\\n/exit\\n' | memagent chat`
    with the scripted model in place of the embedded one."""
    import memagent.llm

    monkeypatch.setattr(memagent.llm, "load_llm", lambda *a, **k: ScriptedLLM(fn=memory_reader))
    cfg = home.layout.config
    text = cfg.read_text().replace("[embeddings]\nenabled = true", "[embeddings]\nenabled = false")
    cfg.write_text(text, encoding="utf-8")
    res = CliRunner().invoke(
        app,
        ["chat", "--home", str(home.root), "--prompt-set", "instruct"],
        input="My cat is named Pixel.\nWhat is my cat's name?\n/exit\n",
    )
    assert res.exit_code == 0, res.stderr
    assert res.stdout.splitlines()[:2] == ["Noted.", "Your cat is named Pixel."]


def test_v1_chat_tell_then_ask_in_one_conversation(tmp_path: Path) -> None:
    import httpx

    from memagent.server import KeyStore, ServerSettings, create_app
    from memagent.server.testing import LiveServer

    root = tmp_path / "server"
    key = KeyStore(root).create(user="alice")[0]
    app_ = create_app(
        root, ServerSettings(mcp=False, embeddings=False), llm=ScriptedLLM(fn=memory_reader)
    )
    auth = {"Authorization": f"Bearer {key}"}
    with LiveServer(app_) as live, httpx.Client(base_url=live.url, headers=auth, timeout=60) as c:
        told = c.post(
            "/v1/chat", json={"message": "My cat is named Pixel.", "prompt_set": "instruct"}
        )
        assert told.status_code == 200, told.text
        asked = c.post(
            "/v1/chat",
            json={
                "message": "What is my cat's name?",
                "conversation_id": told.json()["conversation_id"],
                "prompt_set": "instruct",
            },
        )
        fresh = c.post(
            "/v1/chat", json={"message": "What is my cat's name?", "prompt_set": "instruct"}
        )
    assert asked.status_code == 200, asked.text
    assert asked.json()["reply"] == "Your cat is named Pixel."
    assert fresh.json()["reply"] == "Your cat is named Pixel."  # a new conversation too
