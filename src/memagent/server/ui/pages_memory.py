"""Search (hybrid recall with score and why) and Memories (chunks by day, links,
edit, soft-delete, restore, undo). Listing is keyset-paginated by creation time:
no page reads more than one page of rows."""

from __future__ import annotations

import math
from itertools import groupby
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request, Response

from memagent.core import InvalidInput
from memagent.index import Filters
from memagent.memory.chunks.model import CHUNK_TYPES, parse_timestamp
from memagent.server._admission import RouteClass, admits
from memagent.server.ui._base import UiRoute, go, one, page
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


def _why(why: dict[str, Any]) -> str:
    """A short human summary of a hit's `why` (ranks, raw scores, boosts, mode)."""
    parts: list[str] = []
    keyword, dense = why.get("keyword"), why.get("dense")
    if isinstance(keyword, dict):
        parts.append(f"keyword match #{keyword.get('rank')} (bm25 {keyword.get('bm25')})")
    if isinstance(dense, dict):
        parts.append(f"meaning match #{dense.get('rank')} (cosine {dense.get('cosine')})")
    boosts = why.get("boosts")
    if isinstance(boosts, dict):
        parts += [f"{name} boost {value}" for name, value in boosts.items()]
    mode = why.get("mode")
    return "; ".join(parts or ["matched"]) + (f" [{mode}]" if mode else "")


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
    hits: list[dict[str, Any]] = []
    if q.strip():
        memory = who.caller.memory
        filters = _filters(tag, since, until, conversation, kind or None)
        with memory.guard:
            found = memory.chunks.recall(q, k=k, filters=filters)
        for h in found:
            data = h.to_json()
            data["why_text"] = _why(data.get("why") or {})
            hits.append(data)
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
        (day, list(items))
        for day, items in groupby(rows, key=lambda r: (r["created_at"] or "")[:10])
    ]
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
        types=CHUNK_TYPES,
    )


@router.get("/memories/{chunk_id}")
@admits(RouteClass.READ)
def memory(request: Request, who: ViewerDep, chunk_id: ChunkId) -> Response:
    mem = who.caller.memory
    with mem.guard:
        chunk = mem.chunks.get(chunk_id, record_access=False)
        links = mem.chunks.links(chunk_id)
    return page(
        request,
        "memory.html",
        who,
        title=f"Memory {chunk_id}",
        active="memories",
        chunk=chunk,
        links=links,
        types=CHUNK_TYPES,
    )


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
        message = "Restored."
    else:
        done = memory.undo(chunk_id)
        message = f"Undid {done.undoes}."
    return go(f"/ui/memories/{chunk_id}", message)
