"""The MCP memory tools (restore_memory, memory_history, build_context,
recent_activity, profile_learn): behaviour, hostile input answered with one plain
sentence and nothing written, and profile_learn held by the model admission."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcp_support import assert_plain_refusals, calls, snapshot
from memagent.api import Memory
from memagent.llm import ScriptedLLM
from memagent.server import KeyStore, ServerSettings, create_app
from memagent.server.testing import LiveServer

FOOD = "resource_user_food_prefs.json"
FACTS = json.dumps({"facts": [{"kind": "food_like", "value": "ramen", "name": ""}]})
# a reply outside the extraction schema: learning fails, nothing is written
BAD = json.dumps({"facts": [{"kind": "no_such_kind", "value": "ramen", "name": ""}]})


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    mem = Memory.open(tmp_path / "home", embeddings=False)
    yield mem
    mem.close()


def learner(replies: list[str]) -> Any:
    return lambda _ctx, _memory: ScriptedLLM(replies)


def test_build_context_of_notes_and_memories(memory: Memory) -> None:
    tea = memory.remember("Jane drinks oolong tea every morning.", tags=["jane"])[0].id
    walk = memory.remember("Jane walks her dog Rex after tea.", tags=["jane"])[0].id
    memory.chunks.link(walk, "supports", tea)
    memory.write_note("entities/jane.md", "# Jane\nFriend of [[entities/bob]]; drinks tea.\n")
    memory.write_note("entities/bob.md", "# Bob\nColleague.\n")
    memory.write_note("entities/ann.md", "# Ann\nSister of [[Jane]].\n")
    out = calls(
        memory,
        [
            ("build_context", {"target": "entities/jane.md"}),
            ("build_context", {"target": "[[Jane]]", "k": 0}),
            ("build_context", {"target": f"memory://memories/{walk}"}),
            ("build_context", {"target": tea}),
        ],
    )
    assert not any(r.is_error for r in out), [r.content for r in out if r.is_error]
    note = {(r["id"], r["relation"]) for r in out[0].structured_content["related"]}
    assert ("entities/bob.md", "links to") in note
    assert ("entities/ann.md", "linked from") in note
    assert (tea, "similar") in note
    assert all(r["kind"] == "note" for r in out[1].structured_content["related"])
    walked = {r["id"]: r["relation"] for r in out[2].structured_content["related"]}
    assert "supports" in walked[tea].split(", ")
    incoming = {r["id"]: r["relation"] for r in out[3].structured_content["related"]}
    assert "supports (incoming)" in incoming[walk].split(", ")


def test_restore_history_and_recent_activity(memory: Memory) -> None:
    mid = memory.remember("Jane moved to Lisbon.")[0].id
    memory.forget(mid)
    memory.write_note("trip.md", "Lisbon in May")
    out = calls(
        memory,
        [
            ("restore_memory", {"id": mid}),
            ("memory_history", {"id": mid}),
            ("recent_activity", {"kinds": ["memory"]}),
            ("recent_activity", {"kinds": ["note"], "limit": 1}),
        ],
    )
    assert not any(r.is_error for r in out), [r.content for r in out if r.is_error]
    assert out[0].structured_content["memory"]["deleted"] is False
    assert [e["op"] for e in out[1].structured_content["edits"]] == ["soft_delete", "restore"]
    items = out[2].structured_content["items"]
    assert {i["kind"] for i in items} == {"memory"}
    assert [i["op"] for i in items] == ["restore", "soft_delete", "create"]
    assert "Jane moved to Lisbon." in items[-1]["summary"]
    assert [i["target"] for i in out[3].structured_content["items"]] == ["trip.md"]
    assert memory.recall("Lisbon", kinds=["chunk"])[0].id == mid


def test_profile_learn_writes_the_profile_and_a_rejected_batch_nothing(memory: Memory) -> None:
    before = snapshot(memory)
    refused = calls(memory, [("profile_learn", {"text": "Ramen is what I order most weeks"})],
                    llm_of=learner([BAD]))  # fmt: skip
    assert snapshot(memory) == before
    assert_plain_refusals(refused, [("profile_learn", {})])
    learn = [("profile_learn", {"text": "I love ramen"})]
    done = calls(memory, learn, llm_of=learner([FACTS]))
    assert not done[0].is_error, done[0].content
    assert done[0].structured_content["ok"] is True
    likes = memory.profile_show("user_food_prefs")[FOOD]["food"]["likes"]
    assert [i["item"] for i in likes] == ["ramen"]


HOSTILE: list[tuple[str, dict[str, Any]]] = [
    ("restore_memory", {"id": "../../etc/passwd"}),
    ("restore_memory", {"id": "chunk-20240101-000000000000"}),
    ("restore_memory", {"id": ["chunk-20240101-000000000000"]}),
    ("restore_memory", {}),
    ("memory_history", {"id": "x" * 100_000}),
    ("memory_history", {"id": {"$gt": ""}}),
    ("build_context", {"target": "../config.toml"}),
    ("build_context", {"target": "memory://notes/../../keys.json"}),
    ("build_context", {"target": "[[nobody at all]]"}),
    ("build_context", {"target": "chunk-20240101-000000000000"}),
    ("build_context", {"target": "x" * 5000}),
    ("build_context", {"target": "user.md", "k": 10_000}),
    ("build_context", {"target": [[["deep"]]]}),
    ("recent_activity", {"days": -1}),
    ("recent_activity", {"limit": 10**9}),
    ("recent_activity", {"kinds": ["secrets"]}),
    ("recent_activity", {"kinds": "note"}),
    ("profile_history", {"item": ""}),
    ("profile_history", {"item": "tea", "resource": "../../keys"}),
    ("profile_history", {"item": "!!!"}),
    ("profile_history", {"item": "x" * 201}),
    ("profile_learn", {"text": ""}),
    ("profile_learn", {"text": "   "}),
    ("profile_learn", {"text": "x" * 20_001}),
    ("profile_learn", {"text": {"nested": ["junk"]}}),
]


def test_hostile_input_is_one_sentence_and_writes_nothing(memory: Memory) -> None:
    memory.remember("Something to keep.")
    before = snapshot(memory)
    results = calls(memory, HOSTILE, llm_of=learner([FACTS]))
    assert_plain_refusals(results, HOSTILE)
    assert snapshot(memory) == before
    assert results[3].content[0].text == "restore_memory: 'id' is required"


class HeldLLM(ScriptedLLM):
    """The extraction's facts; the first call waits for `release`."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.count = 0
        super().__init__(fn=self._reply)

    def _reply(self, messages: Any, schema: Any) -> str:
        if "facts" not in schema["properties"]:
            return json.dumps({"is": "yes"})  # the kind check (`valuekind`): not counted
        self.count += 1
        if self.count == 1:
            self.entered.set()
            assert self.release.wait(60)
        return FACTS


def test_profile_learn_over_http_holds_a_model_slot(tmp_path: Path) -> None:
    root = tmp_path / "server"
    key, _ = KeyStore(root).create(user="alice")
    llm = HeldLLM()
    settings = ServerSettings(embeddings=False, model_in_flight=2)
    app = create_app(root, settings, llm=llm)

    async def learn(url: str) -> Any:
        headers = {"Authorization": f"Bearer {key}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=60) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            return await client.call_tool("profile_learn", {"text": "I love ramen"})

    with LiveServer(app) as live:
        headers = {"Authorization": f"Bearer {key}"}
        holder: dict[str, httpx.Response] = {}

        def first() -> None:
            holder["r"] = httpx.post(f"{live.url}/v1/profile/learn", json={"text": "I love ramen"},
                                     headers=headers, timeout=60)  # fmt: skip

        thread = threading.Thread(target=first)
        thread.start()
        assert llm.entered.wait(60)  # the HTTP learn holds alice's one model slot
        refused = anyio.run(learn, f"{live.url}/mcp")
        llm.release.set()
        thread.join(60)
        after = anyio.run(learn, f"{live.url}/mcp")
    assert refused.is_error
    assert refused.content[0].text == (
        "profile_learn: too many model requests in flight for this user; at most 1 at once"
    )
    assert holder["r"].status_code == 200, holder["r"].text
    assert not after.is_error, after.content
    assert llm.count == 2  # one extraction call each; the refused call never reached it
