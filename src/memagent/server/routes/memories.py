"""`/v1/memories`: remember, search, get, list, edit, undo, forget, restore (episodic memory)."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query, status
from pydantic import BaseModel, ConfigDict, Field, field_validator
from starlette.convertors import Convertor, register_url_convertor

from memagent.api import MemoryEdit, MemoryItem, RecallHit
from memagent.core import InvalidInput
from memagent.core.jsontext import JsonObject
from memagent.memory.chunks.model import Chunk, parse_timestamp
from memagent.server._admission import RouteClass, admits
from memagent.server._context import CallerDep

router = APIRouter(prefix="/v1/memories", tags=["memories"])


class _ChunkIdConvertor(Convertor[str]):
    """Only chunk ids match `{memory_id}`, so `/v1/memories/search` never does."""

    regex = r"chunk-\d{8}-[0-9a-f]{12}"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("chunk_id", _ChunkIdConvertor())

MemoryId = Annotated[
    str,
    Path(pattern=r"^chunk-\d{8}-[0-9a-f]{12}$", description="A memory id (chunk-YYYYMMDD-…)."),
]
Tag = Annotated[str, Field(min_length=1, max_length=64)]


class RememberRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    text: str = Field(min_length=1, description="What to remember; long text is split.")
    tags: list[Tag] = Field(default_factory=list, max_length=32)
    type: str | None = Field(
        default=None,
        pattern=r"^(decision|pattern|preference|fact|note)$",
        description="decision, pattern, preference, fact or note (detected when left out).",
    )
    created_at: str | None = Field(
        default=None, max_length=64, description="ISO 8601 time it happened (default: now)."
    )

    @field_validator("created_at")
    @classmethod
    def _timestamp(cls, value: str | None) -> str | None:
        """Out-of-range or malformed times are a 422 here, not an error at write time."""
        if value is not None:
            try:
                parse_timestamp(value)
            except InvalidInput as exc:
                raise ValueError(str(exc)) from exc
        return value


class UpdateRequest(BaseModel):
    """The fields to change; those left out keep their value."""

    model_config = ConfigDict(extra="forbid", strict=True)

    text: str | None = Field(default=None, min_length=1, description="The new text.")
    tags: list[Tag] | None = Field(default=None, max_length=32, description="The new tags.")
    type: str | None = Field(
        default=None,
        pattern=r"^(decision|pattern|preference|fact|note)$",
        description="decision, pattern, preference, fact or note.",
    )


class MemoryHistory(BaseModel):
    id: str
    edits: list[MemoryEdit] = Field(description="Every logged edit, oldest first.")


class MemoryOut(BaseModel):
    """One stored memory (a chunk)."""

    id: str
    content: str
    type: str
    tags: list[str]
    created_at: str | None = None
    deleted: bool = False
    metadata: JsonObject = Field(default_factory=dict)
    links: list[dict[str, str]] = Field(default_factory=list)

    @classmethod
    def of(cls, chunk: Chunk) -> MemoryOut:
        return cls(
            **MemoryItem.of(chunk).model_dump(),
            metadata=chunk.metadata.model_dump(),
            links=[link.model_dump() for link in chunk.links],
        )


class Remembered(BaseModel):
    id: str = Field(description="The first (often the only) memory made.")
    ids: list[str] = Field(description="Every memory made, in order (long text is split).")
    memories: list[MemoryOut]


class SearchResult(BaseModel):
    query: str
    hits: list[RecallHit]


class MemoryListItem(MemoryItem):
    pass


class MemoryList(BaseModel):
    memories: list[MemoryListItem]


class Forgotten(BaseModel):
    id: str
    deleted: bool
    hard: bool


@router.post(
    "", response_model=Remembered, status_code=status.HTTP_201_CREATED, summary="Remember text"
)
@admits(RouteClass.WRITE)
def remember(body: RememberRequest, caller: CallerDep) -> Remembered:
    chunks = caller.memory.remember(
        body.text, tags=body.tags, type=body.type, created_at=body.created_at
    )
    out = [MemoryOut.of(c) for c in chunks]
    return Remembered(id=out[0].id, ids=[m.id for m in out], memories=out)


@router.get("/search", response_model=SearchResult, summary="Recall: hybrid search")
@admits(RouteClass.SEARCH)
def search(
    caller: CallerDep,
    q: Annotated[str, Query(min_length=1, max_length=4000, description="What to look for.")],
    k: Annotated[int, Query(ge=1, le=100, description="How many hits.")] = 10,
    tag: Annotated[list[str] | None, Query(max_length=32, description="Only these tags.")] = None,
    kind: Annotated[
        list[Literal["chunk", "note", "fact"]] | None,
        Query(max_length=3, description="Only these kinds (default: all)."),
    ] = None,
    asked_at: Annotated[
        str | None,
        Query(
            max_length=64,
            description="When the query is asked (YYYY-MM-DD or ISO 8601): 'now' for "
            "relative times ('last week') and recency. Default: now.",
        ),
    ] = None,
) -> SearchResult:
    hits = caller.memory.recall(q, k=k, tags=tag or (), kinds=kind or (), as_of=asked_at)
    return SearchResult(query=q, hits=hits)


@router.get("", response_model=MemoryList, summary="List memories, newest first")
@admits(RouteClass.READ)
def list_memories(
    caller: CallerDep,
    limit: Annotated[int, Query(ge=1, le=1000)] = 50,
    tag: Annotated[list[str] | None, Query(max_length=32)] = None,
    include_deleted: Annotated[bool, Query(description="Also soft-deleted ones.")] = False,
) -> MemoryList:
    rows = caller.memory.memories(limit=limit, tags=tag or (), include_deleted=include_deleted)
    return MemoryList(memories=[MemoryListItem.model_validate(r) for r in rows])


@router.get("/{memory_id:chunk_id}", response_model=MemoryOut, summary="Get one memory")
@admits(RouteClass.READ)
def get_memory(memory_id: MemoryId, caller: CallerDep) -> MemoryOut:
    return MemoryOut.of(caller.memory.get(memory_id))


@router.delete("/{memory_id:chunk_id}", response_model=Forgotten, summary="Forget a memory")
@admits(RouteClass.WRITE)
def forget(
    memory_id: MemoryId,
    caller: CallerDep,
    hard: Annotated[bool, Query(description="Remove the file for good (no restore).")] = False,
) -> Forgotten:
    caller.memory.forget(memory_id, hard=hard)
    return Forgotten(id=memory_id, deleted=True, hard=hard)


@router.patch(
    "/{memory_id:chunk_id}",
    response_model=MemoryOut,
    summary="Edit a memory's text, tags or type (re-indexed, logged, undoable)",
)
@admits(RouteClass.WRITE)
def update(memory_id: MemoryId, body: UpdateRequest, caller: CallerDep) -> MemoryOut:
    chunk = caller.memory.update(memory_id, text=body.text, tags=body.tags, type=body.type)
    return MemoryOut.of(chunk)


@router.get(
    "/{memory_id:chunk_id}/history",
    response_model=MemoryHistory,
    summary="A memory's edits, oldest first",
)
@admits(RouteClass.READ)
def history(memory_id: MemoryId, caller: CallerDep) -> MemoryHistory:
    edits = caller.memory.history(memory_id)
    return MemoryHistory(id=memory_id, edits=edits)


@router.post(
    "/{memory_id:chunk_id}/undo",
    response_model=MemoryEdit,
    summary="Undo a memory's newest edit (or a named one)",
)
@admits(RouteClass.WRITE)
def undo(
    memory_id: MemoryId,
    caller: CallerDep,
    edit: Annotated[
        str | None,
        Query(
            pattern=r"^edit-[0-9a-f]{16}$",
            description="The edit to revert (default: the newest edit not undone).",
        ),
    ] = None,
) -> MemoryEdit:
    return caller.memory.undo(memory_id, edit=edit)


@router.post(
    "/{memory_id:chunk_id}/restore",
    response_model=MemoryOut,
    summary="Restore a soft-deleted memory",
)
@admits(RouteClass.WRITE)
def restore(memory_id: MemoryId, caller: CallerDep) -> MemoryOut:
    return MemoryOut.of(caller.memory.restore(memory_id))
