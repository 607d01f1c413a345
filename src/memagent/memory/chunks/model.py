"""The chunk file schema (pydantic; `Chunk.model_json_schema()` documents it).

One JSON file per chunk at `chunks/YYYY-MM-DD/<id>.json`; the id carries the
date, so a chunk's path follows from its id and never from untrusted input.
"""

from __future__ import annotations

import re
import secrets
from datetime import UTC, datetime
from typing import Literal, TypedDict

from pydantic import BaseModel, ConfigDict, Field, field_validator

from memagent.core import InvalidInput
from memagent.core.jsontext import JsonObject

ChunkType = Literal["decision", "pattern", "preference", "fact", "note"]
CHUNK_TYPES: tuple[str, ...] = ("decision", "pattern", "preference", "fact", "note")
LinkType = Literal["context_of", "follows", "related_to", "supports", "contradicts"]
LINK_TYPES: tuple[str, ...] = ("context_of", "follows", "related_to", "supports", "contradicts")
MANUAL_LINK_TYPES: tuple[str, ...] = ("supports", "contradicts", "related_to")

ID_RE = re.compile(r"^chunk-(\d{8})-[0-9a-f]{12}$")
TAG_RE = re.compile(r"^[^\W_][\w:/.\-]{0,63}$", re.UNICODE)
MAX_TAGS = 32
MAX_SCOPE_CHARS = 200


def new_chunk_id(created: datetime) -> str:
    return f"chunk-{created.astimezone(UTC):%Y%m%d}-{secrets.token_hex(6)}"


def check_id(chunk_id: str) -> str:
    """The id if well-formed; else InvalidInput (ids reach paths, so be strict)."""
    if not isinstance(chunk_id, str) or not ID_RE.match(chunk_id):
        raise InvalidInput(f"not a chunk id: {chunk_id!r} (expected chunk-YYYYMMDD-<12 hex>)")
    return chunk_id


def day_folder(chunk_id: str) -> str:
    d = check_id(chunk_id)[6:14]
    return f"{d[:4]}-{d[4:6]}-{d[6:]}"


def chunk_rel_path(chunk_id: str) -> str:
    """Where the chunk `chunk_id` lives in a memory home (its id says all)."""
    return f"chunks/{day_folder(chunk_id)}/{chunk_id}.json"


MIN_YEAR, MAX_YEAR = 1000, 9999


def parse_timestamp(value: str) -> datetime:
    """ISO 8601 to an aware datetime (naive means UTC); InvalidInput otherwise."""
    try:
        dt = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except (ValueError, AttributeError) as exc:
        raise InvalidInput(f"not an ISO 8601 timestamp: {value!r}") from exc
    dt = dt if dt.tzinfo is not None else dt.replace(tzinfo=UTC)
    try:
        year = dt.astimezone(UTC).year
    except (OverflowError, ValueError):
        year = 0
    if not MIN_YEAR <= year <= MAX_YEAR:
        raise InvalidInput(
            f"timestamp {value!r} is out of range: years {MIN_YEAR} to {MAX_YEAR} (in UTC)"
        )
    return dt


def check_tags(tags: list[str]) -> list[str]:
    out: list[str] = []
    for t in tags:
        if not isinstance(t, str) or not TAG_RE.match(t):
            raise InvalidInput(
                f"bad tag {t!r}: letters, digits and : / . - _ only, up to 64 characters"
            )
        if t.lower() not in out:
            out.append(t.lower())
    if len(out) > MAX_TAGS:
        raise InvalidInput(f"{len(out)} tags; at most {MAX_TAGS}")
    return out


class Link(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: LinkType
    target: str

    @field_validator("target")
    @classmethod
    def _target(cls, v: str) -> str:
        return check_id(v)


class ChunkMetadata(BaseModel):
    model_config = ConfigDict(extra="allow")

    created: str
    modified: str
    accessed: str | None = None
    access_count: int = Field(default=0, ge=0)
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)


class Chunk(BaseModel):
    """One episodic memory. Unknown fields are kept (forward compatibility)."""

    model_config = ConfigDict(extra="allow")

    id: str
    content: str
    tokens: int = Field(ge=0)
    type: ChunkType = "note"
    tags: list[str] = Field(default_factory=list)
    metadata: ChunkMetadata
    links: list[Link] = Field(default_factory=list)
    conversation_id: str | None = None
    user_id: str | None = None
    agent_id: str | None = None
    session_id: str | None = None
    source: JsonObject = Field(default_factory=dict)
    deleted_at: str | None = None

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        return check_id(v)

    @property
    def deleted(self) -> bool:
        return self.deleted_at is not None

    @property
    def rel_path(self) -> str:
        return chunk_rel_path(self.id)


class ChunkDraft(BaseModel):
    """What a caller supplies to create a chunk; the store fills in the rest."""

    model_config = ConfigDict(extra="forbid")

    content: str
    tags: list[str] = Field(default_factory=list)
    type: ChunkType | None = None
    created_at: str | None = None
    conversation_id: str | None = Field(default=None, max_length=MAX_SCOPE_CHARS)
    user_id: str | None = Field(default=None, max_length=MAX_SCOPE_CHARS)
    agent_id: str | None = Field(default=None, max_length=MAX_SCOPE_CHARS)
    session_id: str | None = Field(default=None, max_length=MAX_SCOPE_CHARS)
    source: JsonObject = Field(default_factory=dict)
    links: list[Link] = Field(default_factory=list)


class EditableFields(TypedDict):
    """What an edit may change, as logged before/after (and compared by undo)."""

    content: str
    tags: list[str]
    type: str
    confidence: float
    deleted_at: str | None


def editable_fields(chunk: Chunk) -> EditableFields:
    """The chunk's fields an edit may change."""
    return {
        "content": chunk.content,
        "tags": list(chunk.tags),
        "type": chunk.type,
        "confidence": chunk.metadata.confidence,
        "deleted_at": chunk.deleted_at,
    }
