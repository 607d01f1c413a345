"""MCP tools past basic-memory's: restore and history of memories, build_context
(a note or memory with its links and neighbours), recent_activity (what changed,
in words), profile_history, and profile_learn (the model, behind the server's
model admission).

They call the same `Memory` methods as the HTTP API, under the same locks.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Annotated, Literal

import anyio.to_thread
from pydantic import BaseModel, Field

from memagent.api import Memory, MemoryItem
from memagent.core import Conflict, InvalidInput, MemagentError
from memagent.core.jsontext import JsonObject
from memagent.core.oplog import OpRecord, read_ops_before
from memagent.server.mcp_common import Tool, ToolCall
from memagent.server.routes.memories import MemoryHistory
from memagent.server.routes.profile import Learned
from memagent.server.ui.pages_notes import backlinks

ChunkId = Annotated[str, Field(pattern=r"^chunk-\d{8}-[0-9a-f]{12}$", description="A memory id.")]
CHUNK_ID = re.compile(r"^chunk-\d{8}-[0-9a-f]{12}$")
_WIKILINK = re.compile(r"\[\[([^\[\]\n]{1,300})\]\]")
MAX_LINKS = 20
MAX_SNIPPET = 2000
ACTIVITY_SCAN = 2000
"""Ops-log records read back at most for one recent_activity call."""
_KINDS = {"vault/": "note", "chunks/": "memory", "profile/": "profile"}
_MEMORY_VERBS = {
    "create": "remembered",
    "update": "edited",
    "soft_delete": "forgotten",
    "restore": "brought back",
    "undo": "edit undone",
    "delete": "deleted for good",
    "link": "linked",
}
_NOTE_VERBS = {
    "create": "created",
    "update": "edited",
    "append": "added to",
    "delete": "deleted",
    "rollback": "put back (a failed turn)",
}
_PROFILE_VERBS = {"apply": "changed", "learn": "learned from chat", "undo": "change undone"}


class Restored(BaseModel):
    memory: MemoryItem


class Related(BaseModel):
    kind: Literal["note", "memory"]
    id: str = Field(description="Note path or memory id.")
    relation: str = Field(description="How it relates, e.g. 'links to', 'linked from'.")
    content: str


class BuiltContext(BaseModel):
    kind: Literal["note", "memory"]
    id: str
    content: str
    related: list[Related]


class ProfileHistory(BaseModel):
    item: str
    entries: list[JsonObject] = Field(description="Every change to it, oldest first.")


class ActivityItem(BaseModel):
    ts: str
    kind: Literal["note", "memory", "profile"]
    op: str
    target: str = Field(description="Note path, memory id or profile file.")
    summary: str


class Activity(BaseModel):
    since: str
    items: list[ActivityItem]


def _snippet(text: str) -> str:
    return text if len(text) <= MAX_SNIPPET else text[: MAX_SNIPPET - 1] + "…"


def note_context(memory: Memory, path: str, k: int) -> BuiltContext:
    """A note, the notes its wikilinks resolve to, the notes linking to it, and the
    memories nearest to it."""
    vault = memory.vault
    rel = vault.locate(path).rel
    text = vault.read(path)
    related: list[Related] = []
    seen = {rel}
    for m in _WIKILINK.finditer(text):
        if len(related) >= MAX_LINKS:
            break
        try:
            target = vault.go_to_link("[[" + m.group(1) + "]]")
        except MemagentError:
            continue
        if target.path not in seen:
            seen.add(target.path)
            related.append(
                Related(
                    kind="note",
                    id=target.path,
                    relation="links to",
                    content=_snippet(target.content),
                )
            )
    for other in backlinks(vault, rel, text)[:MAX_LINKS]:
        if other not in seen:
            seen.add(other)
            related.append(
                Related(
                    kind="note",
                    id=other,
                    relation="linked from",
                    content=_snippet(vault.read(other)),
                )
            )
    query = " ".join(text.split())[:400]
    if query and k:
        for hit in memory.recall(query, k=k, kinds=["chunk"]):
            related.append(
                Related(kind="memory", id=hit.id, relation="similar", content=_snippet(hit.content))
            )
    return BuiltContext(kind="note", id=rel, content=text, related=related)


def memory_context(memory: Memory, memory_id: str, k: int) -> BuiltContext:
    """A memory, the memories it links to or is linked from, and its nearest ones."""
    chunk = memory.get(memory_id)
    with memory.guard:
        links = memory.chunks.links(memory_id)
    how: dict[str, list[str]] = {}
    for e in links["outgoing"]:
        how.setdefault(e["target"], []).append(e["type"])
    for e in links["incoming"]:
        how.setdefault(e["source"], []).append(f"{e['type']} (incoming)")
    how.pop(memory_id, None)
    related: list[Related] = []
    for other, kinds in list(how.items())[:MAX_LINKS]:
        try:
            with memory.guard:
                content = memory.chunks.get(other, record_access=False).content
        except MemagentError:
            continue
        related.append(
            Related(kind="memory", id=other, relation=", ".join(kinds), content=_snippet(content))
        )
    seen = {memory_id, *how}
    query = " ".join(chunk.content.split())[:400]
    for hit in memory.recall(query, k=k + 1, kinds=["chunk"]) if k and query else []:
        if hit.id not in seen and len(related) < MAX_LINKS + k:
            seen.add(hit.id)
            related.append(
                Related(kind="memory", id=hit.id, relation="similar", content=_snippet(hit.content))
            )
    return BuiltContext(kind="memory", id=memory_id, content=chunk.content, related=related)


def build(memory: Memory, target: str, k: int) -> BuiltContext:
    """`target`: a memory id, a note path, a `[[wikilink]]`, or a memory:// URI."""
    target = target.strip()
    for prefix in ("memory://memories/", "memory://notes/", "memagent://vault/"):
        if target.startswith(prefix):
            target = target.removeprefix(prefix)
    if CHUNK_ID.match(target):
        return memory_context(memory, target, k)
    if target.startswith("[["):
        target = memory.vault.go_to_link(target).path
    return note_context(memory, target, k)


def _records(memory: Memory) -> list[OpRecord]:
    """The newest ops records, newest first (files or PostgreSQL)."""
    if memory.db is not None:
        from memagent.postgres.ops import PgOpsLog

        return list(reversed(PgOpsLog(memory.db, memory.user).read(limit=ACTIVITY_SCAN)))
    return read_ops_before(memory.home.layout.ops_log, None, limit=ACTIVITY_SCAN)[0]


def _describe(memory: Memory, rec: OpRecord) -> ActivityItem | None:
    kind = next((k for p, k in _KINDS.items() if rec.path.startswith(p)), None)
    if kind is None or rec.actor == "init" or rec.op in ("mkdir", "rmdir"):
        return None
    meta = rec.meta or {}
    if kind == "memory":
        target = str(meta.get("id") or rec.path.rsplit("/", 1)[-1].removesuffix(".json"))
        after = meta.get("after")
        text = after.get("content") if isinstance(after, dict) else meta.get("content")
        if not isinstance(text, str):
            try:
                with memory.guard:
                    text = memory.chunks.get(target, record_access=False).content
            except MemagentError:
                text = ""
        verb = _MEMORY_VERBS.get(rec.op, rec.op.replace("_", " "))
        summary = f"{verb}: {' '.join(text.split())[:120]}".rstrip(": ")
    elif kind == "note":
        target = rec.path.removeprefix("vault/")
        summary = f"note {target} {_NOTE_VERBS.get(rec.op, rec.op.replace('_', ' '))}"
    else:
        target = rec.path.removeprefix("profile/")
        changes = meta.get("changes")
        count = len(changes) if isinstance(changes, list) else 0
        about = target.removeprefix("resource_").removesuffix(".json").replace("_", " ")
        verb = _PROFILE_VERBS.get(rec.op, rec.op.replace("_", " "))
        summary = f"profile ({about}) {verb}" + (f": {count} change(s)" if count else "")
    return ActivityItem(ts=rec.ts, kind=kind, op=rec.op, target=target, summary=summary)


def recent(memory: Memory, days: int, limit: int, kinds: list[str]) -> Activity:
    since = (datetime.now(UTC) - timedelta(days=days)).isoformat(timespec="seconds")
    items: list[ActivityItem] = []
    for rec in _records(memory):
        if rec.ts < since or len(items) >= limit:
            break
        item = _describe(memory, rec)
        if item is not None and (not kinds or item.kind in kinds):
            items.append(item)
    return Activity(since=since, items=items)


class MemoryIdArgs(BaseModel):
    id: ChunkId


def restore_memory(call: ToolCall, args: MemoryIdArgs) -> Restored:
    """Bring back a memory that `forget` soft-deleted."""
    return Restored(memory=MemoryItem.of(call.memory.restore(args.id)))


def memory_history(call: ToolCall, args: MemoryIdArgs) -> MemoryHistory:
    """Every logged edit of a memory (before and after), oldest first; an edit id
    can be given to undo_memory."""
    return MemoryHistory(id=args.id, edits=call.memory.history(args.id))


class BuildContextArgs(BaseModel):
    target: Annotated[
        str,
        Field(
            min_length=1,
            max_length=1100,
            description="A memory id, a note path, a [[wikilink]] or a memory:// URI.",
        ),
    ]
    k: Annotated[int, Field(ge=0, le=20, description="How many similar memories.")] = 5


def build_context(call: ToolCall, args: BuildContextArgs) -> BuiltContext:
    """A note or memory with what it links to, what links to it, and the
    memories nearest to it: the context to continue from."""
    return build(call.memory, args.target, args.k)


class RecentActivityArgs(BaseModel):
    days: Annotated[int, Field(ge=1, le=3650, description="How far back.")] = 7
    limit: Annotated[int, Field(ge=1, le=200, description="At most this many.")] = 20
    kinds: Annotated[
        list[Literal["note", "memory", "profile"]],
        Field(max_length=3, description="Only these kinds (default: all)."),
    ] = []


def recent_activity(call: ToolCall, args: RecentActivityArgs) -> Activity:
    """What changed lately in notes, memories and the profile, newest first."""
    return recent(call.memory, args.days, args.limit, list(args.kinds))


class ProfileHistoryArgs(BaseModel):
    item: Annotated[str, Field(min_length=1, max_length=200, description="Item key or name.")]
    resource: Annotated[
        str | None,
        Field(pattern=r"^[a-z0-9_]{1,64}(\.json)?$", description="Only this resource."),
    ] = None


def profile_history(call: ToolCall, args: ProfileHistoryArgs) -> ProfileHistory:
    """Every recorded change to one profile item (who learned or edited it, when,
    before and after), oldest first."""
    entries = call.memory.profile_history(args.item, resource=args.resource)
    return ProfileHistory(item=args.item, entries=entries)


class ProfileLearnArgs(BaseModel):
    text: Annotated[str, Field(min_length=1, max_length=20_000, description="What the user said.")]


async def profile_learn(call: ToolCall, args: ProfileLearnArgs) -> Learned:
    """Learn profile facts from a message with the model (facts, the operations
    it chose, their outcomes); a rejected batch changes nothing."""
    if not args.text.strip():
        raise InvalidInput("the text is empty")
    async with call.model_slot():
        result = await anyio.to_thread.run_sync(
            lambda: call.memory.profile_learn(args.text, llm=call.llm())
        )
    if not result["ok"]:
        raise Conflict(f"batch rejected, nothing changed: {result.get('error')}")
    return Learned.model_validate(result)


TOOLS: list[Tool] = [
    restore_memory,
    memory_history,
    build_context,
    recent_activity,
    profile_history,
    profile_learn,
]
