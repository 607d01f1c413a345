"""MCP over streamable HTTP at `/mcp`, behind the same API keys as `/v1`.

The endpoint checks the bearer key (and its rate limit) before the MCP SDK sees
the request, then records the caller in the ASGI scope; the tools read it back
from the request the SDK hands them, so every tool call acts on the memory home
of the user whose key sent it. Stateless mode: each POST stands alone (no
session a second user could reuse). `profile_learn` calls the model: it holds a
slot of the admission's model class for that call, like `/v1/profile/learn`.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from fastapi import FastAPI
from fastapi.security.utils import get_authorization_scheme_param
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from memagent.api import Memory
from memagent.core import MemagentError
from memagent.llm import LLM
from memagent.server._admission import SCOPE_KEY as ADMISSION_KEY
from memagent.server._admission import RouteClass, admits
from memagent.server._context import Caller, ServerRoot, authenticate
from memagent.server._problems import ProblemError, problem_response, status_of
from memagent.server.mcp_tools import build_mcp_server

MCP_PATH = "/mcp"
_SCOPE_KEY = "memagent.caller"


def _scope(request_context: Any) -> Scope:
    scope = getattr(getattr(request_context, "request", None), "scope", None)
    return scope if isinstance(scope, dict) else {}


def _caller(request_context: Any) -> Caller:
    caller = _scope(request_context).get(_SCOPE_KEY)
    if not isinstance(caller, Caller):
        raise MemagentError("this MCP endpoint needs an authenticated HTTP request")
    return caller


def _memory_of(request_context: Any) -> Memory:
    return _caller(request_context).memory


def _llm_of(request_context: Any, memory: Memory) -> LLM:
    return _caller(request_context).server.llm(memory.home)


@contextlib.asynccontextmanager
async def _model_slot(request_context: Any) -> AsyncIterator[None]:
    """The model class of the server's admission, as `/v1/chat` and
    `/v1/profile/learn` meet it (an app without admission: none to hold)."""
    admitted = _scope(request_context).get(ADMISSION_KEY)
    if admitted is None:
        yield
        return
    admission, who = admitted
    async with admission.hold(who, RouteClass.MODEL):
        yield


class _AuthenticatedMCP:
    """ASGI app: authenticate, then hand the request to the MCP session manager."""

    def __init__(self, server: ServerRoot, manager: StreamableHTTPSessionManager) -> None:
        self.server = server
        self.manager = manager

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        scheme, token = get_authorization_scheme_param(headers.get("authorization"))
        from fastapi.security import HTTPAuthorizationCredentials

        creds = (
            HTTPAuthorizationCredentials(scheme=scheme, credentials=token)
            if token and scheme.lower() == "bearer"
            else None
        )
        instance = scope.get("path")
        try:
            caller = await authenticate(self.server, creds)
            _ = caller.user
        except ProblemError as exc:
            response = problem_response(
                exc.status, exc.detail, instance=instance, slug=exc.slug, headers=exc.headers
            )
            await response(scope, receive, send)
            return
        except MemagentError as exc:
            status, slug = status_of(exc)
            await problem_response(status, str(exc), instance=instance, slug=slug)(
                scope, receive, send
            )
            return
        scope[_SCOPE_KEY] = caller
        await self.manager.handle_request(scope, receive, send)


def mount_mcp(app: FastAPI, server: ServerRoot, *, allowed_hosts: list[str] | None = None) -> None:
    """Serve MCP at `/mcp` and run its session manager in the app's lifespan."""
    mcp = build_mcp_server(_memory_of, llm_of=_llm_of, model_slot=_model_slot)
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=allowed_hosts is not None,
        allowed_hosts=allowed_hosts or [],
        allowed_origins=[],
    )
    manager = StreamableHTTPSessionManager(
        app=mcp._lowlevel_server,
        json_response=True,
        stateless=True,
        security_settings=security,
    )
    # a GET is the event stream, which waits on the loop and holds no worker
    endpoint = admits(RouteClass.SEARCH, streams=["GET"])(_AuthenticatedMCP(server, manager))
    app.router.routes.append(
        Route(MCP_PATH, endpoint, methods=["GET", "POST", "DELETE"], include_in_schema=False)
    )

    previous = app.router.lifespan_context

    @contextlib.asynccontextmanager
    async def lifespan(inner: Any) -> AsyncIterator[Any]:
        async with manager.run(), previous(inner) as state:
            yield state

    app.router.lifespan_context = lifespan
