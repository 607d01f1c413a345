"""Profile (items with added/expiry dates: edit, set or clear expiry, remove,
history, undo) and Activity (the ops log, newest first, with before → after and
undo for chunk edits and profile batches)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from memagent.api import Memory
from memagent.core import Conflict, InvalidInput, MemagentError, NotFound, OpRecord
from memagent.core.jsontext import JsonObject
from memagent.core.oplog import read_ops_before
from memagent.memory.profile.history import UNDOABLE_OPS
from memagent.memory.profile.models import Item
from memagent.server._admission import RouteClass, admits
from memagent.server.ui._base import UiRoute, go, one, page
from memagent.server.ui._session import ViewerDep, checked_form

router = APIRouter(prefix="/ui", route_class=UiRoute, include_in_schema=False)

ACTIVITY_PAGE = 50
NOTE_UNDO_PAGES = 40


@dataclass
class ResourceView:
    """One profile resource as the Profile page lists it: its items not expired."""

    name: str
    description: str
    lists: list[tuple[str, list[Item]]]


@router.get("/profile")
@admits(RouteClass.READ)
def profile(request: Request, who: ViewerDep) -> Response:
    store = who.caller.memory.profile
    today = store.today()
    resources: list[ResourceView] = []
    for name in store.names():
        resource = store.load(name)
        lists = [
            (path, [i for i in items if not i.expired(today)])
            for path, items in resource.iter_lists()
        ]
        resources.append(ResourceView(name, resource.metadata.description, lists))
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
    op: JsonObject = {"file": file, "path": path, "value": {"item": item}}
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


# Bookkeeping a person did not do and need not read: traces of agent turns, the
# profile-learning queue, the HUD file, saved conversations, access counts,
# automatic links, web-page sessions, sandbox state.
INTERNAL_OPS = frozenset(
    {"trace", "learn_queue", "learn_done", "hud.update", "conversation.save", "access",
     "link", "session", "sandbox.save", "mkdir", "snapshot", "state"}
)  # fmt: skip
INTERNAL_PREFIXES = ("state/", "gauges/", "log/", "traces/")
# Who did it, when a person or the assistant did; other writers (the stores
# themselves, the Python API) are left out and the line is said in the passive.
WHO = {
    "ui": "you",
    "cli": "you",
    "user": "you",
    "agent": "the assistant",
    "memagent": "the assistant",
    "server": "the assistant",
    "vault-python": "the assistant",
    "sandbox": "the assistant",
}
INTERNAL_ACTORS = frozenset({"init", "hud", "keys"})
VERBS = {
    "create": "added",
    "update": "changed",
    "soft_delete": "deleted",
    "delete": "deleted",
    "restore": "restored",
    "undo": "undone",
    "import": "imported",
    "apply": "changed",
    "learn": "learned from a chat",
    "prune": "cleared of expired items",
    "expire": "cleared of expired items",
    "persona.use": "switched",
    "persona.set": "changed",
    "export": "exported",
}


def _thing(path: str) -> str:
    """What a logged path is, in words: a memory, a note (named), a profile file."""
    if path.startswith("chunks/"):
        return "a memory"
    if path.startswith("vault/"):
        return "the note " + path.removeprefix("vault/")
    if path.startswith("profile/"):
        name = path.removeprefix("profile/").removesuffix(".json").removeprefix("resource_")
        return "the profile (" + name.replace("_", " ") + ")"
    if path.startswith(("personalities/", "sliders/")):
        return "the persona"
    return path or "memory"


def internal(rec: OpRecord) -> bool:
    """Bookkeeping rather than a change to what is remembered (hidden by default):
    internal files, and what setting up a home writes."""
    return (
        rec.op in INTERNAL_OPS
        or rec.actor in INTERNAL_ACTORS
        or rec.path.startswith(INTERNAL_PREFIXES)
    )


def sentence(rec: OpRecord) -> str:
    """One line a person reads: what changed, and who changed it when it was a
    person or the assistant ("The note user.md was changed by you")."""
    verb = VERBS.get(rec.op, rec.op.replace("_", " ").replace(".", " "))
    thing = _thing(rec.path)
    line = f"{thing[0].upper()}{thing[1:]} was {verb}"
    who = WHO.get(rec.actor)
    return f"{line} by {who}" if who is not None else line


def _link(path: str) -> str:
    """Where the page shows the thing a logged path is ("" when it shows none)."""
    from urllib.parse import quote

    if path.startswith("chunks/") and path.endswith(".json"):
        return "/ui/memories/" + quote(path.rsplit("/", 1)[-1].removesuffix(".json"), safe="")
    if path.startswith("vault/") and path.endswith(".md"):
        return "/ui/notes/view?path=" + quote(path.removeprefix("vault/"), safe="/")
    if path.startswith("profile/"):
        return "/ui/profile"
    return ""


@dataclass
class Subject:
    """What a memory an activity entry touched says now."""

    text: str
    chat: bool


def _subjects(memory: Memory, records: list[OpRecord]) -> dict[str, Subject]:
    """What each memory the records touch says now (an entry shows the memory, not
    only "a memory was added"); deleted ones are left out."""
    from memagent.server.ui._hits import is_turn

    texts: dict[str, Subject] = {}
    for rec in records:
        link = _link(rec.path)
        if not link.startswith("/ui/memories/") or rec.path in texts:
            continue
        try:
            with memory.guard:
                chunk = memory.chunks.get(link.rsplit("/", 1)[-1], record_access=False)
        except MemagentError:
            continue
        texts[rec.path] = Subject(chunk.content, is_turn(chunk.source))
    return texts


@dataclass
class ActivityEntry:
    """One ops-log record as the Activity page shows it, with its undo when it has one."""

    link: str
    ts: str
    actor: str
    op: str
    path: str
    sentence: str
    internal: bool
    fields: tuple[JsonObject, JsonObject] | None = None
    changes: list[JsonObject] = field(default_factory=list)
    text: tuple[str, str] | None = None
    undo: dict[str, str] | None = None


def _entry(rec: OpRecord) -> ActivityEntry:
    meta = rec.meta or {}
    entry = ActivityEntry(
        link=_link(rec.path),
        ts=rec.ts,
        actor=rec.actor,
        op=rec.op,
        path=rec.path,
        sentence=sentence(rec),
        internal=internal(rec),
    )
    if isinstance(meta.get("before"), dict) and isinstance(meta.get("after"), dict):
        entry.fields = (meta["before"], meta["after"])
        if isinstance(meta.get("edit"), str) and isinstance(meta.get("id"), str):
            entry.undo = {"chunk": meta["id"], "edit": meta["edit"]}
    if isinstance(meta.get("changes"), list):
        entry.changes = [c for c in meta["changes"] if isinstance(c, dict)][:20]
        if rec.op in UNDOABLE_OPS and isinstance(meta.get("batch"), str):
            entry.undo = {"batch": meta["batch"]}
    if "old_content" in meta or "new_content" in meta:
        entry.text = (str(meta.get("old_content", "")), str(meta.get("new_content", "")))
        if rec.op == "update" and rec.path.startswith("vault/") and meta.get("new_content"):
            entry.undo = {"note": rec.path, "ts": rec.ts}
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
    with vault.lock():
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
    everything: Annotated[bool, Query(alias="all")] = False,
) -> Response:
    """Changes to what is remembered, newest first; `all=true` adds the bookkeeping."""
    memory = who.caller.memory
    records, more = _records(memory, end)
    shown = [r for r in records if everything or not internal(r)]
    return page(
        request,
        "activity.html",
        who,
        title="Activity",
        active="activity",
        entries=[_entry(r) for r in shown],
        subjects=_subjects(memory, shown),
        hidden=len(records) - len(shown),
        everything=everything,
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
            undo(memory.profile, batch)
        return go("/ui/activity", "Undone: the profile is back as it was before that change.")
    chunk = one(form, "chunk", limit=100)
    edit = one(form, "edit", limit=100)
    if not chunk or not edit:
        raise InvalidInput("name a chunk edit or a profile batch to undo")
    memory.undo(chunk, edit=edit)
    return go("/ui/activity", "Undone: the memory is back as it was before that edit.")
