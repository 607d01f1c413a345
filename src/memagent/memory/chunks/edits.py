"""Edit history and undo of chunks, read from the ops log.

Every edit of a chunk (`update`, `soft_delete`, `restore`, and `undo` itself)
is logged with an edit id and the editable fields before and after
(`editable_fields`). `history` lists one chunk's edits; `undo` reverts one
edit — the chunk's newest one not yet undone, or a named one — and refuses
(`Conflict`) when the chunk changed since, so it never overwrites a later edit.
An undo is itself an edit (op `undo`, `meta.undoes`), so it can be undone too.
"""

from __future__ import annotations

import re
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol

from memagent.core import Conflict, InvalidInput, NotFound, OpRecord
from memagent.core.jsontext import JsonObject
from memagent.memory.chunks.model import (
    Chunk,
    ChunkMetadata,
    EditableFields,
    check_id,
    check_tags,
    editable_fields,
)


class EditableStore(Protocol):
    """What history and undo need of a chunk store (`ChunkStore` on either backend)."""

    last_edit: str | None

    def get(self, chunk_id: str, *, record_access: bool = True) -> Chunk: ...

    def lock(self) -> AbstractContextManager[None]: ...

    def op_records(self, mentioning: str | None = None) -> list[OpRecord]: ...

    def save_edit(
        self, chunk: Chunk, before: EditableFields, *, op: str, undoes: str | None = None
    ) -> Chunk: ...


EDIT_OPS = frozenset({"update", "soft_delete", "restore", "undo"})
EDIT_ID_RE = re.compile(r"^edit-[0-9a-f]{16}$")


@dataclass(frozen=True)
class ChunkEdit:
    """One logged edit of a chunk."""

    ts: str
    edit: str
    op: str
    chunk_id: str
    before: JsonObject
    """The editable fields before, as logged (`EditableFields` when memagent wrote it)."""
    after: JsonObject
    undoes: str | None = None
    undone: bool = False

    def to_json(self) -> JsonObject:
        return dict(self.__dict__)


def check_edit_id(edit: str) -> str:
    if not isinstance(edit, str) or not EDIT_ID_RE.match(edit):
        raise InvalidInput(f"not an edit id: {edit!r} (expected edit-<16 hex>)")
    return edit


def edits_of(records: list[OpRecord], chunk_id: str | None = None) -> list[ChunkEdit]:
    """The edits among `records` (of one chunk when given), oldest first."""
    raw: list[ChunkEdit] = []
    for rec in records:
        meta = rec.meta or {}
        if rec.op not in EDIT_OPS or not isinstance(meta.get("edit"), str):
            continue
        if chunk_id is not None and meta.get("id") != chunk_id:
            continue
        before, after = meta.get("before"), meta.get("after")
        if not isinstance(before, dict) or not isinstance(after, dict):
            continue
        undoes = meta.get("undoes")
        raw.append(
            ChunkEdit(
                ts=rec.ts,
                edit=meta["edit"],
                op=rec.op,
                chunk_id=str(meta.get("id")),
                before=before,
                after=after,
                undoes=undoes if isinstance(undoes, str) else None,
            )
        )
    undone = {e.undoes for e in raw if e.undoes}
    return [ChunkEdit(**{**e.__dict__, "undone": True}) if e.edit in undone else e for e in raw]


def history(store: EditableStore, chunk_id: str) -> list[ChunkEdit]:
    """Every logged edit of one chunk, oldest first."""
    check_id(chunk_id)
    store.get(chunk_id, record_access=False)
    return edits_of(store.op_records(mentioning=chunk_id), chunk_id)


def _apply(chunk: Chunk, fields: JsonObject) -> Chunk:
    chunk.content = str(fields["content"])
    chunk.tags = check_tags(list(fields["tags"]))
    data = chunk.model_dump()
    data["type"] = fields["type"]
    data["deleted_at"] = fields["deleted_at"]
    data["metadata"] = ChunkMetadata.model_validate(
        {**chunk.metadata.model_dump(), "confidence": fields["confidence"]}
    ).model_dump()
    return Chunk.model_validate(data)


def undo(
    store: EditableStore, chunk_id: str | None = None, *, edit: str | None = None
) -> ChunkEdit:
    """Revert one edit: `edit` by id, else `chunk_id`'s newest edit not yet undone.

    Returns the undo (itself an edit). `Conflict` when the chunk changed since the
    edit, or the edit was undone already; `NotFound` when there is nothing to undo.
    """
    if chunk_id is None and edit is None:
        raise InvalidInput("name a chunk id or an edit id to undo")
    if chunk_id is not None:
        check_id(chunk_id)
    if edit is not None:
        check_edit_id(edit)
    with store.lock():
        edits = edits_of(store.op_records(mentioning=chunk_id or edit), chunk_id)
        if edit is not None:
            chosen = next((e for e in edits if e.edit == edit), None)
            if chosen is None:
                raise NotFound(f"no chunk edit {edit}")
        else:
            chosen = next((e for e in reversed(edits) if not e.undone and e.op != "undo"), None)
            if chosen is None:
                raise NotFound(f"nothing to undo for {chunk_id}: no edit that is not undone")
        if chosen.undone:
            raise Conflict(f"edit {chosen.edit} was undone already")
        chunk = store.get(chosen.chunk_id, record_access=False)
        now = editable_fields(chunk)
        if now != chosen.after:
            raise Conflict(
                f"cannot undo {chosen.edit}: chunk {chosen.chunk_id} changed since "
                f"(see `memagent chunks history {chosen.chunk_id}`)"
            )
        try:
            reverted = _apply(chunk, chosen.before)
        except (KeyError, TypeError, ValueError) as exc:
            raise InvalidInput(f"edit {chosen.edit} has an unreadable log record") from exc
        store.save_edit(reverted, now, op="undo", undoes=chosen.edit)
        return ChunkEdit(
            ts=reverted.metadata.modified,
            edit=store.last_edit or "",
            op="undo",
            chunk_id=chosen.chunk_id,
            before=dict(now),
            after=dict(editable_fields(reverted)),
            undoes=chosen.edit,
        )
