"""Every error the HTTP API returns is an RFC 9457 problem document.

`application/problem+json` with `type`, `title`, `status`, `detail` and
`instance` (the request path). `type` is `about:blank` for plain HTTP errors and
a `urn:memagent:problem:<slug>` for memagent's own, so clients can branch on it
without parsing prose. Validation errors add an `errors` member listing each
bad field.
"""

from __future__ import annotations

import logging
import sqlite3
from http import HTTPStatus

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ConfigDict
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import JSONResponse, Response
from starlette.routing import Match

from memagent.core import (
    Conflict,
    CorruptFile,
    DeadlineExceeded,
    InvalidInput,
    LockTimeout,
    MemagentError,
    NotFound,
    Overloaded,
    PathRejected,
    QuotaExceeded,
    ReadOnlyHome,
    StorageFull,
    Unavailable,
)
from memagent.core.jsontext import JsonObject
from memagent.core.storage import is_full
from memagent.llm import LLMError

PROBLEM_TYPE = "application/problem+json"
_log = logging.getLogger("memagent.server")


class Problem(BaseModel):
    """An RFC 9457 problem document."""

    model_config = ConfigDict(extra="allow")

    type: str = "about:blank"
    title: str
    status: int
    detail: str | None = None
    instance: str | None = None


class ProblemError(Exception):
    """Raise from a route or dependency to answer with a problem document."""

    def __init__(
        self,
        status: int,
        detail: str,
        *,
        slug: str | None = None,
        headers: dict[str, str] | None = None,
        extra: JsonObject | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.slug = slug
        self.headers = headers
        self.extra = extra


def problem_response(
    status: int,
    detail: str | None,
    *,
    instance: str | None,
    slug: str | None = None,
    headers: dict[str, str] | None = None,
    extra: JsonObject | None = None,
) -> Response:
    try:
        title = HTTPStatus(status).phrase
    except ValueError:
        title = "Error"
    body: JsonObject = {
        "type": f"urn:memagent:problem:{slug}" if slug else "about:blank",
        "title": title,
        "status": status,
        "detail": detail,
        "instance": instance,
    }
    if extra:
        body.update(extra)
    return JSONResponse(
        jsonable_encoder(body), status_code=status, media_type=PROBLEM_TYPE, headers=headers
    )


_ERROR_STATUS: list[tuple[type[MemagentError], int, str]] = [
    (PathRejected, 400, "path-rejected"),
    (InvalidInput, 400, "invalid-input"),
    (NotFound, 404, "not-found"),
    (Conflict, 409, "conflict"),
    (LockTimeout, 503, "busy"),
    (Overloaded, 503, "busy"),
    (DeadlineExceeded, 504, "timeout"),
    (QuotaExceeded, 507, "quota-exceeded"),
    (StorageFull, 507, "insufficient-storage"),
    (ReadOnlyHome, 503, "read-only"),
    (Unavailable, 503, "unavailable"),
    (CorruptFile, 500, "corrupt-file"),
]


def status_of(exc: MemagentError) -> tuple[int, str]:
    from memagent.memory.profile import LearnFailed

    if isinstance(exc, LearnFailed):
        return 502, "llm-reply-invalid"
    for cls, status, slug in _ERROR_STATUS:
        if isinstance(exc, cls):
            return status, slug
    return 500, "error"


_RULE_ERRORS = frozenset({"value_error", "assertion_error"})


def allowed_methods(request: Request) -> list[str]:
    """Every method some route serves at this path (Starlette's own 405 names
    only the first matching route's methods)."""
    methods: set[str] = set()
    for route in request.app.router.routes:
        match, _ = route.matches({**request.scope, "method": "\x00"})
        if match != Match.NONE:
            methods.update(getattr(route, "methods", None) or ())
    return sorted(methods)


def install_problem_handlers(app: FastAPI) -> None:
    """Make every error path of `app` answer `application/problem+json`."""
    app.add_exception_handler(ProblemError, _on_problem)
    app.add_exception_handler(StarletteHTTPException, _on_http)
    app.add_exception_handler(RequestValidationError, _on_validation)
    app.add_exception_handler(MemagentError, _on_memagent)
    app.add_exception_handler(LLMError, _on_llm)
    app.add_exception_handler(Exception, _on_unexpected)


async def _on_problem(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ProblemError)
    return problem_response(
        exc.status,
        exc.detail,
        instance=request.url.path,
        slug=exc.slug,
        headers=exc.headers,
        extra=exc.extra,
    )


async def _on_http(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StarletteHTTPException)
    headers = dict(exc.headers) if exc.headers else {}
    if exc.status_code == 405:
        headers["Allow"] = ", ".join(allowed_methods(request))
    return problem_response(
        exc.status_code,
        str(exc.detail) if exc.detail else None,
        instance=request.url.path,
        headers=headers or None,
    )


async def _on_validation(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    errors = [
        {
            "loc": [str(part) for part in err.get("loc", ())],
            "msg": str(err.get("msg", "")),
            "type": str(err.get("type", "")),
        }
        for err in exc.errors()
    ]
    first = errors[0] if errors else None
    detail = f"{'.'.join(first['loc'])}: {first['msg']}" if first else "the request is not valid"
    if errors and all(e["type"] in _RULE_ERRORS for e in errors):
        # A custom validator's rule (one the JSON Schema cannot state): the
        # request matched the documented schema, so this is a 400, not a 422.
        return problem_response(
            400,
            detail,
            instance=request.url.path,
            slug="invalid-input",
            extra={"errors": errors},
        )
    if any(e["type"] == "json_invalid" for e in errors):
        return problem_response(
            400,
            f"the body is not valid JSON ({detail})",
            instance=request.url.path,
            slug="malformed-json",
            extra={"errors": errors},
        )
    return problem_response(
        422,
        detail,
        instance=request.url.path,
        slug="validation",
        extra={"errors": errors},
    )


async def _on_memagent(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, MemagentError)
    status, slug = status_of(exc)
    if status >= 500:
        _log.error("%s %s: %s", request.method, request.url.path, exc)
    headers = None
    if isinstance(exc, Overloaded):
        headers = {"Retry-After": str(max(1, round(exc.retry_after + 0.5)))}
    return problem_response(status, str(exc), instance=request.url.path, slug=slug, headers=headers)


async def _on_llm(request: Request, exc: Exception) -> Response:
    _log.warning("LLM failed on %s %s: %s", request.method, request.url.path, exc)
    return problem_response(
        502, f"the language model failed: {exc}", instance=request.url.path, slug="llm-failed"
    )


async def _on_unexpected(request: Request, exc: Exception) -> Response:
    if is_full(exc):  # a write below the stores' own checks (the index, the database)
        _log.error("disk full on %s %s: %s", request.method, request.url.path, exc)
        return problem_response(
            507,
            "no space left to store this; nothing was changed",
            instance=request.url.path,
            slug="insufficient-storage",
        )
    if isinstance(exc, sqlite3.OperationalError) and "interrupt" in str(exc):
        # the index's progress handler stopped a statement at the request deadline
        return problem_response(
            504, "the request ran out of time", instance=request.url.path, slug="timeout"
        )
    _log.exception("unhandled error on %s %s", request.method, request.url.path)
    return problem_response(500, "internal error (logged on the server)", instance=request.url.path)


def problem_responses(*statuses: int) -> dict[int | str, JsonObject]:
    """OpenAPI `responses=` entries documenting problem documents for `statuses`."""
    out: dict[int | str, JsonObject] = {}
    for status in statuses:
        out[status] = {
            "description": HTTPStatus(status).phrase,
            "content": {PROBLEM_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}},
        }
    return out
