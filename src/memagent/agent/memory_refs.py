"""What `/forget`, `/edit` and `/undo` do to each kind of id that `/recall` prints.

`/recall` shows three kinds of ids, and each command works on all of them:

- a memory, `chunk-YYYYMMDD-…`: forget is a soft delete, edit changes its text,
  undo reverts its newest edit (a forget included) — the chunk store's own
  logged, undoable operations;
- a profile fact, `fact:<resource>:<section>:<list>:<item>`: forget is a
  `remove` operation, edit an `update` of its text, undo reverts the newest
  profile batch that changed that item (`memory.profile` history);
- a note, `note:vault/<path>`: forget deletes the note (its text stays in the
  ops log), edit replaces its text, undo reverts the note's newest logged write
  (a delete, update, append or create), refused when the note changed since.

Every write goes through the stores' own functions under the memory home's lock;
each answer is one sentence for the person chatting, and a refusal raises a
`MemagentError` whose message says why (nothing written).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from memagent.core import Conflict, InvalidInput, NotFound, sha256_hex

if TYPE_CHECKING:
    from memagent.agent.memory import MemoryAccess
    from memagent.core.oplog import OpRecord
    from memagent.memory.chunks import ChunkStore

MAX_ID_CHARS = 600
MAX_EDIT_CHARS = 20_000
NOTE_HISTORY = 200
"""Ops records of one note read back to find its newest write."""

_CHUNK = re.compile(r"^chunk-\d{8}-[0-9a-f]{12}$")


@dataclass(frozen=True)
class MemoryRef:
    """One id as `/recall` prints it, taken apart."""

    kind: Literal["memory", "fact", "note"]
    id: str
    path: str = ""
    """note: the vault-relative path; fact: the profile resource id."""
    section: str = ""
    """fact: the dotted list path inside the resource (e.g. food.likes)."""
    item: str = ""
    """fact: the item's key."""


def parse_ref(raw: str) -> MemoryRef:
    """`raw` as a memory, fact or note id; `InvalidInput` saying what ids look like."""
    text = raw.strip()
    if len(text) > MAX_ID_CHARS:
        raise InvalidInput(f"that id is {len(text)} characters; ids from /recall are shorter")
    if _CHUNK.match(text):
        return MemoryRef("memory", text)
    if text.startswith("note:vault/") and len(text) > len("note:vault/"):
        return MemoryRef("note", text, path=text.removeprefix("note:vault/"))
    if text.startswith("fact:"):
        parts = text.split(":", 4)
        if len(parts) == 5 and all(parts[1:]):
            _, resource, section, list_name, item = parts
            where = f"{section}.{list_name}"
            return MemoryRef("fact", text, path=resource, section=where, item=item)
    shown = text if len(text) <= 60 else text[:59] + "…"
    raise InvalidInput(
        f"'{shown}' is not an id from /recall (they look like chunk-20250101-0123456789ab, "
        "note:vault/user.md or fact:user_food_prefs:food:likes:sushi)"
    )


def _check_text(text: str) -> str:
    text = text.strip()
    if not text:
        raise InvalidInput("give the new text after the id")
    if len(text) > MAX_EDIT_CHARS:
        raise InvalidInput(f"the new text is {len(text)} characters; at most {MAX_EDIT_CHARS}")
    return text


def _short(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# -- memories (chunks) ------------------------------------------------------------------
def _chunks(memory: MemoryAccess) -> ChunkStore:
    store = memory.chunks
    if store is None:
        raise NotFound(f"episodic memory is unavailable: {memory.chunks_error}")
    return store


# -- facts ----------------------------------------------------------------------------------
def _apply_fact(memory: MemoryAccess, ref: MemoryRef, operation: Mapping[str, object]) -> bool:
    """Apply one profile operation on the fact; whether it changed anything."""
    from pydantic import ValidationError

    from memagent.memory.profile import apply_operations, parse_operation
    from memagent.memory.profile.pipeline import describe_error

    store = memory.stores.profile
    op = {"file": store.name_for(ref.path), "path": ref.section, **operation}
    try:
        parsed = parse_operation(op)
    except ValidationError as exc:
        raise InvalidInput(f"{ref.id[:80]}: {describe_error(exc)}") from None
    result = apply_operations(store, [parsed], op="apply", source="chat")
    if not result.ok:
        raise Conflict(f"nothing changed: {result.error}")
    return bool(result.written)


def _undo_fact(memory: MemoryAccess, ref: MemoryRef) -> str:
    from memagent.memory.profile import history, undo
    from memagent.memory.profile.history import UNDOABLE_OPS

    store = memory.stores.profile
    entries = history(store, ref.item, file=store.name_for(ref.path))
    if not entries:
        raise NotFound(f"nothing to undo: no recorded change to {ref.id}")
    last = entries[-1]
    if last.write_op not in UNDOABLE_OPS:
        raise Conflict(f"nothing to undo: the last change to {ref.id} was itself an undo")
    done = undo(store, last.batch)
    count = sum(len(c) for c in done.changes.values())
    return f"Undid the last change to {ref.id} (profile batch {done.undoes}, {count} change(s))."


# -- notes ------------------------------------------------------------------------------------
def _note_records(memory: MemoryAccess, rel: str) -> list[OpRecord]:
    """The note's logged writes, oldest first (files or the database); the starter
    files `memagent init` wrote are not changes to undo."""
    path = f"vault/{rel}"
    if memory.stores.db is not None:
        from memagent.postgres.ops import PgOpsLog

        rows = PgOpsLog(memory.stores.db, memory.stores.user).read(
            path_prefix=path, limit=NOTE_HISTORY
        )
    else:
        rows = memory.home.ops(limit=NOTE_HISTORY, path_prefix=path)
    return [
        r for r in rows if r.path == path and r.op not in ("mkdir", "rmdir") and r.actor != "init"
    ]


def _undo_note(memory: MemoryAccess, ref: MemoryRef) -> str:
    vault = memory.stores.vault
    with vault.lock():
        rel = vault.locate(ref.path).rel
        records = _note_records(memory, rel)
        if not records:
            raise NotFound(f"nothing to undo: no recorded change to note {rel}")
        rec = records[-1]
        meta = rec.meta or {}
        now = vault.read(rel) if vault.exists(rel) else None
        if now is not None and rec.after is not None and sha256_hex(now.encode()) != rec.after:
            raise Conflict(f"cannot undo: note {rel} changed since its last logged write")
        if rec.op == "delete":
            if now is not None:
                raise Conflict(f"cannot undo the delete: note {rel} exists again")
            content = meta.get("content")
            if not isinstance(content, str):
                raise NotFound(f"cannot undo: the log does not hold the deleted text of {rel}")
            vault.create(rel, content)
            return f"Brought back note {rel}."
        if now is None:
            raise NotFound(f"cannot undo: note {rel} does not exist")
        if rec.op == "create":
            vault.delete(rel)
            return f"Undid the creation of note {rel} (deleted it)."
        old, new = meta.get("old_content"), meta.get("new_content")
        if rec.op == "update" and isinstance(old, str) and isinstance(new, str) and new:
            if now.count(new) != 1:
                raise Conflict(f"cannot undo: note {rel} changed since that edit")
            vault.update(rel, new, old)
            return f"Undid the last edit of note {rel}."
        added = meta.get("appended")
        if rec.op == "append" and isinstance(added, str) and added and now.endswith(added):
            kept = now[: -len(added)]
            if kept.endswith("\n") and sha256_hex(kept[:-1].encode()) == rec.before:
                kept = kept[:-1]  # the line break the append put before its text
            vault.update(rel, now, kept)
            return f"Undid the last addition to note {rel}."
        raise Conflict(f"cannot undo the last change to note {rel} ({rec.op})")


# -- the commands --------------------------------------------------------------------------
def forget(memory: MemoryAccess, raw: str) -> str:
    ref = parse_ref(raw)
    if ref.kind == "memory":
        memory.forget(ref.id)
        return f"Forgot {ref.id} (/undo {ref.id} brings it back)."
    if ref.kind == "fact":
        _apply_fact(memory, ref, {"operation": "remove", "value": {"item": ref.item}})
        return f"Removed {ref.id} from your profile (/undo {ref.id} brings it back)."
    result = memory.stores.vault.delete(ref.path)
    return f"Deleted note {result.path} (/undo {ref.id} brings it back)."


def edit(memory: MemoryAccess, raw: str, text: str) -> str:
    ref = parse_ref(raw)
    new = _check_text(text)
    if ref.kind == "memory":
        store = _chunks(memory)
        with memory.stores.lock:
            store.update(ref.id, content=new)
        return f"Changed {ref.id} to: {_short(new)} (/undo {ref.id} reverts it)."
    if ref.kind == "fact":
        change = {"operation": "update", "value": {"item": ref.item, "display": new}}
        if not _apply_fact(memory, ref, change):
            return f"{ref.id} already says that; nothing changed."
        return f"Changed {ref.id} to: {_short(new)} (/undo {ref.id} reverts it)."
    vault = memory.stores.vault
    with vault.lock():
        old = vault.read(ref.path)
        if old == new:
            return f"Note {vault.locate(ref.path).rel} already says that; nothing changed."
        vault.update(ref.path, old, new)
    return f"Replaced the text of note {vault.locate(ref.path).rel} (/undo {ref.id} reverts it)."


def undo(memory: MemoryAccess, raw: str) -> str:
    ref = parse_ref(raw)
    if ref.kind == "memory":
        store = _chunks(memory)
        with memory.stores.lock:
            done = store.undo(ref.id)
        before, after = done.before, done.after
        if before.get("deleted_at") and not after.get("deleted_at"):
            return f"Brought back {ref.id}: {_short(str(after.get('content', '')))}"
        if after.get("deleted_at") and not before.get("deleted_at"):
            return f"Undid the restore of {ref.id}: it is forgotten again."
        return f"Undid the last edit of {ref.id}; it reads: {_short(str(after.get('content')))}"
    if ref.kind == "fact":
        return _undo_fact(memory, ref)
    return _undo_note(memory, ref)


__all__ = ["MemoryRef", "edit", "forget", "parse_ref", "undo"]
