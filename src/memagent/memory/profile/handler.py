"""The handler: applies operations to resource files, mechanically.

A batch is all or nothing: every operation is checked and applied to in-memory
copies under the home's lock, and only when all of them succeed is any file
written (each file atomically, through `Storage`). One bad operation rejects the
batch and leaves every file as it was. Each written file's ops-log record
carries the item-level changes (`meta.changes`, each with `before` and `after`),
which is what `history` and `undo` read. Expired items are pruned whenever a
file is written.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any, Literal

from memagent.core import InvalidInput, MemagentError, now_iso
from memagent.memory.profile.item_keys import match_key, slug
from memagent.memory.profile.models import Item, ItemChange, Resource, WriteMeta
from memagent.memory.profile.operations import (
    MAX_BATCH_OPERATIONS,
    AnyOp,
    AppendOp,
    NoChangeOp,
    RemoveOp,
    UpdateOp,
    resolve_expiry,
)
from memagent.memory.profile.store import FileTooLarge, ProfileStore

Status = Literal["applied", "no_change", "rejected", "not_applied"]
Change = ItemChange


def new_batch_id() -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    return f"b-{stamp}-{secrets.token_hex(4)}"


@dataclass
class Outcome:
    """What happened to one operation of a batch."""

    index: int
    operation: str
    status: Status
    file: str | None = None
    path: str | None = None
    item: str | None = None
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass
class AppliedOps:
    ok: bool
    outcomes: list[Outcome]
    batch: str | None = None
    written: list[str] = field(default_factory=list)
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "ok": self.ok,
            "batch": self.batch,
            "written": self.written,
            "outcomes": [o.to_json() for o in self.outcomes],
        }
        if self.error:
            out["error"] = self.error
        return out


class OperationRejected(InvalidInput):
    """One operation cannot be applied; the batch it is in changes nothing."""


def find_item(items: list[Item], key: str) -> tuple[int, Item] | tuple[None, None]:
    mk = match_key(key)
    for i, item in enumerate(items):
        if match_key(item.item) == mk:
            return i, item
    return None, None


def default_display(key: str) -> str:
    text = key.replace("_", " ").strip()
    return text[:1].upper() + text[1:]


def prune_expired(resource: Resource, today: date) -> list[Change]:
    """Drop expired items from `resource` in place; the changes that records."""
    changes: list[Change] = []
    for path, items in resource.iter_lists():
        keep: list[Item] = []
        for item in items:
            if item.expired(today):
                changes.append(ItemChange(op="expire", path=path, item=item.item, before=item))
            else:
                keep.append(item)
        items[:] = keep
    return changes


def list_at(resource: Resource, path: str) -> list[Item]:
    items = resource.items_at(path)
    if items is not None:
        return items
    node: Any = resource.sections
    for part in path.split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
        else:
            node = None
            break
    available = ", ".join(resource.paths()) or "none"
    if isinstance(node, dict):
        raise OperationRejected(
            f"path {path!r} in {resource.name} is a group of sections, not a list "
            f"(lists: {available})"
        )
    raise OperationRejected(f"no section {path!r} in {resource.name} (lists: {available})")


class _Batch:
    """Working copies of the resources one batch touches."""

    def __init__(self, store: ProfileStore) -> None:
        self.store = store
        self.today = store.today()
        self.resources: dict[str, Resource] = {}
        self.changes: dict[str, list[Change]] = {}
        self.dirty: set[str] = set()

    def resource(self, name: str) -> Resource:
        if name not in self.resources:
            try:
                resource = self.store.load(name)
            except MemagentError as exc:
                raise OperationRejected(str(exc)) from exc
            self.resources[name] = resource
            self.changes[name] = prune_expired(resource, self.today)
        return self.resources[name]

    def record(self, name: str, change: Change) -> None:
        self.changes[name].append(change)
        self.dirty.add(name)

    def apply(self, i: int, op: AnyOp) -> Outcome:
        if isinstance(op, NoChangeOp):
            return Outcome(i, "no_change", "no_change", op.file, op.path, note=op.reason)
        resource = self.resource(op.file)
        items = list_at(resource, op.path)
        key = slug(op.value.item)
        if not key:
            raise OperationRejected(f"item key {op.value.item!r} has no letters or digits")
        if isinstance(op, AppendOp):
            return self._append(i, op, resource, items, key)
        if isinstance(op, UpdateOp):
            return self._update(i, op, items, key)
        return self._remove(i, op, items, key)

    def _expiry(self, spec: str | None) -> date | None:
        try:
            expiry = resolve_expiry(spec, self.today)
        except ValueError as exc:
            raise OperationRejected(f"expiry {spec!r}: {exc}") from exc
        if expiry is not None and expiry < self.today:
            raise OperationRejected(f"expiry {expiry.isoformat()} is already in the past")
        return expiry

    def _append(
        self, i: int, op: AppendOp, resource: Resource, items: list[Item], key: str
    ) -> Outcome:
        _, existing = find_item(items, key)
        if existing is not None:
            return Outcome(
                i,
                "append",
                "no_change",
                op.file,
                op.path,
                existing.item,
                f"already present as {existing.display!r}",
            )
        item = Item(
            item=key,
            display=op.value.display or default_display(key),
            added=now_iso(),
            expiry=self._expiry(op.expiry),
            note=op.value.note,
        )
        notes: list[str] = []
        for group in resource.metadata.exclusive:
            if op.path not in group:
                continue
            for other in group:
                if other == op.path:
                    continue
                other_items = list_at(resource, other)
                j, old = find_item(other_items, key)
                if j is not None and old is not None:
                    del other_items[j]
                    moved = f"moved to {op.path}"
                    change = ItemChange(
                        op="remove", path=other, item=old.item, index=j, before=old, note=moved
                    )
                    self.record(op.file, change)
                    notes.append(f"moved from {other}")
        items.append(item)
        self.record(op.file, ItemChange(op="append", path=op.path, item=key, after=item))
        return Outcome(i, "append", "applied", op.file, op.path, key, "; ".join(notes) or None)

    def _update(self, i: int, op: UpdateOp, items: list[Item], key: str) -> Outcome:
        j, current = find_item(items, key)
        if j is None or current is None:
            raise OperationRejected(_missing(op.file, op.path, key, items))
        fields: dict[str, Any] = {}
        given = op.value.model_fields_set
        if "display" in given and op.value.display is not None:
            fields["display"] = op.value.display
        if "note" in given:
            fields["note"] = op.value.note
        if "expiry" in op.model_fields_set:
            fields["expiry"] = self._expiry(op.expiry)
        if all(getattr(current, k) == v for k, v in fields.items()):
            return Outcome(
                i, "update", "no_change", op.file, op.path, current.item, "nothing to change"
            )
        updated = current.model_copy(update={**fields, "updated": now_iso()})
        items[j] = Item.model_validate(updated.model_dump())
        change = ItemChange(
            op="update", path=op.path, item=current.item, before=current, after=items[j]
        )
        self.record(op.file, change)
        return Outcome(i, "update", "applied", op.file, op.path, current.item)

    def _remove(self, i: int, op: RemoveOp, items: list[Item], key: str) -> Outcome:
        j, current = find_item(items, key)
        if j is None or current is None:
            raise OperationRejected(_missing(op.file, op.path, key, items))
        del items[j]
        change = ItemChange(op="remove", path=op.path, item=current.item, index=j, before=current)
        self.record(op.file, change)
        return Outcome(i, "remove", "applied", op.file, op.path, current.item)


def _missing(file: str, path: str, key: str, items: list[Item]) -> str:
    keys = ", ".join(i.item for i in items[:20]) or "it is empty"
    more = f" (+{len(items) - 20} more)" if len(items) > 20 else ""
    return f"no item {key!r} in {path} of {file} (items: {keys}{more})"


def apply_operations(
    store: ProfileStore,
    operations: Sequence[AnyOp],
    *,
    op: str = "apply",
    source: str | None = None,
    dry_run: bool = False,
) -> AppliedOps:
    """Apply a batch, all or nothing. A rejected batch returns `ok=False` with
    the reason on the operation at fault and writes nothing; `dry_run` checks
    without writing."""
    if len(operations) > MAX_BATCH_OPERATIONS:
        raise InvalidInput(
            f"{len(operations)} operations in one batch; the limit is {MAX_BATCH_OPERATIONS}"
        )
    with store.lock():
        batch = _Batch(store)
        outcomes: list[Outcome] = []
        for i, operation in enumerate(operations):
            try:
                outcomes.append(batch.apply(i, operation))
            except OperationRejected as exc:
                return _rejected(operations, outcomes, i, str(exc))
        if dry_run or not batch.dirty:
            return AppliedOps(True, outcomes)
        names = sorted(batch.dirty)
        if len(names) > 1:  # a single file is checked by `store.write` before it writes
            try:
                for name in names:
                    store.check_size(store.serialize(batch.resources[name]), name)
            except FileTooLarge as exc:
                return AppliedOps(False, [_not_applied(o) for o in outcomes], error=str(exc))
        batch_id = new_batch_id()
        written: list[str] = []
        for name in names:
            meta = WriteMeta(
                batch=batch_id, file=name, changes=batch.changes[name], source=source or None
            )
            try:
                store.write(batch.resources[name], op=op, meta=meta)
            except FileTooLarge as exc:
                if written:
                    raise
                return AppliedOps(False, [_not_applied(o) for o in outcomes], error=str(exc))
            written.append(name)
        return AppliedOps(True, outcomes, batch_id, written)


def _not_applied(o: Outcome) -> Outcome:
    return Outcome(o.index, o.operation, "not_applied", o.file, o.path, o.item, "batch rejected")


def _rejected(operations: Sequence[AnyOp], done: list[Outcome], at: int, reason: str) -> AppliedOps:
    outcomes = [_not_applied(o) for o in done]
    bad = operations[at]
    outcomes.append(
        Outcome(
            at,
            bad.operation,
            "rejected",
            bad.file,
            bad.path,
            getattr(getattr(bad, "value", None), "item", None),
            reason,
        )
    )
    for j in range(at + 1, len(operations)):
        o = operations[j]
        outcomes.append(
            Outcome(
                j,
                o.operation,
                "not_applied",
                o.file,
                o.path,
                getattr(getattr(o, "value", None), "item", None),
                "batch rejected",
            )
        )
    return AppliedOps(False, outcomes, error=f"operation {at}: {reason}")


def prune(store: ProfileStore) -> dict[str, list[str]]:
    """Remove expired items from every resource; returns file → pruned keys.
    Every file is loaded (and so checked) before any is written."""
    with store.lock():
        today = store.today()
        resources = store.load_all()
        pruned: dict[str, list[Change]] = {}
        for name, resource in resources.items():
            changes = prune_expired(resource, today)
            if changes:
                pruned[name] = changes
        batch_id = new_batch_id()
        for name, changes in pruned.items():
            meta = WriteMeta(batch=batch_id, file=name, changes=changes)
            store.write(resources[name], op="prune", meta=meta)
    return {name: [c.item for c in changes] for name, changes in pruned.items()}
