"""What every page shares: the route class that turns errors into pages, rendering,
redirects with a flash message, and the security headers."""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import Any
from urllib.parse import urlsplit

from fastapi import Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException as StarletteHTTPException

from memagent.core import MemagentError
from memagent.server._problems import status_of
from memagent.server.ui._render import HERE, environment
from memagent.server.ui._session import (
    UiAuthError,
    UiForbidden,
    Viewer,
    flash_query,
    shown_flash,
)

_log = logging.getLogger("memagent.ui")
__all__ = ["HERE", "UiRoute", "go", "one", "page"]

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
NAV = [
    ("search", "Search"),
    ("memories", "Memories"),
    ("notes", "Notes"),
    ("profile", "Profile"),
    ("activity", "Activity"),
    ("status", "Status"),
    ("chat", "Chat"),
]


def page(
    request: Request,
    template: str,
    who: Viewer | None,
    *,
    status: int = 200,
    **context: Any,
) -> HTMLResponse:
    """Render `template` with the common context (user, CSRF token, nav, flash)."""
    html = (
        environment()
        .get_template(template)
        .render(
            request=request,
            user=who.user if who else None,
            csrf=who.csrf if who else "",
            nav=NAV,
            flash=shown_flash(request),
            **context,
        )
    )
    return HTMLResponse(html, status_code=status, headers=SECURITY_HEADERS)


def go(url: str, flash: str | None = None) -> RedirectResponse:
    """303 to a page of this site (never elsewhere), with an optional flash message."""
    parts = urlsplit(url)
    if parts.scheme or parts.netloc or not url.startswith("/ui"):
        url = "/ui/"
    if flash:
        url += ("&" if "?" in url else "?") + flash_query(flash)
    return RedirectResponse(url, status_code=303, headers=SECURITY_HEADERS)


HEADINGS = {
    400: "That was refused",
    403: "Not allowed",
    404: "Not found",
    409: "Nothing was changed",
    413: "That is too large",
    429: "Too many requests",
}


def _signed_in(request: Request) -> Viewer | None:
    """The viewer, when the request has a valid session (to keep the menu on an
    error page); None otherwise (an error page never needs one)."""
    from memagent.server.ui._session import viewer

    try:
        return viewer(request)
    except Exception:
        return None


def error_page(request: Request, status: int, message: str) -> HTMLResponse:
    """The refusal as a message on a page of the site: what went wrong, in the
    store's own words (one sentence), with the menu to carry on from."""
    who = _signed_in(request) if status not in (401, 403) else None
    heading = HEADINGS.get(status, "Something went wrong" if status >= 500 else "That did not work")
    text = message[:1].upper() + message[1:] if message else "The request failed."
    section = request.url.path.removeprefix("/ui/").split("/", 1)[0]
    return page(
        request,
        "error.html",
        who,
        status=status,
        status_code=status,
        heading=heading,
        message=text,
        title=heading,
        active=section if any(slug == section for slug, _ in NAV) else None,
    )


class UiRoute(APIRoute):
    """A page route: store errors become an HTML page with their status (404, 409…),
    a missing session a redirect to the sign-in page, a CSRF failure a 403 page."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def guarded(request: Request) -> Response:
            try:
                return await handler(request)
            except UiAuthError:
                if request.method == "GET":
                    return go("/ui/login")
                return error_page(request, 401, "You are signed out. Sign in again.")
            except UiForbidden as exc:
                return error_page(request, 403, str(exc) or "forbidden")
            except MemagentError as exc:
                status, _ = status_of(exc)
                return error_page(request, status, str(exc))
            except RequestValidationError as exc:
                first = exc.errors()[0] if exc.errors() else {}
                where = ".".join(str(p) for p in first.get("loc", ()))
                return error_page(request, 400, f"{where}: {first.get('msg', 'invalid input')}")
            except StarletteHTTPException as exc:
                return error_page(request, exc.status_code, str(exc.detail or "error"))
            except Exception:
                _log.exception("unhandled error on %s", request.url.path)
                return error_page(request, 500, "Internal error (logged on the server).")

        return guarded


def one(form: dict[str, list[str]], name: str, *, default: str = "", limit: int = 1000) -> str:
    """One form value; over `limit` characters is refused (nothing is cut silently)."""
    values = form.get(name) or [default]
    value = values[0]
    if len(value) > limit:
        from memagent.core import InvalidInput

        raise InvalidInput(f"{name} is {len(value)} characters; at most {limit}")
    return value
