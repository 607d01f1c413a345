"""MCP prompts (filled with recalled memory) and resources (memory://notes/…,
memory://memories/…): listed, read, and refused in one plain sentence."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError

from mcp_support import snapshot
from memagent.api import Memory
from memagent.server.mcp_tools import build_mcp_server


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    mem = Memory.open(tmp_path / "home", embeddings=False)
    yield mem
    mem.close()


def session(memory: Memory, work: Any) -> Any:
    async def run() -> Any:
        async with Client(build_mcp_server(lambda _ctx: memory)) as client:
            return await work(client)

    return anyio.run(run)


def test_prompts_carry_recalled_memory(memory: Memory) -> None:
    mid = memory.remember("Jane's sourdough starter is called Clint.")[0].id

    async def work(client: Client) -> Any:
        listed = {p.name: p for p in (await client.list_prompts()).prompts}
        about = await client.get_prompt("continue_conversation", {"topic": "sourdough"})
        empty = await client.get_prompt("continue_conversation", {"topic": "zzqxv tuba"})
        review = await client.get_prompt("review_memory", {"subject": "sourdough"})
        return listed, about, empty, review

    listed, about, empty, review = session(memory, work)
    assert set(listed) == {"continue_conversation", "review_memory"}
    assert [a.name for a in listed["continue_conversation"].arguments or []] == ["topic"]
    text = about.messages[0].content.text
    assert "sourdough" in text and "Clint" in text
    assert "memory has nothing on zzqxv tuba" in empty.messages[0].content.text
    assert f"[{mid}]" in review.messages[0].content.text


def test_resources_list_and_read(memory: Memory) -> None:
    memory.write_note("entities/jane.md", "# Jane\n")
    mid = memory.remember("Jane likes kayaking.")[0].id

    async def work(client: Client) -> Any:
        uris = [str(r.uri) for r in (await client.list_resources()).resources]
        templates = [
            t.uri_template for t in (await client.list_resource_templates()).resource_templates
        ]
        note = await client.read_resource("memory://notes/entities/jane.md")
        item = await client.read_resource(f"memory://memories/{mid}")
        return uris, templates, note.contents[0].text, item.contents[0].text

    uris, templates, note, item = session(memory, work)
    assert "memory://notes/entities/jane.md" in uris and f"memory://memories/{mid}" in uris
    assert "memory://notes/{+path}" in templates and "memory://memories/{id}" in templates
    assert (note, item) == ("# Jane\n", "Jane likes kayaking.")


PROMPT_REFUSALS: list[tuple[str, dict[str, Any]]] = [
    ("continue_conversation", {}),
    ("continue_conversation", {"topic": "x" * 10_000}),
    ("review_memory", {"subject": ""}),
    ("no_such_prompt", {}),
]
RESOURCE_REFUSALS = [
    "memory://notes/../config.toml",
    "memory://notes/%2E%2E/%2E%2E/keys.json",
    "memory://notes/missing.md",
    "memory://memories/chunk-20240101-000000000000",
    "memory://memories/..%2Fconfig",
    "memory://elsewhere/x",
    "memory://notes/" + "a/" * 3000 + "b.md",
]


def test_hostile_prompts_and_resources_refused_plainly(memory: Memory) -> None:
    memory.remember("keep me")
    before = snapshot(memory)

    async def work(client: Client) -> list[str]:
        errors: list[str] = []
        for name, args in PROMPT_REFUSALS:
            with pytest.raises(MCPError) as caught:
                await client.get_prompt(name, args)
            errors.append(str(caught.value))
        for uri in RESOURCE_REFUSALS:
            with pytest.raises(MCPError) as caught:
                await client.read_resource(uri)
            errors.append(str(caught.value))
        return errors

    errors = session(memory, work)
    assert snapshot(memory) == before
    for text in errors:
        assert "\n" not in text and len(text) <= 400, text
        assert "pydantic" not in text and "Traceback" not in text, text
    assert errors[0] == "continue_conversation: 'topic' is required"
    assert errors[1].startswith("continue_conversation: 'topic':")
    assert errors[4].startswith("memory://notes/../config.toml: no such resource")
    assert errors[6] == "memory://notes/missing.md: 'missing.md' does not exist"
