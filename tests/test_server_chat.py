"""Chat routes over loopback: agent turns (JSON and SSE) and the OpenAI-compatible
endpoint, driven by the official `openai` client, with a scripted model."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from memagent.llm import Message, ScriptedLLM
from memagent.server import KeyStore, ServerSettings, create_app
from memagent.server.testing import LiveServer, assert_problem


@dataclass
class Setup:
    url: str
    keys: dict[str, str]
    alice: httpx.Client
    bob: httpx.Client
    seen: list[list[Message]]


@pytest.fixture
def s(tmp_path: Path) -> Iterator[Setup]:
    seen: list[list[Message]] = []

    def model(messages: list[Message], schema: dict[str, Any] | None) -> str:
        props = (schema or {}).get("properties", {})
        if "facts" in props:
            return '{"facts": []}'
        if "reply" in props:
            return json.dumps({"reply": "You drink green tea."})
        seen.append(list(messages))
        return "Green tea, as far as I remember."

    root = tmp_path / "server"
    store = KeyStore(root)
    keys = {u: store.create(user=u)[0] for u in ("alice", "bob")}
    settings = ServerSettings(mcp=False, embeddings=False)
    with LiveServer(create_app(root, settings, llm=ScriptedLLM(fn=model))) as live:
        clients = {
            u: httpx.Client(base_url=live.url, headers={"Authorization": f"Bearer {k}"}, timeout=60)
            for u, k in keys.items()
        }
        yield Setup(live.url, keys, clients["alice"], clients["bob"], seen)
        for c in clients.values():
            c.close()


def test_chat_turn_and_conversation_are_per_user(s: Setup) -> None:
    first = s.alice.post("/v1/chat", json={"message": "What do I drink?"})
    assert first.status_code == 200, first.text
    body = first.json()
    assert body["reply"] == "You drink green tea." and body["ok"] is True
    cid = body["conversation_id"]
    again = s.alice.post("/v1/chat", json={"message": "Sure?", "conversation_id": cid})
    assert again.json()["conversation_id"] == cid
    assert_problem(s.bob.post("/v1/chat", json={"message": "hi", "conversation_id": cid}), 404)
    assert_problem(s.alice.post("/v1/chat", json={"message": ""}), 422)
    assert_problem(s.alice.post("/v1/chat", json={"message": "x", "mode": "shell"}), 422)
    assert_problem(s.alice.post("/v1/chat", json={"message": "x" * 20_001}), 422)
    assert_problem(httpx.post(f"{s.url}/v1/chat", json={"message": "hi"}), 401)


def test_chat_stream_sends_deltas_then_done(s: Setup) -> None:
    with s.alice.stream("POST", "/v1/chat/stream", json={"message": "What do I drink?"}) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        raw = r.read().decode()
    events = [
        (block.split("\n")[0].removeprefix("event: "), json.loads(block.split("\n")[1][6:]))
        for block in raw.strip().split("\n\n")
    ]
    kinds = [k for k, _ in events]
    assert kinds[-1] == "done" and set(kinds[:-1]) == {"delta"}
    assert "".join(d["text"] for k, d in events if k == "delta") == "You drink green tea."
    assert events[-1][1]["reply"] == "You drink green tea."
    bad = s.alice.post("/v1/chat/stream", json={"message": "x", "conversation_id": "nope"})
    assert_problem(bad, 422)


def test_openai_client_gets_memory_added(s: Setup) -> None:
    s.alice.post("/v1/memories", json={"text": "I only drink green tea.", "tags": ["drink"]})
    client = openai.OpenAI(base_url=f"{s.url}/v1", api_key=s.keys["alice"], max_retries=0)
    done = client.chat.completions.create(
        model="any", messages=[{"role": "user", "content": "What do I drink?"}]
    )
    assert done.choices[0].message.content == "Green tea, as far as I remember."
    system = [m.content for m in s.seen[-1] if m.role == "system"]
    assert any("I only drink green tea." in text for text in system)
    stored = s.alice.get("/v1/memories").json()["memories"]
    assert stored[0]["content"] == "What do I drink?"

    pieces = client.chat.completions.create(
        model="any",
        messages=[{"role": "user", "content": "Again?"}],
        stream=True,
        extra_body={"memory": {"recall_k": 0, "remember": False}},
    )
    text = "".join(chunk.choices[0].delta.content or "" for chunk in pieces)
    assert text == "Green tea, as far as I remember."
    assert not any(m.role == "system" for m in s.seen[-1])
    assert len(s.alice.get("/v1/memories").json()["memories"]) == len(stored)

    # Bob's completions never see Alice's memory.
    bob = openai.OpenAI(base_url=f"{s.url}/v1", api_key=s.keys["bob"], max_retries=0)
    bob.chat.completions.create(
        model="any", messages=[{"role": "user", "content": "What do I drink?"}]
    )
    assert not any("green tea" in m.content.lower() for m in s.seen[-1] if m.role == "system")


def test_openai_endpoint_rejects_bad_requests(s: Setup) -> None:
    url = "/v1/chat/completions"
    assert_problem(s.alice.post(url, json={"messages": []}), 422)
    only_system = {"messages": [{"role": "system", "content": "be brief"}]}
    assert_problem(s.alice.post(url, json=only_system), 400)
    assert_problem(s.alice.post(url, json={"messages": [{"role": "wizard", "content": "x"}]}), 422)
    too_many = {"messages": [{"role": "user", "content": "x"}] * 201}
    assert_problem(s.alice.post(url, json=too_many), 422)
    wrong_key = openai.OpenAI(base_url=f"{s.url}/v1", api_key="mak_nope", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        wrong_key.chat.completions.create(model="x", messages=[{"role": "user", "content": "hi"}])


def test_reply_does_not_wait_for_memory_writes(s: Setup, monkeypatch: pytest.MonkeyPatch) -> None:
    from memagent.agent import Agent

    release, closed = threading.Event(), threading.Event()
    original = Agent.close

    def slow_close(self: Agent) -> None:
        release.wait(30)
        original(self)
        closed.set()

    monkeypatch.setattr(Agent, "close", slow_close)
    first = s.alice.post("/v1/chat", json={"message": "What do I drink?"})
    assert first.status_code == 200, first.text
    assert not closed.is_set()  # the reply came back while the writes were still held
    release.set()
    assert closed.wait(30)
    cid = first.json()["conversation_id"]
    again = s.alice.post("/v1/chat", json={"message": "Sure?", "conversation_id": cid})
    assert again.status_code == 200 and again.json()["conversation_id"] == cid


def test_memory_options_take_integral_json_numbers_only() -> None:
    from pydantic import ValidationError

    from memagent.server.routes.chat import MemoryOptions

    assert MemoryOptions.model_validate({"recall_k": 25.0}).recall_k == 25
    for bad in (2.5, "3", True, 51, -1):
        with pytest.raises(ValidationError):
            MemoryOptions.model_validate({"recall_k": bad})


def test_chat_prompt_set_qa_runs_the_grounding_check(tmp_path: Path) -> None:
    """`prompt_set: qa` over HTTP answers as `ask --short` does: the grounding check
    runs, and a memory that does not answer gets the honest refusal, not a guess."""
    from memagent.agent.voice import NOT_IN_MEMORY

    llm = ScriptedLLM(fn=lambda messages, schema: '{"reply": "Green tea."}', verdicts=["no", "yes"])
    root = tmp_path / "server"
    key = KeyStore(root).create(user="alice")[0]
    app = create_app(root, ServerSettings(mcp=False, embeddings=False), llm=llm)
    with (
        LiveServer(app) as live,
        httpx.Client(
            base_url=live.url, headers={"Authorization": f"Bearer {key}"}, timeout=60
        ) as alice,
    ):
        app.state.server.memory_for("alice").remember("Alice drinks green tea every morning.")
        ask = {"message": "What does Alice drink in the morning?", "prompt_set": "qa"}
        refused = alice.post("/v1/chat", json=ask)
        assert refused.status_code == 200, refused.text
        assert refused.json()["reply"] == NOT_IN_MEMORY
        answered = alice.post("/v1/chat", json=ask).json()
        assert answered["reply"] == "Green tea." and answered["ok"] is True
        verdicts = [c for c in llm.calls if c.reply in ("yes", "no")]
        assert len(verdicts) == 2  # one check per qa turn
        alice.post("/v1/chat", json={"message": ask["message"]})  # default set: no check
        assert len([c for c in llm.calls if c.reply in ("yes", "no")]) == 2
        for bad in ("deep", "expand", "../qa", "QA", 1, ["qa"], {"qa": 1}):
            assert_problem(alice.post("/v1/chat", json={**ask, "prompt_set": bad}), 422)
