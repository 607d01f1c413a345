"""Status (the HUD's content, the persona and its sliders, which can be changed
here) and Chat (one agent turn, streamed with the same machinery as
`POST /v1/chat/stream`, with the memories it used shown beside the answer)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import StreamingResponse
from pydantic import ValidationError

from memagent.agent.personas import Personas
from memagent.core import InvalidInput, MemagentError
from memagent.core.oplog import read_ops_before
from memagent.server._admission import RouteClass, admits
from memagent.server.routes.chat import (
    SSE_MEDIA_TYPE,
    ChatRequest,
    Emit,
    _from_thread,
    _sse,
    _turn,
)
from memagent.server.ui._base import SECURITY_HEADERS, UiRoute, go, one, page
from memagent.server.ui._session import UiForbidden, Viewer, ViewerDep, checked_form

router = APIRouter(prefix="/ui", route_class=UiRoute, include_in_schema=False)

MAX_CHAT_BODY = 64 * 1024


def _personas(who: Viewer) -> Personas:
    """The user's personas; on a shared database the choices live there (as the
    agent reads them), else in the home's files."""
    stores = who.caller.server.stores_for(who.user)
    return Personas(who.caller.home, stores.state if stores.db is not None else None)


def _hud(who: Viewer) -> dict[str, Any]:
    """The HUD's content (`agent.hud`), read without walking the store: counts come
    from the index (or the database), the last writes from the end of the ops log."""
    memory = who.caller.memory
    home = who.caller.home
    try:
        model = who.caller.server.llm_spec or home.config.llm.model
    except MemagentError as exc:
        model = f"config error: {exc}"
    counts: dict[str, Any] = {}
    index: dict[str, Any] = {}
    # Counts include soft-deleted memories (they are still stored).
    if memory.db is None:
        with memory.guard:
            idx = memory.chunks.index
            for kind, label in (
                ("chunk", "memories"),
                ("note", "notes"),
                ("fact", "profile facts"),
            ):
                counts[label] = idx.count(kind)
        index = {"status": "ok", "bytes": home.layout.index.stat().st_size}
        records, _ = read_ops_before(home.layout.ops_log, None, limit=8)
    else:
        from memagent.postgres.ops import PgOpsLog

        db, user = memory.db, memory.user
        counts["memories"] = db.run(
            user,
            lambda c: c.execute(
                "SELECT count(*) FROM chunks WHERE user_id = %s", (user,)
            ).fetchone()[0],
        )
        index = {"status": "in the database (PostgreSQL)"}
        records = list(reversed(PgOpsLog(memory.db, memory.user).read(limit=8)))
    return {
        "model": model,
        "memory": counts,
        "index": index,
        "last_writes": [
            {"ts": r.ts, "actor": r.actor, "op": r.op, "path": r.path} for r in records
        ],
    }


@router.get("/status")
@admits(RouteClass.READ)
def status(request: Request, who: ViewerDep) -> Response:
    personas = _personas(who)
    active = personas.active()
    return page(
        request,
        "status.html",
        who,
        title="Status",
        active="status",
        hud=_hud(who),
        persona=active,
        persona_names=personas.names(),
        sliders=personas.sliders(),
    )


@router.post("/status/slider")
@admits(RouteClass.WRITE)
async def set_slider(request: Request, who: ViewerDep) -> Response:
    form = await checked_form(request, who)
    slider = one(form, "slider", limit=64)
    raw = one(form, "value", limit=8)
    try:
        value = int(raw)
    except ValueError as exc:
        raise InvalidInput(f"slider value {raw!r} is not a whole number 0-100") from exc
    _personas(who).set_slider(slider, value)
    return go("/ui/status", f"{slider} set to {value}.")


@router.post("/status/persona")
@admits(RouteClass.WRITE)
async def use_persona(request: Request, who: ViewerDep) -> Response:
    form = await checked_form(request, who)
    name = one(form, "persona", limit=64)
    _personas(who).use(name)
    return go("/ui/status", f"Now using the persona {name}.")


@router.get("/chat")
@admits(RouteClass.READ)
def chat_page(request: Request, who: ViewerDep) -> Response:
    return page(request, "chat.html", who, title="Chat", active="chat", reply=None)


@router.post("/chat")
@admits(RouteClass.MODEL)
async def chat_form(request: Request, who: ViewerDep) -> Response:
    """The same turn without JavaScript: the whole reply at once."""
    form = await checked_form(request, who)
    body = _request(
        {
            "message": one(form, "message", limit=16_000),
            **({"conversation_id": c} if (c := one(form, "conversation_id", limit=64)) else {}),
        }
    )
    import anyio.to_thread

    reply = await anyio.to_thread.run_sync(lambda: _turn(who.caller, body, None))
    return page(
        request,
        "chat.html",
        who,
        title="Chat",
        active="chat",
        message=body.message,
        reply=reply,
    )


def _request(data: Any) -> ChatRequest:
    try:
        return ChatRequest.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        raise InvalidInput(f"{where}: {first.get('msg')}") from None


@router.post("/chat/stream")
@admits(RouteClass.MODEL)
async def chat_stream(request: Request, who: ViewerDep) -> Response:
    """`delta` events, then `done` (the reply with `memory_sources`) or `error`."""
    sent = request.headers.get("x-csrf-token", "")
    import hmac

    if not sent or not hmac.compare_digest(sent.encode(), who.csrf.encode()):
        raise UiForbidden("the request's security token is missing or stale; reload the page")
    raw = await request.body()
    if len(raw) > MAX_CHAT_BODY:
        raise InvalidInput(f"the message is larger than {MAX_CHAT_BODY} bytes")
    try:
        data = json.loads(raw or b"{}")
    except ValueError as exc:
        raise InvalidInput("the body is not JSON") from exc
    body = _request(data)
    caller = who.caller

    def work(emit: Emit) -> None:
        reply = _turn(caller, body, lambda text: emit("delta", {"text": text}))
        emit("done", reply.model_dump())

    async def events() -> AsyncIterator[bytes]:
        async for event, payload in _from_thread(work, "/ui/chat/stream"):
            yield _sse(event, payload)

    return StreamingResponse(events(), media_type=SSE_MEDIA_TYPE, headers=SECURITY_HEADERS)
