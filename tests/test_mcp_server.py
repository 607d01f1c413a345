"""MCP through the SDK's own client: `memagent mcp` over stdio, and `/mcp` under serve."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters, get_default_environment
from mcp.client.streamable_http import streamable_http_client

from memagent.core import MemoryHome
from memagent.server import KeyStore, ServerSettings, create_app
from memagent.server.testing import LiveServer

TOOLS = {
    "remember",
    "recall",
    "read_note",
    "write_note",
    "run_actions",
    "profile_show",
    "profile_apply",
    "profile_learn",
    "profile_history",
    "list_memories",
    "update_memory",
    "forget",
    "undo_memory",
    "restore_memory",
    "memory_history",
    "edit_note",
    "move_note",
    "delete_note",
    "list_directory",
    "build_context",
    "recent_activity",
}
FOOD = "resource_user_food_prefs.json"
LEARN_REPLIES = [
    json.dumps({"facts": [{"kind": "food_like", "value": "ramen", "name": ""}]}),
]


def learn_script(tmp_path: Path) -> Path:
    """A scripted model's reply for one profile_learn call (the extracted facts)."""
    script = tmp_path / "learn.json"
    script.write_text(json.dumps(LEARN_REPLIES))
    return script


APPEND = {
    "operation": "append",
    "file": "resource_user_food_prefs.json",
    "path": "food.likes",
    "value": {"item": "dumplings"},
}


async def _exercise(client: Client) -> dict[str, Any]:
    out: dict[str, Any] = {}
    tools = (await client.list_tools()).tools
    out["tools"] = {t.name for t in tools}
    out["schemas"] = {t.name: t.input_schema for t in tools}
    made = await client.call_tool(
        "remember", {"text": "Jane's birthday is May 3rd", "tags": ["jane"]}
    )
    out["remembered"] = made.structured_content
    mid = made.structured_content["ids"][0]
    hits = await client.call_tool("recall", {"query": "when is Jane's birthday", "k": 3})
    out["hits"] = hits.structured_content
    out["write"] = (
        await client.call_tool("write_note", {"path": "entities/jane.md", "content": "# Jane\n"})
    ).structured_content
    out["read"] = (
        await client.call_tool("read_note", {"path": "entities/jane.md"})
    ).structured_content
    out["escape"] = await client.call_tool("read_note", {"path": "../config.toml"})
    actions = [{"action": "list_files", "path": "entities"}]
    out["actions"] = (
        await client.call_tool("run_actions", {"actions": actions})
    ).structured_content
    applied = await client.call_tool("profile_apply", {"operations": [APPEND]})
    out["applied"] = applied.structured_content
    bad = await client.call_tool("profile_apply", {"operations": [{"operation": "explode"}]})
    out["bad_apply"] = bad
    shown = await client.call_tool("profile_show", {"resource": "user_food_prefs"})
    out["profile"] = shown.structured_content
    out["resources"] = [str(r.uri) for r in (await client.list_resources()).resources]
    note = await client.read_resource("memory://notes/entities/jane.md")
    out["resource_text"] = note.contents[0].text  # type: ignore[union-attr]
    old = await client.read_resource("memagent://vault/entities/jane.md")
    out["legacy_text"] = old.contents[0].text  # type: ignore[union-attr]
    remembered = await client.read_resource(f"memory://memories/{mid}")
    out["memory_text"] = remembered.contents[0].text  # type: ignore[union-attr]
    await _more(client, mid, out)
    return out


async def _call(client: Client, name: str, args: dict[str, Any]) -> Any:
    result = await client.call_tool(name, args)
    assert not result.is_error, (name, result.content)
    return result.structured_content


async def _more(client: Client, mid: str, out: dict[str, Any]) -> None:
    """The tools past read/write: one round trip each, in an order that lets each
    see the one before."""
    edits = [
        {"operation": "append", "content": "## Work\nAcme\n\n## Family\nAnn [[user]]\n"},
        {"operation": "replace_section", "section": "Work", "content": "Globex"},
        {"operation": "prepend", "content": "tags: friend"},
        {"operation": "find_replace", "find": "Globex", "content": "Initech"},
    ]
    for edit in edits:
        done = await _call(client, "edit_note", {"path": "entities/jane.md", **edit})
        assert done["changed"] is True, edit
    out["edited"] = (await _call(client, "read_note", {"path": "entities/jane.md"}))["content"]
    out["moved"] = await _call(
        client, "move_note", {"source": "entities/jane.md", "destination": "people/jane.md"}
    )
    out["listed"] = await _call(client, "list_directory", {"path": "people"})
    await _call(client, "write_note", {"path": "scratch.md", "content": "tmp"})
    out["deleted"] = await _call(client, "delete_note", {"path": "scratch.md"})
    out["note_context"] = await _call(client, "build_context", {"target": "people/jane.md"})
    out["memory_context"] = await _call(client, "build_context", {"target": mid})
    updated = await _call(client, "update_memory", {"id": mid, "text": "Jane's birthday: May 4"})
    out["updated"] = updated["content"]
    out["undone"] = (await _call(client, "undo_memory", {"id": mid}))["now"]["content"]
    await _call(client, "forget", {"id": mid})
    out["restored"] = await _call(client, "restore_memory", {"id": mid})
    out["history"] = await _call(client, "memory_history", {"id": mid})
    out["listed_memories"] = await _call(client, "list_memories", {"limit": 5})
    out["activity"] = await _call(client, "recent_activity", {"days": 1, "limit": 50})
    out["learned"] = await _call(client, "profile_learn", {"text": "I love ramen"})
    shown = await _call(client, "profile_show", {"resource": "user_food_prefs"})
    out["likes_after_learn"] = [i["item"] for i in shown[FOOD]["food"]["likes"]]
    out["ramen_history"] = await _call(client, "profile_history", {"item": "ramen"})
    out["prompts"] = [p.name for p in (await client.list_prompts()).prompts]
    prompt = await client.get_prompt("continue_conversation", {"topic": "Jane's birthday"})
    out["prompt"] = prompt.messages[0].content.text  # type: ignore[union-attr]


def _check(out: dict[str, Any]) -> None:
    assert out["tools"] == TOOLS
    schema = out["schemas"]["profile_apply"]
    assert "AppendOp" in json.dumps(schema)  # the pydantic models' JSON Schema
    assert out["schemas"]["recall"]["properties"]["k"]["maximum"] == 100
    mid = out["remembered"]["ids"][0]
    assert out["hits"]["hits"][0]["id"] == mid
    assert out["write"]["created"] is True
    assert out["read"] == {"path": "entities/jane.md", "content": "# Jane\n"}
    assert out["escape"].is_error and ".." in out["escape"].content[0].text
    assert out["actions"]["results"][0]["value"]["entries"] == ["entities/jane.md"]
    assert out["applied"]["ok"] is True
    assert out["bad_apply"].is_error
    food = out["profile"]["resource_user_food_prefs.json"]["food"]["likes"]
    assert [i["item"] for i in food] == ["dumplings"]
    assert "memory://notes/entities/jane.md" in out["resources"]
    assert "memory://notes/user.md" in out["resources"]
    assert f"memory://memories/{mid}" in out["resources"]
    assert out["resource_text"] == out["legacy_text"] == "# Jane\n"
    assert out["memory_text"] == "Jane's birthday is May 3rd"
    _check_more(out, mid)


def _check_more(out: dict[str, Any], mid: str) -> None:
    assert out["edited"] == ("tags: friend\n# Jane\n## Work\nInitech\n\n## Family\nAnn [[user]]\n")
    assert out["moved"] == {"source": "entities/jane.md", "destination": "people/jane.md"}
    assert out["listed"]["entries"] == [{"path": "people/jane.md", "kind": "file"}]
    assert out["deleted"] == {"path": "scratch.md", "deleted": True}
    related = {(r["kind"], r["id"], r["relation"]) for r in out["note_context"]["related"]}
    assert ("note", "user.md", "links to") in related
    assert out["memory_context"]["kind"] == "memory"
    assert out["memory_context"]["content"] == "Jane's birthday is May 3rd"
    assert out["updated"] == "Jane's birthday: May 4"
    assert out["undone"] == "Jane's birthday is May 3rd"
    assert out["restored"]["memory"]["deleted"] is False
    ops = [e["op"] for e in out["history"]["edits"]]
    assert ops == ["update", "undo", "soft_delete", "restore"]
    assert out["listed_memories"]["memories"][0]["id"] == mid
    kinds = {(i["kind"], i["target"]) for i in out["activity"]["items"]}
    assert ("note", "people/jane.md") in kinds and ("memory", mid) in kinds
    assert ("note", "scratch.md") in kinds
    assert out["learned"]["ok"] is True
    assert out["likes_after_learn"] == ["dumplings", "ramen"]
    assert [e["change"] for e in out["ramen_history"]["entries"]] == ["append"]
    assert set(out["prompts"]) == {"continue_conversation", "review_memory"}
    assert "Jane's birthday is May 3rd" in out["prompt"]


def _pythonpath() -> dict[str, str]:
    value = os.environ.get("PYTHONPATH")
    return {"PYTHONPATH": value} if value else {}


def test_mcp_over_stdio(tmp_path: Path) -> None:
    home = tmp_path / "home"
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "memagent",
            "mcp",
            "--home",
            str(home),
            "--keyword-only",
            "--model",
            f"scripted:{learn_script(tmp_path)}",
        ],
        # The SDK passes only a few variables on; keep PYTHONPATH (a source checkout).
        env={**get_default_environment(), **_pythonpath()},
    )

    async def run() -> dict[str, Any]:
        async with Client(params) as client:
            return await _exercise(client)

    out = anyio.run(run)
    _check(out)
    # Everything went to files in the home, through Storage (the ops log saw it).
    mh = MemoryHome.open(home)
    assert (home / "vault" / "people" / "jane.md").read_text().startswith("tags: friend\n")
    assert not (home / "vault" / "entities" / "jane.md").exists()
    assert any(r.path == "vault/entities/jane.md" for r in mh.ops(limit=500))
    assert not (tmp_path / "config.toml").exists()


def test_mcp_over_http_is_per_user_and_authenticated(tmp_path: Path) -> None:
    root = tmp_path / "server"
    store = KeyStore(root)
    alice, _ = store.create(user="alice")
    bob, _ = store.create(user="bob")
    revoked_key, revoked = store.create(user="carol")
    store.revoke(revoked.id)
    settings = ServerSettings(embeddings=False, llm=f"scripted:{learn_script(tmp_path)}")
    app = create_app(root, settings)

    async def session(url: str, key: str) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {key}"}
        async with (
            httpx2.AsyncClient(headers=headers) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            return await _exercise(client)

    async def bob_view(url: str, mid: str) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {bob}"}
        async with (
            httpx2.AsyncClient(headers=headers) as http,
            Client(streamable_http_client(url, http_client=http)) as client,
        ):
            note = await client.call_tool("read_note", {"path": "people/jane.md"})
            hits = await client.call_tool("recall", {"query": "Jane birthday"})
            resources = [str(r.uri) for r in (await client.list_resources()).resources]
            trying = [
                ("edit_note", {"path": "people/jane.md", "operation": "prepend", "content": "x"}),
                ("move_note", {"source": "people/jane.md", "destination": "mine.md"}),
                ("delete_note", {"path": "people/jane.md"}),
                ("list_directory", {"path": "people"}),
                ("build_context", {"target": "people/jane.md"}),
                ("build_context", {"target": mid}),
                ("restore_memory", {"id": mid}),
                ("memory_history", {"id": mid}),
            ]
            refused = [await client.call_tool(name, args) for name, args in trying]
            activity = await client.call_tool("recent_activity", {"days": 1, "limit": 200})
            return {
                "note": note,
                "hits": hits.structured_content,
                "resources": resources,
                "refused": refused,
                "activity": activity.structured_content,
            }

    with LiveServer(app) as live:
        url = f"{live.url}/mcp"
        out = anyio.run(session, url, alice)
        _check(out)
        seen = anyio.run(bob_view, url, out["remembered"]["ids"][0])
        assert seen["note"].is_error
        assert all(h["kind"] != "chunk" for h in seen["hits"]["hits"])
        assert not [u for u in seen["resources"] if "jane" in u or "memories/" in u]
        assert all(r.is_error for r in seen["refused"]), [r.content for r in seen["refused"]]
        assert not [i for i in seen["activity"]["items"] if "jane" in i["target"]]
        assert not [i for i in seen["activity"]["items"] if i["kind"] == "memory"]
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        bad_auth = ["", "Bearer nope", f"Bearer {revoked_key}", f"Basic {alice}"]
        for value in bad_auth:
            headers = {"Authorization": value} if value else {}
            r = httpx.post(url, json=ping, headers=headers)
            assert r.status_code == 401, value
            assert r.headers["content-type"].startswith("application/problem+json")
    assert not (root / "users" / "carol").exists()
    assert (root / "users" / "bob" / "vault" / "user.md").exists()
    assert not (root / "users" / "bob" / "vault" / "mine.md").exists()
    assert (root / "users" / "alice" / "vault" / "people" / "jane.md").exists()


def test_mcp_tools_refuse_bad_input_and_write_nothing(tmp_path: Path) -> None:
    from memagent.api import Memory
    from memagent.server.mcp_tools import build_mcp_server

    memory = Memory.open(tmp_path / "home", embeddings=False)
    server = build_mcp_server(lambda _ctx: memory)
    big = "x" * (memory.home.config.limits.max_file_bytes * 17)

    async def run() -> list[Any]:
        async with Client(server) as client:
            calls: list[tuple[str, dict[str, Any]]] = [
                ("remember", {"text": big}),
                ("remember", {"text": ""}),
                ("remember", {"text": "ok", "tags": ["bad tag"]}),
                ("recall", {"query": "x", "k": 0}),
                ("recall", {"query": "x" * 5000}),
                ("write_note", {"path": "../escape.md", "content": "x"}),
                ("write_note", {"path": "big.md", "content": big}),
                ("read_note", {"path": "/etc/passwd"}),
                ("run_actions", {"actions": [{"action": "format_disk"}]}),
                ("run_actions", {"actions": "read everything"}),
                ("profile_apply", {"operations": [{"operation": "append", "file": "../x"}]}),
                ("profile_show", {"resource": "../../keys"}),
                ("no_such_tool", {}),
                ("forget", {}),
                ("update_memory", {"id": {"nested": [1, {"junk": None}]}}),
            ]
            return [await client.call_tool(name, args) for name, args in calls]

    try:
        results = anyio.run(run)
    finally:
        memory.close()
    assert all(r.is_error for r in results), [r for r in results if not r.is_error]
    for result in results:
        text = result.content[0].text
        assert "\n" not in text and "pydantic" not in text and "Error executing" not in text
    assert results[-2].content[0].text == "forget: 'id' is required"
    assert results[-1].content[0].text == "update_memory: 'id': input should be a valid string"
    assert results[-3].content[0].text == "there is no tool named 'no_such_tool'"
    assert not list(memory.home.layout.chunks.rglob("*.json"))
    assert not (tmp_path / "home" / "escape.md").exists()
    assert not (memory.home.layout.vault / "big.md").exists()


def test_mcp_http_body_limit(tmp_path: Path) -> None:
    root = tmp_path / "server"
    key, _ = KeyStore(root).create(user="alice")
    app = create_app(root, ServerSettings(embeddings=False, max_body_bytes=2000))
    with LiveServer(app) as live:
        r = httpx.post(
            f"{live.url}/mcp",
            content=b"{" + b" " * 5000 + b"}",
            headers={"Authorization": f"Bearer {key}", "content-type": "application/json"},
        )
    assert r.status_code == 413
    assert r.headers["content-type"].startswith("application/problem+json")


def test_mcp_update_forget_list_memories(tmp_path: Path) -> None:
    from memagent.api import Memory
    from memagent.server.mcp_tools import build_mcp_server

    alice = Memory.open(tmp_path / "alice", embeddings=False)
    bob = Memory.open(tmp_path / "bob", embeddings=False)
    mid = alice.remember("Jane drinks green tea.", tags=["jane"])[0].id

    async def run(memory: Memory, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
        async with Client(build_mcp_server(lambda _ctx: memory)) as client:
            return [await client.call_tool(name, args) for name, args in calls]

    try:
        bad = anyio.run(
            run,
            alice,
            [
                ("update_memory", {"id": mid, "text": ""}),
                ("update_memory", {"id": mid}),
                ("update_memory", {"id": mid, "tags": ["bad tag"]}),
                ("update_memory", {"id": mid, "text": "x" * 2_000_000}),
                ("update_memory", {"id": "../../etc/passwd", "text": "x"}),
                ("forget", {"id": "chunk-20240101-000000000000"}),
                ("forget", {"id": mid, "hard": "yes"}),  # a destructive flag is never coerced
                ("list_memories", {"limit": 0}),
            ],
        )
        assert all(r.is_error for r in bad), [r for r in bad if not r.is_error]
        for r in bad:
            text = r.content[0].text
            assert text.split(":")[0] in TOOLS and "\n" not in text and "pydantic" not in text
        assert alice.get(mid).content == "Jane drinks green tea."
        other = anyio.run(
            run, bob, [("update_memory", {"id": mid, "text": "hijack"}), ("forget", {"id": mid})]
        )
        assert all(r.is_error and "no chunk" in r.content[0].text for r in other)
        ok = anyio.run(
            run,
            alice,
            [
                ("update_memory", {"id": mid, "text": "Jane drinks oolong.", "tags": ["tea"]}),
                ("list_memories", {"limit": 5}),
                ("forget", {"id": mid}),
                ("list_memories", {}),
            ],
        )
        assert not any(r.is_error for r in ok)
        assert ok[0].structured_content["content"] == "Jane drinks oolong."
        assert ok[1].structured_content["memories"][0]["tags"] == ["tea"]
        assert ok[2].structured_content == {"id": mid, "hard": False, "restorable": True}
        assert ok[3].structured_content["memories"] == []
        assert [h.id for h in alice.recall("oolong", tags=["tea"])] == []
        undone = anyio.run(run, alice, [("undo_memory", {"id": mid})])[0]
        assert not undone.is_error and undone.structured_content["now"]["deleted_at"] is None
        assert [h.id for h in alice.recall("oolong")] == [mid]
        assert [e.op for e in alice.history(mid)] == ["update", "soft_delete", "undo"]
        refused = anyio.run(
            run,
            alice,
            [
                ("undo_memory", {"id": mid, "edit": "edit-zz"}),
                ("undo_memory", {"id": "../x"}),
                ("undo_memory", {"id": "chunk-20240101-000000000000"}),
            ],
        )
        assert all(r.is_error for r in refused)
        assert anyio.run(run, bob, [("undo_memory", {"id": mid})])[0].is_error
    finally:
        alice.close()
        bob.close()


def test_each_tool_is_one_function_whose_arguments_model_is_its_input_schema(
    tmp_path: Path,
) -> None:
    from typing import get_type_hints

    from memagent.api import Memory
    from memagent.server import mcp_memory, mcp_notes, mcp_tools
    from memagent.server.mcp_common import Backend, ToolCall
    from memagent.server.mcp_tools import build_mcp_server

    listed = {t.name: t for t in anyio.run(build_mcp_server(lambda _ctx: None).list_tools)}
    functions = [*mcp_tools.TOOLS, *mcp_notes.TOOLS, *mcp_memory.TOOLS]
    assert {f.__name__ for f in functions} == set(listed) == TOOLS
    for fn in functions:
        model = get_type_hints(fn)["args"]
        schema = model.model_json_schema()
        tool = listed[fn.__name__]
        assert tool.input_schema["properties"] == schema["properties"], fn.__name__
        assert set(tool.input_schema.get("required", [])) == set(schema.get("required", []))
        assert tool.description and "\n " not in tool.description  # no docstring indentation

    # a tool is a plain function: called without any MCP machinery
    with Memory.open(tmp_path / "home", embeddings=False) as memory:
        call = ToolCall(memory, Backend(lambda _ctx: memory))
        made = mcp_tools.remember(call, mcp_tools.RememberArgs(text="Ana drinks tea."))
        listing = mcp_tools.list_memories(call, mcp_tools.ListMemoriesArgs())
        assert [m.id for m in listing.memories] == made.ids
