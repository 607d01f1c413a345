"""Profile (items with added/expiry dates: edit, set or clear expiry, remove,
history, undo) and Activity (the ops log, newest first, with before → after and
undo for chunk edits and profile batches)."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response

from memagent.api import Memory
from memagent.core import Conflict, InvalidInput, NotFound, OpRecord
from memagent.core.oplog import read_ops_before
from memagent.memory.profile.history import UNDOABLE_OPS
from memagent.server._admission import RouteClass, admits
from memagent.server.ui._base import UiRoute, go, one, page
from memagent.server.ui._session import ViewerDep, checked_form

router = APIRouter(prefix="/ui", route_class=UiRoute, include_in_schema=False)

ACTIVITY_PAGE = 50
NOTE_UNDO_PAGES = 40


@router.get("/profile")
@admits(RouteClass.READ)
def profile(request: Request, who: ViewerDep) -> Response:
    store = who.caller.memory.profile
    today = store.today()
    resources: list[dict[str, Any]] = []
    for name in store.names():
        resource = store.load(name)
        lists = [
            (path, [i for i in items if not i.expired(today)])
            for path, items in resource.iter_lists()
        ]
        resources.append(
            {"name": name, "description": resource.metadata.description, "lists": lists}
        )
    return page(
        request, "profile.html", who, title="Profile", active="profile", resources=resources
    )


@router.post("/profile/item")
@admits(RouteClass.WRITE)
async def profile_item(request: Request, who: ViewerDep) -> Response:
    form = await checked_form(request, who)
    action = one(form, "action", limit=20)
    file = one(form, "file", limit=200)
    path = one(form, "path", limit=300)
    item = one(form, "item", limit=300)
    op: dict[str, Any] = {"file": file, "path": path, "value": {"item": item}}
    if action == "remove":
        op["operation"] = "remove"
    elif action == "clear":
        op.update(operation="update", expiry=None)
    elif action == "save":
        op["operation"] = "update"
        display = one(form, "display", limit=1000).strip()
        if display:
            op["value"]["display"] = display
        expiry = one(form, "expiry", limit=20).strip()
        if expiry:
            try:
                if date.fromisoformat(expiry) < who.caller.memory.profile.today():
                    raise InvalidInput("the expiry date is in the past; remove the item instead")
            except ValueError as exc:
                raise InvalidInput(f"expiry {expiry!r} is not a date (YYYY-MM-DD)") from exc
            op["expiry"] = expiry
    else:
        raise InvalidInput(f"unknown action {action!r}: save, clear or remove")
    result = who.caller.memory.profile_apply([op])
    if not result["ok"]:
        raise Conflict(f"nothing changed: {result.get('error')}")
    return go("/ui/profile", f"{action.capitalize()}d {item}." if action != "save" else "Saved.")


@router.get("/profile/history")
@admits(RouteClass.READ)
def profile_history(
    request: Request,
    who: ViewerDep,
    item: Annotated[str, Query(min_length=1, max_length=300)],
    file: Annotated[str, Query(max_length=200)] = "",
) -> Response:
    entries = who.caller.memory.profile_history(item, resource=file or None)
    return page(
        request,
        "profile_history.html",
        who,
        title=f"History of {item}",
        active="profile",
        item=item,
        entries=list(reversed(entries)),
    )


# -- activity ------------------------------------------------------------------------
def _tail(log: Path, end: int | None, limit: int) -> tuple[list[OpRecord], int]:
    """Newest first, `limit` records ending at stream offset `end` (all segments)."""
    return read_ops_before(log, end, limit=limit)


def _records(memory: Memory, end: int | None) -> tuple[list[OpRecord], int]:
    if memory.db is not None:
        from memagent.postgres.ops import PgOpsLog

        limit = min(max(end or ACTIVITY_PAGE, ACTIVITY_PAGE), 1000)
        rows = list(reversed(PgOpsLog(memory.db, memory.user).read(limit=limit)))
        return rows, (limit + ACTIVITY_PAGE if len(rows) == limit and limit < 1000 else 0)
    return _tail(memory.home.layout.ops_log, end, ACTIVITY_PAGE)


def _entry(rec: OpRecord) -> dict[str, Any]:
    meta = rec.meta or {}
    entry: dict[str, Any] = {
        "ts": rec.ts,
        "actor": rec.actor,
        "op": rec.op,
        "path": rec.path,
        "fields": None,
        "changes": [],
        "text": None,
        "undo": None,
    }
    if isinstance(meta.get("before"), dict) and isinstance(meta.get("after"), dict):
        entry["fields"] = (meta["before"], meta["after"])
        if isinstance(meta.get("edit"), str) and isinstance(meta.get("id"), str):
            entry["undo"] = {"chunk": meta["id"], "edit": meta["edit"]}
    if isinstance(meta.get("changes"), list):
        entry["changes"] = [c for c in meta["changes"] if isinstance(c, dict)][:20]
        if rec.op in UNDOABLE_OPS and isinstance(meta.get("batch"), str):
            entry["undo"] = {"batch": meta["batch"]}
    if "old_content" in meta or "new_content" in meta:
        entry["text"] = (str(meta.get("old_content", "")), str(meta.get("new_content", "")))
        if rec.op == "update" and rec.path.startswith("vault/") and meta.get("new_content"):
            entry["undo"] = {"note": rec.path, "ts": rec.ts}
    return entry


def _find_note_update(memory: Memory, path: str, ts: str) -> OpRecord:
    """The note update logged at `ts` (looked up in the log, never taken from the form)."""
    end: int | None = None
    for _ in range(NOTE_UNDO_PAGES):
        records, end = _records(memory, end)
        for rec in records:
            if rec.ts == ts and rec.path == path and rec.op == "update":
                return rec
        if not end:
            break
    raise NotFound(f"no recent note update of {path} at {ts}")


def undo_note_update(memory: Memory, path: str, ts: str) -> str:
    """Put back the text a note update replaced, if the note still has the new text
    exactly once (else `Conflict`: it changed since, and nothing is overwritten)."""
    rec = _find_note_update(memory, path, ts)
    meta = rec.meta or {}
    old, new = str(meta.get("old_content", "")), str(meta.get("new_content", ""))
    rel = path.removeprefix("vault/")
    vault = memory.vault
    with vault._lock():
        count = vault.read(rel).count(new)
        if count != 1:
            raise Conflict(
                f"cannot undo: {rel} changed since that edit "
                f"(the new text is there {count} times, not once)"
            )
        if old:
            vault.update(rel, new, old)
        else:
            memory.write_note(rel, vault.read(rel).replace(new, "", 1))
    return rel


@router.get("/activity")
@admits(RouteClass.READ)
def activity(
    request: Request,
    who: ViewerDep,
    end: Annotated[int | None, Query(ge=0, le=2**62)] = None,
) -> Response:
    memory = who.caller.memory
    records, more = _records(memory, end)
    return page(
        request,
        "activity.html",
        who,
        title="Activity",
        active="activity",
        entries=[_entry(r) for r in records],
        more=more,
    )


@router.post("/activity/undo")
@admits(RouteClass.WRITE)
async def activity_undo(request: Request, who: ViewerDep) -> Response:
    form = await checked_form(request, who)
    memory = who.caller.memory
    note = one(form, "note", limit=1100)
    if note:
        rel = undo_note_update(memory, note, one(form, "ts", limit=64))
        return go("/ui/activity", f"Undid the edit of {rel}.")
    batch = one(form, "batch", limit=100)
    if batch:
        from memagent.memory.profile import undo

        with memory.guard:
            done = undo(memory.profile, batch)
        return go("/ui/activity", f"Undid profile batch {done.undoes}.")
    chunk = one(form, "chunk", limit=100)
    edit = one(form, "edit", limit=100)
    if not chunk or not edit:
        raise InvalidInput("name a chunk edit or a profile batch to undo")
    result = memory.undo(chunk, edit=edit)
    return go("/ui/activity", f"Undid {result.undoes} on {chunk}.")
