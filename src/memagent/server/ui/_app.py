"""Sign-in, sign-out, and putting the page on an app (`mount_ui`)."""

from __future__ import annotations

import hmac
import secrets

from fastapi import APIRouter, FastAPI, Request, Response
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

from memagent.server._admission import RouteClass, admits
from memagent.server.ui import pages_agent, pages_memory, pages_notes, pages_profile
from memagent.server.ui._base import HERE, UiRoute, go, page
from memagent.server.ui._session import (
    SESSION_SECONDS,
    UiState,
    ViewerDep,
    check_local_host,
    checked_form,
    form_data,
    ui_state,
)
from memagent.server.ui._signed import SignedSessions

LOCAL_USER = "local"

router = APIRouter(prefix="/ui", route_class=UiRoute, include_in_schema=False)


def _set_session(response: Response, state: UiState, sid: str) -> None:
    response.set_cookie(
        state.cookie,
        sid,
        max_age=SESSION_SECONDS,
        path=state.cookie_path,
        httponly=True,
        samesite="strict",
        secure=state.secure_cookies,
    )
    response.delete_cookie(
        state.pre_cookie, path=state.pre_cookie_path, secure=state.secure_cookies
    )


@router.get("")
@router.get("/")
@admits(RouteClass.READ)
def start() -> Response:
    return go("/ui/search")


@router.get("/login")
@admits(RouteClass.AUTH)
def login_page(request: Request, token: str = "") -> Response:
    state = ui_state(request)
    if state.local_user is not None:
        check_local_host(request, state)
        if token and state.use_login_token(token):
            signed_in = go("/ui/search")
            _set_session(signed_in, state, state.start(state.local_user, "local"))
            return signed_in
        error = "That sign-in link was used already or has expired." if token else None
        return page(
            request, "login.html", None, status=401 if token else 200, local=True, error=error
        )
    pre = secrets.token_urlsafe(24)
    response = page(request, "login.html", None, title="Sign in", local=False, pre=pre)
    _set_pre(response, state, pre)
    return response


def _set_pre(response: Response, state: UiState, pre: str) -> None:
    response.set_cookie(
        state.pre_cookie,
        pre,
        max_age=900,
        path=state.pre_cookie_path,
        httponly=True,
        samesite="strict",
        secure=state.secure_cookies,
    )


@router.post("/login")
@admits(RouteClass.AUTH)
async def login(request: Request) -> Response:
    """Sign in with an API key: the key is checked once, then forgotten."""
    state = ui_state(request)
    if state.local_user is not None:
        return go("/ui/login")
    form = await form_data(request)
    pre = (form.get("pre") or [""])[0]
    cookie = request.cookies.get(state.pre_cookie, "")
    server = request.app.state.server
    client = request.client.host if request.client else "unknown"
    if server.bucket.take(f"ui-login:{client}") > 0:
        return _login_failed(request, 429, "Too many sign-in attempts; wait a moment.")
    if not pre or not cookie or not hmac.compare_digest(pre.encode(), cookie.encode()):
        return _login_failed(request, 403, "The sign-in form expired; try again.")
    presented = (form.get("key") or [""])[0].strip()
    key = await server.verify_key(presented) if presented and len(presented) < 200 else None
    if key is None:
        return _login_failed(request, 401, "That key is not valid (or was revoked).")
    if key.user is None:
        return _login_failed(request, 403, "An admin key has no memory to show; use a user's key.")
    assert state.signed is not None
    response = go("/ui/search")
    _set_session(response, state, state.signed.issue(key.user, key.id, SESSION_SECONDS))
    return response


def _login_failed(request: Request, status: int, message: str) -> Response:
    pre = secrets.token_urlsafe(24)
    response = page(request, "login.html", None, status=status, local=False, pre=pre, error=message)
    _set_pre(response, ui_state(request), pre)
    return response


@router.post("/logout")
@admits(RouteClass.AUTH)
async def logout(request: Request, who: ViewerDep) -> Response:
    await checked_form(request, who)
    state = ui_state(request)
    if state.signed is not None:
        state.signed.end_all(who.user)
    else:
        state.end(request.cookies.get(state.cookie))
    response = go("/ui/login")
    response.delete_cookie(state.cookie, path=state.cookie_path, secure=state.secure_cookies)
    return response


def _favicon() -> Response:
    return FileResponse(
        HERE / "static" / "favicon.svg",
        media_type="image/svg+xml",
        headers={"Cache-Control": "public, max-age=86400"},
    )


def mount_ui(app: FastAPI, *, local_user: str | None = None, secure: bool = False) -> UiState:
    """Serve the page at `/ui` on `app` (an app from `create_app`)."""
    state = UiState(local_user=local_user, secure_cookies=secure)
    if local_user is None:
        state.signed = SignedSessions(app.state.server)
    app.state.ui = state
    app.mount(
        "/ui/static",
        admits(RouteClass.META)(StaticFiles(directory=HERE / "static")),
        name="ui-static",
    )
    # Pages name their icon; a browser (or a JSON page such as /docs) that asks the
    # site root for one gets the same icon rather than a 404.
    app.add_api_route(
        "/favicon.ico", admits(RouteClass.META)(_favicon), methods=["GET"], include_in_schema=False
    )
    for r in (
        router,
        pages_memory.router,
        pages_notes.router,
        pages_profile.router,
        pages_agent.router,
    ):
        app.include_router(r)
    return state
