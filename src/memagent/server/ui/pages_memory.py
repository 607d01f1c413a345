"""Search (hybrid recall with score and why) and Memories (chunks by day, links,
edit, soft-delete, restore, undo). Listing is keyset-paginated by creation time:
no page reads more than one page of rows."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import groupby
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request, Response

from memagent.core import InvalidInput, MemagentError, NotFound
from memagent.core.jsontext import JsonObject
from memagent.index import Filters
from memagent.index.roles import said_by_assistant
from memagent.memory.chunks.model import CHUNK_TYPES, parse_timestamp
from memagent.memory.chunks.store import ChunkRow
from memagent.server._admission import RouteClass, admits
from memagent.server.ui._base import UiRoute, go, one, page
from memagent.server.ui._hits import ShownHit, is_turn, ranking, shown
from memagent.server.ui._hits import keyword_only as keyword_only_mode
from memagent.server.ui._session import ViewerDep, checked_form

router = APIRouter(prefix="/ui", route_class=UiRoute, include_in_schema=False)

ChunkId = Annotated[str, Path(pattern=r"^chunk-\d{8}-[0-9a-f]{12}$")]
PAGE_SIZE = 50
Text = Annotated[str, Query(max_length=4000)]
Short = Annotated[str, Query(max_length=200)]


def _day(value: str, what: str) -> float | None:
    if not value:
        return None
    try:
        return parse_timestamp(value).timestamp()
    except InvalidInput as exc:
        raise InvalidInput(f"{what}: not a date (use YYYY-MM-DD)") from exc


def _filters(
    tag: str, since: str, until: str, conversation: str, kind: str | None, type_: str = ""
) -> Filters:
    if type_ and type_ not in CHUNK_TYPES:
        raise InvalidInput(f"type {type_!r}: use one of {', '.join(CHUNK_TYPES)}")
    return Filters(
        kinds=[kind] if kind else None,
        tags=[t.strip().lower() for t in tag.split(",") if t.strip()],
        since=_day(since, "from"),
        until=_day(until, "to"),
        conversation_id=conversation or None,
        type=type_ or None,
    )


@router.get("/search")
@admits(RouteClass.SEARCH)
def search(
    request: Request,
    who: ViewerDep,
    q: Text = "",
    kind: Literal["", "chunk", "note", "fact"] = "",
    tag: Short = "",
    since: Short = "",
    until: Short = "",
    conversation: Short = "",
    k: Annotated[int, Query(ge=1, le=100)] = 20,
) -> Response:
    hits: list[ShownHit] = []
    keyword_only = False
    error = None
    if q.strip():
        memory = who.caller.memory
        try:
            filters = _filters(tag, since, until, conversation, kind or None)
            with memory.guard:
                params = ranking(memory.chunks.search_params())
                found = memory.chunks.recall(q, k=k, filters=filters, params=params)
        except InvalidInput as exc:  # said where the results would be
            error = str(exc)[:1].upper() + str(exc)[1:]
            found = []
        keyword_only = keyword_only_mode(found)
        hits = shown(found, q)
    fragment = request.headers.get("hx-target") == "results"
    return page(
        request,
        "search_results.html" if fragment else "search.html",
        who,
        title="Search",
        active="search",
        q=q,
        kind=kind,
        tag=tag,
        since=since,
        until=until,
        conversation=conversation,
        k=k,
        hits=hits,
        keyword_only=keyword_only,
        error=error,
    )


@router.get("/memories")
@admits(RouteClass.READ)
def memories(
    request: Request,
    who: ViewerDep,
    before: Annotated[str, Query(max_length=64, pattern=r"^(\d+(\.\d+)?:\d{1,6})?$")] = "",
    tag: Short = "",
    type: Short = "",
    since: Short = "",
    until: Short = "",
    conversation: Short = "",
    deleted: bool = False,
) -> Response:
    """Newest first, one page; `before` is `created:skip` of the last row shown."""
    memory = who.caller.memory
    f = _filters(tag, since, until, conversation, None, type)
    f.include_deleted = deleted
    skip = 0
    if before:
        created, _, skipped = before.partition(":")
        cursor = float(created)
        skip = int(skipped)
        # Rows at exactly the cursor's time that were not shown yet come first.
        until_cursor = math.nextafter(cursor, math.inf)
        f.until = min(f.until, until_cursor) if f.until is not None else until_cursor
    with memory.guard:
        rows = memory.chunks.list(f, limit=PAGE_SIZE + skip + 1)
    rows = rows[skip:]
    more = len(rows) > PAGE_SIZE
    rows = rows[:PAGE_SIZE]
    cursor_value = ""
    if more and rows:
        last = rows[-1]["created"]
        same = sum(1 for r in rows if r["created"] == last)
        previous = skip if before and float(before.partition(":")[0]) == last else 0
        cursor_value = f"{last!r}:{same + previous}"
    days = [
        (day, entries(list(items)))
        for day, items in groupby(rows, key=lambda r: (r["created_at"] or "")[:10])
    ]
    filtered = bool(tag or type or since or until or conversation or before)
    return page(
        request,
        "memories.html",
        who,
        title="Memories",
        active="memories",
        days=days,
        next_cursor=cursor_value,
        tag=tag,
        type=type,
        since=since,
        until=until,
        conversation=conversation,
        deleted=deleted,
        filtered=filtered,
        types=CHUNK_TYPES,
    )


@dataclass
class Bubble:
    """What one side said in a stored chat turn."""

    who: str
    side: Literal["me", "them"]
    text: str


@dataclass
class Turn:
    """One stored turn of a chat with the assistant."""

    id: str
    bubbles: list[Bubble]
    deleted: bool


@dataclass
class Entry:
    """One item of a day on the Memories page: a memory's card (`m`), or one
    conversation with the assistant (`chat`: its turns, oldest first)."""

    chat: bool
    m: ChunkRow | None = None
    conversation: str | None = None
    first: str | None = None
    turns: list[Turn] = field(default_factory=list)


def _bubbles(source: JsonObject | None, content: str) -> list[Bubble]:
    """What one stored turn says, as chat bubbles: the user's words, then the
    assistant's reply when the turn stored one (`source.reply`)."""
    src = source or {}
    if said_by_assistant(src):
        return [Bubble(str(src.get("speaker") or "Assistant"), "them", content)]
    you = str(src.get("speaker") or "You")
    bubbles = [Bubble(you, "me", str(src.get("user") or content))]
    reply = src.get("reply")
    if isinstance(reply, str) and reply.strip():
        bubbles.append(Bubble("Assistant", "them", reply))
    return bubbles


def entries(rows: list[ChunkRow]) -> list[Entry]:
    """One day's rows (newest first) as the page lists them: a memory as a card;
    consecutive turns of one chat with the assistant as one conversation, oldest
    turn first, so it reads as the chat it was."""
    out: list[Entry] = []
    for row in rows:
        if not is_turn(row["source"]):
            out.append(Entry(chat=False, m=row))
            continue
        conv = row["conversation_id"]
        turn = Turn(row["id"], _bubbles(row["source"], row["content"]), row["deleted"])
        last = out[-1] if out else None
        if last is not None and last.chat and last.conversation == conv:
            last.turns.insert(0, turn)
            last.first = row["created_at"]
            continue
        out.append(Entry(chat=True, conversation=conv, first=row["created_at"], turns=[turn]))
    return out


@router.post("/memories/new")
@admits(RouteClass.WRITE)
async def memory_new(request: Request, who: ViewerDep) -> Response:
    """Remember what the person typed (split into several memories when long)."""
    form = await checked_form(request, who)
    text = one(form, "text", limit=100_000)
    tags = [t.strip() for t in one(form, "tags", limit=4000).split(",") if t.strip()]
    if not text.strip():
        raise InvalidInput("write something to remember first")
    made = who.caller.memory.remember(text, tags=tags)
    if len(made) == 1:
        return go(f"/ui/memories/{made[0].id}", "Remembered. Search finds it from now on.")
    return go("/ui/memories", f"Remembered, as {len(made)} memories (the text was long).")


@router.get("/memories/{chunk_id}")
@admits(RouteClass.READ)
def memory(request: Request, who: ViewerDep, chunk_id: ChunkId) -> Response:
    mem = who.caller.memory
    with mem.guard:
        try:
            chunk = mem.chunks.get(chunk_id, record_access=False)
        except NotFound:
            raise NotFound(
                "there is no such memory: it was deleted for good, or the link is wrong"
            ) from None
        links = mem.chunks.links(chunk_id)
        texts = _link_texts(mem, links)
    edits = mem.history(chunk_id)
    undoable = next((e for e in reversed(edits) if not e.undone and e.op != "undo"), None)
    return page(
        request,
        "memory.html",
        who,
        title=f"Memory {chunk_id}",
        active="memories",
        chunk=chunk,
        links=links,
        types=CHUNK_TYPES,
        undoable=undoable,
        texts=texts,
        edits=len(edits),
        turn=_bubbles(chunk.model_dump(mode="json")["source"], chunk.content)
        if is_turn(chunk.source)
        else None,
    )


MAX_LINKS_SHOWN = 30


def _link_texts(mem: Any, links: dict[str, list[dict[str, str]]]) -> dict[str, str]:
    """What each linked memory says (a link shows its text, not its id); the
    first `MAX_LINKS_SHOWN`. Under the memory's guard."""
    ids = [x["target"] for x in links["outgoing"]] + [x["source"] for x in links["incoming"]]
    texts: dict[str, str] = {}
    for other in ids[:MAX_LINKS_SHOWN]:
        try:
            texts[other] = mem.chunks.get(other, record_access=False).content
        except MemagentError:
            texts[other] = "(deleted)"
    return texts


@router.get("/memories/{chunk_id}/history")
@admits(RouteClass.READ)
def memory_history(request: Request, who: ViewerDep, chunk_id: ChunkId) -> Response:
    edits = who.caller.memory.history(chunk_id)
    return page(
        request,
        "memory_history.html",
        who,
        title=f"History of {chunk_id}",
        active="memories",
        chunk_id=chunk_id,
        edits=list(reversed(edits)),
    )


@router.post("/memories/{chunk_id}/edit")
@admits(RouteClass.WRITE)
async def memory_edit(request: Request, who: ViewerDep, chunk_id: ChunkId) -> Response:
    form = await checked_form(request, who)
    text = one(form, "text", limit=1_000_000)
    tags = [t.strip() for t in one(form, "tags", limit=4000).split(",") if t.strip()]
    type_ = one(form, "type", limit=20) or None
    if not text.strip():
        raise InvalidInput("the text is empty; to remove a memory, delete it")
    who.caller.memory.update(chunk_id, text=text, tags=tags, type=type_)
    return go(f"/ui/memories/{chunk_id}", "Saved. The memory was re-indexed.")


@router.post("/memories/{chunk_id}/{action}")
@admits(RouteClass.WRITE)
async def memory_action(
    request: Request,
    who: ViewerDep,
    chunk_id: ChunkId,
    action: Literal["delete", "restore", "undo"],
) -> Response:
    await checked_form(request, who)
    memory = who.caller.memory
    if action == "delete":
        memory.forget(chunk_id)
        message = "Deleted (hidden from search). Restore brings it back."
    elif action == "restore":
        memory.restore(chunk_id)
        message = "Restored: search finds it again."
    else:
        memory.undo(chunk_id)
        message = "Undone: the memory is back as it was before its last edit."
    return go(f"/ui/memories/{chunk_id}", message)
