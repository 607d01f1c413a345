"""The FastAPI application: `create_app(root)` serves every user under `root`.

Middleware order (outermost first): admission (requests in flight per user and
per route class, see `_admission`), request timeout (one deadline per request,
which long work checks, see `memagent.core.deadline`), body size limit, then the
routes; authentication and the per-key rate limit are an (async) dependency of
every `/v1` route. Every error is a problem document (see `_problems`).
"""

from __future__ import annotations

import contextlib
import os
import types
import typing
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel, ConfigDict, Field

from memagent.core import resolve_home
from memagent.core.config import QuotasConfig
from memagent.core.jsontext import JsonObject
from memagent.llm import LLM
from memagent.server._admission import AdmissionLimits, AdmissionMiddleware, RouteClass, admits
from memagent.server._context import ServerRoot
from memagent.server._limits import BodyLimitMiddleware, TimeoutMiddleware
from memagent.server._problems import (
    PROBLEM_TYPE,
    Problem,
    ProblemError,
    install_problem_handlers,
    problem_responses,
)

API_VERSION = "1"
WORKER_THREADS = 40
"""anyio's default thread limit, which sync routes and dependencies share."""


class ServerSettings(BaseModel):
    """Limits of one server process (the `memagent serve` options)."""

    model_config = ConfigDict(extra="forbid")

    max_body_bytes: int = Field(default=1024 * 1024, gt=0)
    rate_per_second: float = Field(default=50.0, gt=0)
    rate_burst: int = Field(default=100, gt=0)
    request_timeout_s: float = Field(default=30.0, gt=0)
    mcp: bool = True
    ui: bool = True
    """Serve the web page at `/ui` (sign-in with an API key)."""
    embeddings: bool | None = None
    """None follows each user home's config (`embeddings.enabled`); False: keyword-only."""
    llm: str | None = None
    """LLM spec for profile learning (`embedded`, `openai:NAME`, `scripted:PATH.json`);
    None uses each user home's `llm.model`."""
    store: str | None = None
    """`postgresql://…`: every user's chunks, search and profile live in that shared
    database (many server processes may use it at once); None: each user's home."""
    max_users: int = Field(default=256, ge=1, le=100_000)
    """Users whose stores stay open in this process (least recently used closed first)."""
    per_user_in_flight: int = Field(default=16, ge=1, le=1000)
    """Requests one user may have in flight at once (more: 429 with Retry-After)."""
    model_in_flight: int = Field(default=4, ge=1, le=64)
    """Requests that call the model (chat, completions, learning) in flight server-wide."""
    search_in_flight: int = Field(default=8, ge=1, le=64)
    """Searches, vault action batches and MCP calls in flight server-wide."""
    write_in_flight: int = Field(default=8, ge=1, le=64)
    read_in_flight: int = Field(default=12, ge=1, le=64)
    auth_in_flight: int = Field(default=2, ge=1, le=16)
    """Sign-in, sign-out and key management in flight server-wide (their own gate:
    they never queue behind work)."""
    anon_in_flight: int = Field(default=4, ge=1, le=64)
    """Requests without a valid key or web session in flight server-wide (their own
    gate: they never take an authenticated user's slot)."""
    queue_wait_s: float = Field(default=0.5, ge=0, le=30)
    """How long a request over its class's cap waits (holding no thread) before a 503."""
    quota_bytes: int = Field(default=512 * 1024 * 1024, ge=0)
    """Each user's memory files, in bytes (0: no limit; over it: 507)."""
    quota_chunks: int = Field(default=500_000, ge=0)
    quota_notes: int = Field(default=50_000, ge=0)
    quota_log_bytes: int = Field(default=1024 * 1024 * 1024, ge=0)
    """Each user's ops log (segments and stored contents), in bytes."""
    secure_cookies: bool = False
    """The web page's cookies carry `Secure` and the `__Host-` prefix (behind TLS)."""
    max_tokens: int = Field(default=1024, ge=1, le=32_768)
    """The most tokens one reply may ask the model for; larger `max_tokens` are cut to it."""


class Health(BaseModel):
    status: str
    version: str


def default_server_root(
    root: str | os.PathLike[str] | None = None, home: str | os.PathLike[str] | None = None
) -> Path:
    """`--root`, else `<memory home>/server` (home: `--home`, `$MEMAGENT_HOME`, `~/.memagent`)."""
    if root is not None:
        return Path(root).expanduser().absolute()
    return resolve_home(home) / "server"


_FASTAPI_META_PATHS = frozenset({"/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc"})
_COMMON_ERRORS = (400, 401, 403, 404, 409, 413, 422, 429, 500, 502, 503, 504, 507)


def create_app(
    root: str | os.PathLike[str],
    settings: ServerSettings | None = None,
    *,
    llm: LLM | None = None,
) -> FastAPI:
    """The HTTP API over the server root `root` (`keys.json`, `users/<user>/`).

    `llm`, when given, is the model every user's profile learning uses (an
    embedding program's own backend, or a scripted one in tests); otherwise
    `settings.llm`, else each user's configured model.
    """
    from memagent.core.version import __version__

    settings = settings or ServerSettings()
    server = _server_root(Path(root), settings, llm)

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        try:
            yield
        finally:
            server.close()

    app = FastAPI(
        lifespan=lifespan,
        title="memagent",
        version=__version__,
        summary="Local-first memory for LLMs: notes, profile facts and episodic memories.",
        description=(
            "Every `/v1` route needs `Authorization: Bearer KEY` (`memagent keys create`). "
            "A key sees only its own user's memory. Errors are RFC 9457 problem documents."
        ),
        responses=problem_responses(*_COMMON_ERRORS),
        dependencies=[Depends(reject_repeated_query_params)],
    )
    app.state.server = server
    app.state.settings = settings
    for route in app.routes:  # FastAPI's own: the OpenAPI document and its viewers
        if getattr(route, "path", None) in _FASTAPI_META_PATHS:
            admits(RouteClass.META)(route.endpoint)  # type: ignore[attr-defined]
    install_problem_handlers(app)
    _add_routes(app, server, settings)
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_body_bytes)
    app.add_middleware(TimeoutMiddleware, seconds=settings.request_timeout_s)
    app.add_middleware(
        AdmissionMiddleware,
        limits=admission_limits(settings),
        identify=server.identify,
        routes=lambda: app.routes,
    )

    def openapi() -> JsonObject:
        if app.openapi_schema is None:
            app.openapi_schema = build_openapi(app)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    return app


def _server_root(root: Path, settings: ServerSettings, llm: LLM | None) -> ServerRoot:
    """The users' memory under `root`, with the settings' limits, quotas and model."""
    server = ServerRoot.open(
        root,
        rate=settings.rate_per_second,
        burst=settings.rate_burst,
        embeddings=settings.embeddings,
        llm_spec=settings.llm,
        store=settings.store,
        max_users=settings.max_users,
    )
    server.root.mkdir(parents=True, exist_ok=True)
    server.max_tokens = settings.max_tokens
    server.quotas = QuotasConfig(
        max_bytes=settings.quota_bytes,
        max_chunks=settings.quota_chunks,
        max_notes=settings.quota_notes,
        max_log_bytes=settings.quota_log_bytes,
    )
    if llm is not None:
        server.use_llm(llm)
    return server


def _add_routes(app: FastAPI, server: ServerRoot, settings: ServerSettings) -> None:
    """`/health`, every `/v1` router, and the web pages and MCP when turned on."""
    from memagent.core.version import __version__
    from memagent.server.routes import ROUTERS

    @app.get("/health", response_model=Health, tags=["meta"], summary="Liveness check")
    @admits(RouteClass.META)
    async def health() -> Health:
        # async: answered on the event loop, never queued behind work in the threads
        return Health(status="ok", version=__version__)

    for router in ROUTERS:
        app.include_router(router)
    if settings.ui:
        from memagent.server.ui import mount_ui

        mount_ui(app, secure=settings.secure_cookies)
    if settings.mcp:
        from memagent.server.mcp_http import mount_mcp

        mount_mcp(app, server)


def admission_limits(settings: ServerSettings) -> AdmissionLimits:
    caps = {
        RouteClass.AUTH: settings.auth_in_flight,
        RouteClass.MODEL: settings.model_in_flight,
        RouteClass.SEARCH: settings.search_in_flight,
        RouteClass.WRITE: settings.write_in_flight,
        RouteClass.READ: settings.read_in_flight,
    }
    total = sum(caps.values()) + settings.anon_in_flight
    if total >= WORKER_THREADS:
        raise ValueError(
            f"the in-flight caps add up to {total}; keep them under "
            f"{WORKER_THREADS} (the worker threads) so /health and /v1/me never queue"
        )
    return AdmissionLimits(
        per_user=settings.per_user_in_flight,
        caps=caps,
        queue_wait_s=settings.queue_wait_s,
        anon_cap=settings.anon_in_flight,
    )


def reject_repeated_query_params(request: Request) -> None:
    """`?k=1&k=2` for a parameter that takes one value is an error, not "the last one wins"."""
    route = request.scope.get("route")
    dependant = getattr(route, "dependant", None)
    if dependant is None:
        return
    for field in _query_fields(dependant):
        if len(request.query_params.getlist(field.alias)) > 1 and not _is_sequence(field):
            raise ProblemError(422, f"query.{field.alias}: give it once", slug="validation")


def _query_fields(dependant: Any) -> list[Any]:
    fields = list(dependant.query_params)
    for sub in dependant.dependencies:
        fields.extend(_query_fields(sub))
    return fields


def _is_sequence(field: Any) -> bool:
    annotation = field.field_info.annotation
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return any(typing.get_origin(a) in (list, tuple, set) for a in typing.get_args(annotation))
    return origin in (list, tuple, set)


def build_openapi(app: FastAPI) -> JsonObject:
    """FastAPI's document plus the `Problem` schema that the error responses name."""
    doc = get_openapi(
        title=app.title,
        version=app.version,
        summary=app.summary,
        description=app.description,
        routes=app.routes,
    )
    schemas = doc.setdefault("components", {}).setdefault("schemas", {})
    schemas["Problem"] = Problem.model_json_schema(ref_template="#/components/schemas/{model}")
    for path_item in doc.get("paths", {}).values():
        for operation in path_item.values():
            responses = operation.get("responses", {})
            validation = responses.get("422")
            if validation is not None:
                validation["content"] = {
                    PROBLEM_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}
                }
    schemas.pop("HTTPValidationError", None)
    schemas.pop("ValidationError", None)
    return doc


def openapi_document(root: Path) -> JsonObject:
    """The OpenAPI document of the app (what `/openapi.json` serves)."""
    return create_app(root, ServerSettings(mcp=False)).openapi()
