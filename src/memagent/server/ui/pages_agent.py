"""Status (the HUD's content, the persona and its sliders, which can be changed
here) and Chat (one agent turn, streamed with the same machinery as
`POST /v1/chat/stream`, with the memories it used shown beside the answer)."""

from __future__ import annotations

import hmac
import json
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import quote

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import ValidationError

from memagent.agent.personas import Personas
from memagent.agent.recalled import MemorySourceJson
from memagent.core import InvalidInput, MemagentError
from memagent.core.deadline import Budget, current_budget, within
from memagent.core.oplog import read_ops_before
from memagent.llm import LLMError
from memagent.server._admission import RouteClass, admits
from memagent.server._streams import SSE_MEDIA_TYPE, Emit, events_from_thread, sse_event
from memagent.server.routes.chat import ChatRequest, agent_turn
from memagent.server.ui._base import SECURITY_HEADERS, UiRoute, go, one, page
from memagent.server.ui._hits import is_turn
from memagent.server.ui._session import UiForbidden, Viewer, ViewerDep, checked_form
from memagent.server.ui.pages_profile import internal, sentence

router = APIRouter(prefix="/ui", route_class=UiRoute, include_in_schema=False)

MAX_CHAT_BODY = 64 * 1024


def _personas(who: Viewer) -> Personas:
    """The user's personas; on a shared database the choices live there (as the
    agent reads them), else in the home's files."""
    stores = who.caller.server.stores_for(who.user)
    return Personas(who.caller.home, stores.state if stores.db is not None else None)


def _size(n: int) -> str:
    """`4.0 KB`, `12.3 MB`: a file's size as people read it."""
    size = float(n)
    for unit in ("bytes", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{int(size)} bytes" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} bytes"


@dataclass
class HudView:
    """The Status page's HUD: the model, what memory holds, the index, the last writes."""

    model: str
    memory: dict[str, int]
    index: dict[str, str]
    last_writes: list[dict[str, str]]


def _hud(who: Viewer) -> HudView:
    """The HUD's content (`agent.hud`), read without walking the store: counts come
    from the index (or the database), the last writes from the end of the ops log."""
    memory = who.caller.memory
    home = who.caller.home
    try:
        model = who.caller.server.llm_spec or home.config.llm.model
    except MemagentError as exc:
        model = f"config error: {exc}"
    counts: dict[str, int] = {}
    index: dict[str, str] = {}
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
        index = {"status": "ok", "size": _size(home.layout.index.stat().st_size)}
        records, _ = read_ops_before(home.layout.ops_log, None, limit=60)
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
        records = list(reversed(PgOpsLog(memory.db, memory.user).read(limit=60)))
    writes = [{"ts": r.ts, "sentence": sentence(r)} for r in records if not internal(r)]
    return HudView(model=model, memory=counts, index=index, last_writes=writes[:8])


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


# -- chat -----------------------------------------------------------------------------
# The embedded model loads on its first request (seconds to a minute on a busy
# machine). The page starts the load when Chat opens and says so; a message sent
# meanwhile waits for the load, and the wait is not charged to its turn's time.
_loads: dict[str, threading.Thread] = {}
_load_errors: dict[str, str] = {}
_loads_guard = threading.Lock()


@dataclass(frozen=True)
class ModelState:
    state: Literal["ready", "loading", "idle", "failed"]
    model: str
    detail: str = ""


def model_state(llm: Any) -> ModelState:
    """Whether `llm` can answer now; models with nothing to load always can."""
    name = str(getattr(llm, "name", "model"))
    if not callable(getattr(llm, "load", None)) or getattr(llm, "loaded", True):
        return ModelState("ready", name)
    with _loads_guard:
        thread = _loads.get(name)
        if thread is not None and thread.is_alive():
            return ModelState("loading", name)
        if name in _load_errors:
            return ModelState("failed", name, _load_errors[name])
    return ModelState("idle", name)


def start_loading(llm: Any) -> threading.Thread | None:
    """Load `llm` on a thread of its own (once; again after a failure)."""
    if model_state(llm).state == "ready":
        return None
    name = str(getattr(llm, "name", "model"))

    def load() -> None:
        try:
            llm.load()
        except Exception as exc:  # an LLMError, or llama.cpp refusing the file
            with _loads_guard:
                _load_errors[name] = str(exc) or type(exc).__name__

    with _loads_guard:
        thread = _loads.get(name)
        if thread is None or not thread.is_alive():
            _load_errors.pop(name, None)
            thread = threading.Thread(target=load, name="memagent-ui-model-load", daemon=True)
            _loads[name] = thread
            thread.start()
    return thread


def wait_for_model(llm: Any, on_wait: Callable[[], None]) -> float:
    """Block until `llm` is loaded (starting the load if needed); seconds waited.
    `on_wait` runs about once a second (it raises to stop waiting: client gone)."""
    thread = start_loading(llm)
    started = time.monotonic()
    while thread is not None and thread.is_alive():
        on_wait()
        thread.join(1.0)
    state = model_state(llm)
    if state.state == "failed":
        raise LLMError(f"the model could not be loaded: {state.detail}")
    return time.monotonic() - started


def _state_json(state: ModelState) -> JSONResponse:
    return JSONResponse(
        {"state": state.state, "model": state.model, "detail": state.detail},
        headers=SECURITY_HEADERS,
    )


def _check_header_csrf(request: Request, who: Viewer) -> None:
    sent = request.headers.get("x-csrf-token", "")
    if not sent or not hmac.compare_digest(sent.encode(), who.csrf.encode()):
        raise UiForbidden("the request's security token is missing or stale; reload the page")


@router.get("/chat/model")
@admits(RouteClass.READ)
def chat_model(who: ViewerDep) -> Response:
    """`{state: ready|loading|idle|failed, model, detail}` for the page's notice."""
    return _state_json(model_state(who.caller.server.llm(who.caller.home)))


@router.post("/chat/model")
@admits(RouteClass.MODEL)
def chat_model_load(request: Request, who: ViewerDep) -> Response:
    """Start loading the model (the page calls this when Chat opens)."""
    _check_header_csrf(request, who)
    llm = who.caller.server.llm(who.caller.home)
    start_loading(llm)
    return _state_json(model_state(llm))


def sources_shown(who: Viewer, sources: list[MemorySourceJson]) -> list[dict[str, str]]:
    """The memories a reply used, as a person reads them: their text (clipped), what
    they are, and a link to open them. A memory deleted since is said to be; one
    that would read the same as another (two lines of the profile) is shown once."""
    memory = who.caller.memory
    out: list[dict[str, str]] = []
    for src in sources[:20]:
        sid = str(src.get("id") or "")
        kind = str(src.get("kind") or "")
        if sid.startswith("chunk-"):
            try:
                with memory.guard:
                    chunk = memory.chunks.get(sid, record_access=False)
            except MemagentError:
                out.append({"label": "Memory", "text": "(deleted since)", "href": ""})
                continue
            label = "Chat" if is_turn(chunk.source) else "Memory"
            out.append(
                {"label": label, "text": chunk.content, "href": f"/ui/memories/{quote(sid)}"}
            )
        elif kind == "note" or sid.startswith("note:"):
            path = sid.removeprefix("note:").removeprefix("vault/") or "user.md"
            out.append(
                {
                    "label": "Note",
                    "text": path,
                    "href": "/ui/notes/view?path=" + quote(path, safe="/"),
                }
            )
        elif kind == "fact" or sid.startswith("fact:"):
            item = sid.rsplit(":", 1)[-1] if sid else "your profile"
            out.append({"label": "Profile", "text": item, "href": "/ui/profile"})
        else:
            out.append(
                {"label": kind.capitalize() or "Memory", "text": sid or "memory", "href": ""}
            )
    unique = {tuple(sorted(shown.items())): shown for shown in out}  # e.g. two profile lines
    return list(unique.values())


def _chat_page(request: Request, who: Viewer, **context: Any) -> Response:
    state = model_state(who.caller.server.llm(who.caller.home))
    return page(request, "chat.html", who, title="Chat", active="chat", model=state, **context)


@router.get("/chat")
@admits(RouteClass.READ)
def chat_page(request: Request, who: ViewerDep) -> Response:
    return _chat_page(request, who, reply=None)


@router.post("/chat")
@admits(RouteClass.MODEL)
async def chat_form(request: Request, who: ViewerDep) -> Response:
    """The same turn without JavaScript: the whole reply at once. While the model
    loads, the message is given back with a notice instead of timing out."""
    form = await checked_form(request, who)
    body = _request(
        {
            "message": one(form, "message", limit=16_000),
            **({"conversation_id": c} if (c := one(form, "conversation_id", limit=64)) else {}),
        }
    )
    import anyio.to_thread

    llm = who.caller.server.llm(who.caller.home)
    if model_state(llm).state != "ready":
        start_loading(llm)
        return _chat_page(
            request, who, reply=None, waiting=body.message, conversation=body.conversation_id
        )
    reply = await anyio.to_thread.run_sync(lambda: agent_turn(who.caller, body, None))
    return _chat_page(
        request,
        who,
        message=body.message,
        reply=reply,
        sources=sources_shown(who, reply.memory_sources),
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
    """`status` events while the model loads, `delta` events, then `done` (the reply
    with `memory_sources`, and `sources_shown`: their text and links) or `error`."""
    _check_header_csrf(request, who)
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
        llm = caller.server.llm(caller.home)
        waited = 0.0
        if model_state(llm).state != "ready":
            emit(
                "status",
                {"text": "Loading the model (the first message after a start waits for it)…"},
            )
            waited = wait_for_model(
                llm, lambda: emit("status", {"text": "Still loading the model…"})
            )
        budget = current_budget()
        # The load is the model's start-up, not this turn's work: its wait is added back.
        fresh = Budget(
            end=budget.end + waited if budget.end is not None else None, cancel=budget.cancel
        )
        with within(fresh):
            reply = agent_turn(caller, body, lambda text: emit("delta", {"text": text}))
        emit(
            "done",
            {**reply.model_dump(), "sources_shown": sources_shown(who, reply.memory_sources)},
        )

    async def events() -> AsyncIterator[bytes]:
        async for event, payload in events_from_thread(work, "/ui/chat/stream"):
            yield sse_event(event, payload)

    return StreamingResponse(events(), media_type=SSE_MEDIA_TYPE, headers=SECURITY_HEADERS)
