"""MCP prompts (templates in `mcp_prompts.yaml`, filled with recalled memory) and
resources: notes as `memory://notes/<path>`, memories as `memory://memories/<id>`.

The resource list is built per request (`resource_list`), so under `serve` each
user lists only their own notes and newest memories; reading a resource goes
through the same `Memory` methods as the tools.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib.resources import files
from typing import Annotated, Any
from urllib.parse import quote, unquote

import yaml
from jinja2 import Environment, StrictUndefined
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError
from mcp.server.mcpserver.prompts.base import UserMessage
from mcp_types import Resource as MCPResource
from pydantic import Field

from memagent.api import Memory
from memagent.core import MemagentError
from memagent.server.mcp_common import Backend

NOTES_URI = "memory://notes/"
MEMORIES_URI = "memory://memories/"
LEGACY_VAULT_URI = "memagent://vault/"
MAX_LISTED_NOTES = 1000
MAX_LISTED_MEMORIES = 50
PROMPT_HITS = 8
_env = Environment(
    undefined=StrictUndefined, autoescape=False, trim_blocks=True, lstrip_blocks=True
)

Topic = Annotated[str, Field(min_length=1, max_length=500)]


@functools.cache
def _templates() -> dict[str, dict[str, str]]:
    text = files("memagent.server").joinpath("mcp_prompts.yaml").read_text(encoding="utf-8")
    data: dict[str, dict[str, str]] = yaml.safe_load(text)
    return data


def render(name: str, **values: Any) -> str:
    return _env.from_string(_templates()[name]["template"]).render(**values).strip()


def note_uri(path: str) -> str:
    return NOTES_URI + quote(path, safe="/")


def resource_list(memory: Memory) -> list[MCPResource]:
    """The caller's notes and newest memories as resources."""
    try:
        notes = memory.list_notes()
    except MemagentError:
        notes = []
    out = [
        MCPResource(
            uri=note_uri(path),
            name=path,
            title=path.rsplit("/", 1)[-1],
            mime_type="text/markdown",
        )
        for path in notes[:MAX_LISTED_NOTES]
        if path.endswith(".md")
    ]
    try:
        rows = memory.memories(limit=MAX_LISTED_MEMORIES)
    except MemagentError:
        rows = []
    for row in rows:
        text = " ".join(str(row.get("content", "")).split())
        out.append(
            MCPResource(
                uri=MEMORIES_URI + str(row["id"]),
                name=str(row["id"]),
                title=text[:60] or str(row["id"]),
                mime_type="text/plain",
            )
        )
    return out


@dataclass(frozen=True)
class PromptHit:
    """A recalled memory as a prompt template quotes it (its text on one line)."""

    id: str
    kind: str
    content: str
    date: str | None


def _hits(memory: Memory, query: str) -> list[PromptHit]:
    return [
        PromptHit(h.id, h.kind, " ".join(h.content.split()), h.created_at)
        for h in memory.recall(query, k=PROMPT_HITS)
    ]


def register(mcp: MCPServer[Any], backend: Backend) -> None:
    """Add the prompts and the resource templates to `mcp`."""
    spec = _templates()

    @mcp.prompt(description=spec["continue_conversation"]["description"])
    def continue_conversation(topic: Topic, ctx: Context) -> list[UserMessage]:
        hits = _hits(backend.memory(ctx), topic)
        return [UserMessage(render("continue_conversation", topic=topic, hits=hits))]

    @mcp.prompt(description=spec["review_memory"]["description"])
    def review_memory(ctx: Context, subject: Topic = "me") -> list[UserMessage]:
        hits = _hits(backend.memory(ctx), subject)
        return [UserMessage(render("review_memory", subject=subject, hits=hits))]

    def read(fn: Any, *args: Any) -> str:
        try:
            return str(fn(*args))
        except MemagentError as exc:
            raise ResourceError(str(exc)) from exc

    @mcp.resource(
        NOTES_URI + "{+path}",
        name="note",
        description="A markdown note of the vault (e.g. memory://notes/user.md).",
        mime_type="text/markdown",
    )
    def note(path: str, ctx: Context) -> str:
        return read(backend.memory(ctx).read_note, unquote(path))

    @mcp.resource(
        MEMORIES_URI + "{id}",
        name="memory",
        description="One stored memory's text (e.g. memory://memories/chunk-20260101-…).",
        mime_type="text/plain",
    )
    def memory(id: str, ctx: Context) -> str:
        return read(lambda: backend.memory(ctx).get(id).content)

    @mcp.resource(
        LEGACY_VAULT_URI + "{+path}",
        name="vault-note",
        description="The same notes under their older URIs (memagent://vault/user.md).",
        mime_type="text/markdown",
    )
    def vault_note(path: str, ctx: Context) -> str:
        return read(backend.memory(ctx).read_note, unquote(path))
