"""Who is looking at the page: sign-in, session cookies and CSRF tokens.

Two ways in. Under `memagent serve`, a person signs in at `/ui/login` with an
API key; under `memagent ui`, the URL printed at start carries a one-time token
(good once, for a few minutes) and no key is needed. Either way the browser then
holds only a random session id in a cookie (HttpOnly, SameSite=Strict, path
`/ui`), and every state-changing request must carry that session's CSRF token
(a hidden form field, or the `X-CSRF-Token` header htmx sends). Under `serve`
the cookie is signed (`_signed`): every server sharing the database accepts it
and none keeps sessions; a session ends when its key is revoked or the user
signs out. With `secure_cookies` (behind TLS) the cookies are `__Host-` prefixed,
`Secure` and on path `/` (what the prefix demands). Under `memagent ui` sessions
live in the process (one per browser) under a cookie name of that run's own
(`memagent_ui_<random>`): browsers do not scope cookies by port, so another
local server's cookie never collides with it, and a cookie of an earlier run or
of another port's page is never taken for this one; the `Host` must name this
loopback port exactly.

Flash messages (the status line after a redirect) come only from this server:
`go()` signs the text with a per-process key, and a page shows a flash only
when its signature checks, so `?flash=` with a text of someone else's shows
nothing.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Annotated
from urllib.parse import parse_qs, quote

from fastapi import Depends, Request

from memagent.api_keys import ApiKey
from memagent.core import now_iso
from memagent.server._context import Caller, ServerRoot
from memagent.server.ui._signed import SignedSessions

COOKIE = "memagent_ui"
PRE_COOKIE = "memagent_ui_pre"
HOST_PREFIX = "__Host-"
SESSION_SECONDS = 12 * 3600
LOGIN_TOKEN_SECONDS = 300
MAX_SESSIONS = 10_000
MAX_FORM_VALUES = 200
LOCAL_KEY_ID = "000000000000"


class UiAuthError(Exception):
    """Not signed in (or the session ended): answered by a redirect to the login page."""


class UiForbidden(Exception):
    """A state-changing request without the session's CSRF token."""


@dataclass
class UiSession:
    """One signed-in browser: whose, by which key, its CSRF token, when it ends."""

    user: str
    key_id: str
    csrf: str
    expires: float


@dataclass
class UiState:
    """The sessions of one app. `local_user` set: `memagent ui` (one-time tokens);
    else sign-in with API keys."""

    local_user: str | None = None
    secure_cookies: bool = False
    signed: SignedSessions | None = None
    run_id: str = field(default_factory=lambda: secrets.token_hex(6))
    _sessions: dict[str, UiSession] = field(default_factory=dict)
    _login_tokens: dict[str, float] = field(default_factory=dict)
    _guard: threading.Lock = field(default_factory=threading.Lock)

    @property
    def cookie(self) -> str:
        """The session cookie's name (see the module doc)."""
        if self.local_user is not None:
            return f"{COOKIE}_{self.run_id}"
        return HOST_PREFIX + COOKIE if self.secure_cookies else COOKIE

    @property
    def cookie_path(self) -> str:
        return "/" if self.secure_cookies else "/ui"

    @property
    def pre_cookie(self) -> str:
        """The sign-in form's pre-session cookie (under `serve`)."""
        return HOST_PREFIX + PRE_COOKIE if self.secure_cookies else PRE_COOKIE

    @property
    def pre_cookie_path(self) -> str:
        return "/" if self.secure_cookies else "/ui/login"

    def login_token(self) -> str:
        """A one-time sign-in token for the local page (`memagent ui`)."""
        token = secrets.token_urlsafe(32)
        with self._guard:
            self._login_tokens[token] = time.monotonic() + LOGIN_TOKEN_SECONDS
        return token

    def use_login_token(self, token: str) -> bool:
        with self._guard:
            expires = self._login_tokens.pop(token, None) if isinstance(token, str) else None
        return expires is not None and expires > time.monotonic()

    def start(self, user: str, key_id: str) -> str:
        sid = secrets.token_urlsafe(32)
        now = time.monotonic()
        with self._guard:
            if len(self._sessions) >= MAX_SESSIONS:
                for k in [k for k, s in self._sessions.items() if s.expires <= now]:
                    del self._sessions[k]
                if len(self._sessions) >= MAX_SESSIONS:
                    oldest = min(self._sessions, key=lambda k: self._sessions[k].expires)
                    del self._sessions[oldest]
            self._sessions[sid] = UiSession(
                user, key_id, secrets.token_urlsafe(32), now + SESSION_SECONDS
            )
        return sid

    def get(self, sid: str | None) -> UiSession | None:
        if not sid:
            return None
        with self._guard:
            session = self._sessions.get(sid)
            if session is None:
                return None
            if session.expires <= time.monotonic():
                del self._sessions[sid]
                return None
            return session

    def end(self, sid: str | None) -> None:
        if sid:
            with self._guard:
                self._sessions.pop(sid, None)


def ui_state(request: Request) -> UiState:
    state: UiState = request.app.state.ui
    return state


@dataclass(frozen=True)
class Viewer:
    """A signed-in page request: the session, and the caller it acts as."""

    session: UiSession
    caller: Caller

    @property
    def csrf(self) -> str:
        return self.session.csrf

    @property
    def user(self) -> str:
        return self.session.user


def _local_key(user: str) -> ApiKey:
    """The key record a `memagent ui` session acts with (no key exists: loopback only)."""
    return ApiKey(id=LOCAL_KEY_ID, user=user, label="memagent ui", hash="0" * 64, created=now_iso())


def viewer(request: Request) -> Viewer:
    state = ui_state(request)
    server: ServerRoot = request.app.state.server
    cookie = request.cookies.get(state.cookie)
    if state.signed is not None:
        checked = state.signed.check(cookie)
        if checked is None:
            raise UiAuthError
        key, csrf, expires = checked
        if key.user is None:
            raise UiAuthError
        if server.bucket.take(key.id) > 0:
            raise UiForbidden("too many requests; wait a moment")
        session = UiSession(key.user, key.id, csrf, expires)
        if cookie:
            server.note_session(cookie, key.user)
        return Viewer(session=session, caller=Caller(key=key, server=server))
    check_local_host(request, state)
    local = state.get(cookie)
    if local is None or state.local_user is None:
        raise UiAuthError
    if cookie:
        server.note_session(cookie, local.user)
    return Viewer(session=local, caller=Caller(key=_local_key(local.user), server=server))


LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]", "::1"})
_LOCAL_HOST = re.compile(r"(127\.0\.0\.1|localhost|\[::1\])(?::([0-9]{1,5}))?", re.IGNORECASE)


def check_local_host(request: Request, state: UiState) -> None:
    """`memagent ui` answers only requests addressed to loopback, at its own port
    (a DNS-rebinding page that points its own name at 127.0.0.1 gets nothing,
    and so does a malformed Host such as `localhost:P@evil`)."""
    if state.local_user is None:
        return
    host = request.headers.get("host", "")
    match = _LOCAL_HOST.fullmatch(host)
    server = request.scope.get("server")
    port = server[1] if isinstance(server, (tuple, list)) and len(server) == 2 else None
    wrong_port = match is not None and match.group(2) is not None and port is not None
    if match is None or (wrong_port and int(match.group(2)) != port):
        raise UiForbidden(f"this page answers only at 127.0.0.1 or localhost, not {host[:80]!r}")


_FLASH_KEY = secrets.token_bytes(32)
MAX_FLASH_CHARS = 300


def _flash_mac(text: str) -> str:
    digest = hmac.new(_FLASH_KEY, text.encode("utf-8", "replace"), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest[:18]).decode()


def flash_query(text: str) -> str:
    """The query string that carries a flash message of this server's own."""
    text = text[:MAX_FLASH_CHARS]
    return f"flash={quote(text, safe='')}&fs={_flash_mac(text)}"


def shown_flash(request: Request) -> str | None:
    """The flash message of this request, only if this server wrote it."""
    text = request.query_params.get("flash")
    sig = request.query_params.get("fs", "")
    if not text or len(text) > MAX_FLASH_CHARS:
        return None
    return text if hmac.compare_digest(sig.encode(), _flash_mac(text).encode()) else None


async def form_data(request: Request) -> dict[str, list[str]]:
    """The urlencoded form (or an empty one); repeated fields keep every value."""
    body = await request.body()
    ctype = request.headers.get("content-type", "")
    if not body:
        return {}
    if not ctype.startswith("application/x-www-form-urlencoded"):
        raise UiForbidden("forms must be sent as application/x-www-form-urlencoded")
    try:
        text = body.decode("utf-8")
        data = parse_qs(
            text, keep_blank_values=True, strict_parsing=False, max_num_fields=MAX_FORM_VALUES
        )
    except (UnicodeDecodeError, ValueError) as exc:
        raise UiForbidden("the form could not be read") from exc
    return data


async def checked_form(request: Request, who: Viewer) -> dict[str, list[str]]:
    """The form of a state-changing request, after the CSRF check."""
    data = await form_data(request)
    sent = request.headers.get("x-csrf-token") or (data.get("csrf") or [""])[0]
    if not sent or not hmac.compare_digest(sent.encode(), who.csrf.encode()):
        raise UiForbidden("the form's security token is missing or stale; reload the page")
    return data


ViewerDep = Annotated[Viewer, Depends(viewer)]
