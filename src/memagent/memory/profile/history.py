"""History and undo, read from the ops log.

Every profile write records its item-level changes (`meta.changes`, each with
`before` and `after`) under a batch id. `history` lists the changes to one item;
`undo` reverts one batch — the newest one not yet undone, or a named one — by
applying the inverse changes, and is itself a logged write (`op: undo`,
`meta.undoes`). Undo checks that each item is still as the batch left it and
refuses (`Conflict`) otherwise, so it never overwrites a later change.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from memagent.core import Conflict, InvalidInput, NotFound, OpRecord
from memagent.memory.profile.handler import find_item, new_batch_id, prune_expired
from memagent.memory.profile.item_keys import match_key
from memagent.memory.profile.models import MAX_KEY_CHARS, Item, ItemChange, Resource, WriteMeta
from memagent.memory.profile.store import ACTOR, ProfileStore

UNDOABLE_OPS = frozenset({"apply", "learn"})
_INVERSE = {"append": "remove", "remove": "append", "update": "update"}


@dataclass(frozen=True)
class HistoryEntry:
    ts: str
    batch: str
    write_op: str
    change: str
    file: str
    path: str
    item: str
    before: Item | None
    after: Item | None
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if v is not None or k in ("before", "after")}
        out["before"] = self.before.to_json() if self.before is not None else None
        out["after"] = self.after.to_json() if self.after is not None else None
        return out


def logged_changes(meta: dict[str, Any]) -> Iterator[ItemChange]:
    """The item-level changes an ops-log record's `meta` holds (an entry that does
    not read as one, from a hand-edited log, is skipped)."""
    changes = meta.get("changes")
    for change in changes if isinstance(changes, list) else []:
        try:
            yield ItemChange.model_validate(change)
        except ValidationError:
            continue


def profile_records(store: ProfileStore) -> list[OpRecord]:
    """Every profile write that carries a batch, oldest first."""
    return [
        r
        for r in store.op_records()
        if r.actor == ACTOR and r.meta and isinstance(r.meta.get("batch"), str)
    ]


def history(store: ProfileStore, item: str, *, file: str | None = None) -> list[HistoryEntry]:
    """Every recorded change to items whose key matches `item`, oldest first."""
    if len(item) > MAX_KEY_CHARS:
        raise InvalidInput(f"item is {len(item)} characters; keys are at most {MAX_KEY_CHARS}")
    key = match_key(item)
    if not key:
        raise InvalidInput(f"item {item!r} has no letters or digits")
    entries: list[HistoryEntry] = []
    for rec in profile_records(store):
        meta = rec.meta or {}
        name = str(meta.get("file", ""))
        if file is not None and name != file:
            continue
        for change in logged_changes(meta):
            if match_key(change.item) != key:
                continue
            entries.append(
                HistoryEntry(
                    ts=rec.ts,
                    batch=str(meta["batch"]),
                    write_op=rec.op,
                    change=change.op,
                    file=name,
                    path=change.path,
                    item=change.item,
                    before=change.before,
                    after=change.after,
                    note=change.note,
                )
            )
    return entries


@dataclass
class UndoResult:
    batch: str
    undoes: str
    written: list[str]
    changes: dict[str, list[ItemChange]]

    def to_json(self) -> dict[str, Any]:
        return {
            "batch": self.batch,
            "undoes": self.undoes,
            "written": self.written,
            "changes": {f: [c.to_json() for c in cs] for f, cs in self.changes.items()},
        }


def _pick(records: list[OpRecord], batch: str | None) -> tuple[str, list[OpRecord]]:
    undone = {str((r.meta or {}).get("undoes")) for r in records if r.op == "undo"}
    if batch is None:
        for rec in reversed(records):
            bid = str((rec.meta or {})["batch"])
            if rec.op in UNDOABLE_OPS and bid not in undone:
                batch = bid
                break
        else:
            raise NotFound("nothing to undo: no profile batch that is not undone already")
    chosen = [r for r in records if (r.meta or {}).get("batch") == batch]
    if not chosen:
        raise NotFound(f"no profile batch {batch!r} in the ops log")
    if batch in undone:
        raise Conflict(f"batch {batch} was undone already")
    if chosen[0].op not in UNDOABLE_OPS:
        raise InvalidInput(f"batch {batch} is a {chosen[0].op!r} write; it cannot be undone")
    return batch, chosen


def _revert(resource: Resource, change: ItemChange, batch: str) -> ItemChange:
    path, key = change.path, change.item
    items = resource.items_at(path)
    if items is None:
        raise Conflict(f"cannot undo {batch}: {resource.name} no longer has section {path!r}")
    j, current = find_item(items, key)
    expected = change.after
    if current != expected:
        raise Conflict(
            f"cannot undo {batch}: item {key!r} in {path} of {resource.name} changed since "
            f"(see `memagent profile history {key}`)"
        )
    before = change.before
    if before is None:
        assert j is not None
        del items[j]
    elif j is None:
        index = change.index
        at = index if index is not None and 0 <= index <= len(items) else len(items)
        items.insert(at, before.model_copy())
    else:
        items[j] = before.model_copy()
    return ItemChange(
        op=_INVERSE.get(change.op, "update"),
        path=path,
        item=key,
        before=expected,
        after=before,
        note=f"undo of {batch}",
    )


def undo(store: ProfileStore, batch: str | None = None) -> UndoResult:
    """Revert one batch (default: the newest one not yet undone), all or nothing."""
    with store.lock():
        target, chosen = _pick(profile_records(store), batch)
        today = store.today()
        resources: dict[str, Resource] = {}
        changes: dict[str, list[ItemChange]] = {}
        for rec in chosen:
            name = str((rec.meta or {})["file"])
            if name not in resources:
                resources[name] = store.load(name)
                changes[name] = []
            for change in reversed(list(logged_changes(rec.meta or {}))):
                if change.op in _INVERSE:
                    changes[name].append(_revert(resources[name], change, target))
        new_batch = new_batch_id()
        written: list[str] = []
        for name, resource in resources.items():
            expired = prune_expired(resource, today)
            meta = WriteMeta(
                batch=new_batch, undoes=target, file=name, changes=changes[name] + expired
            )
            store.write(resource, op="undo", meta=meta)
            written.append(name)
    return UndoResult(new_batch, target, written, changes)
