"""Sessions that any server of a service can check: signed cookies.

Under `memagent serve` the session cookie carries the user, the API key's id,
an expiry and a random nonce, signed with HMAC-SHA256 under a secret of that
user kept with the user's agent state (`state/ui/session-secret.json` in the
home, or the database's state table), so every server process sharing the
database accepts it and none keeps sessions of its own. The CSRF token is an
HMAC of the nonce under the same secret. Signing out rotates the user's secret,
which ends all of that user's page sessions (other servers notice within
`SECRET_TTL` seconds). The key is re-checked on every request, so revoking it
ends its sessions at once.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import threading
import time
from typing import TYPE_CHECKING, Any

from memagent.api_keys import ApiKey, validate_user
from memagent.core import MemagentError, NotFound

if TYPE_CHECKING:
    from memagent.server._context import ServerRoot

SECRET_NAME = "ui/session-secret.json"
SECRET_TTL = 5.0
MAX_COOKIE_CHARS = 1000


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class SignedSessions:
    """Issue and check signed session cookies for the users of `server`."""

    def __init__(self, server: ServerRoot, *, ttl: float = SECRET_TTL) -> None:
        self.server = server
        self.ttl = ttl
        self._cache: dict[str, tuple[float, float, bytes]] = {}
        self._guard = threading.Lock()

    # -- the per-user secret -------------------------------------------------------------
    def _write_secret(self, user: str) -> bytes:
        secret = secrets.token_bytes(32)
        body = json.dumps({"secret": secret.hex(), "created": time.time()}).encode()
        self.server.stores_for(user).state.write(SECRET_NAME, body, actor="ui", op="session")
        return secret

    def _load_secret(self, user: str) -> bytes:
        state = self.server.stores_for(user).state
        try:
            data: Any = json.loads(state.read(SECRET_NAME))
            secret = bytes.fromhex(data["secret"])
            if len(secret) < 32:
                raise ValueError("short secret")
            return secret
        except NotFound:
            return self._write_secret(user)
        except (ValueError, KeyError, TypeError):  # unreadable: replace it
            return self._write_secret(user)

    def secret(self, user: str, *, fresh: bool = False) -> bytes:
        """The user's secret, cached for `ttl` seconds; `fresh` reads it again, at
        most once a second (a bad cookie cannot make every request read it)."""
        now = time.monotonic()
        with self._guard:
            cached = self._cache.get(user)
            if cached is not None:
                expires, loaded, secret = cached
                if (not fresh and expires > now) or (fresh and now - loaded < 1.0):
                    return secret
        secret = self._load_secret(user)
        with self._guard:
            self._cache[user] = (now + self.ttl, now, secret)
        return secret

    # -- cookies -------------------------------------------------------------------------
    @staticmethod
    def _mac(secret: bytes, payload: str) -> str:
        return _b64(hmac.new(secret, payload.encode(), hashlib.sha256).digest())

    @staticmethod
    def csrf_of(secret: bytes, nonce: str) -> str:
        return _b64(hmac.new(secret, f"csrf:{nonce}".encode(), hashlib.sha256).digest())

    def issue(self, user: str, key_id: str, seconds: float) -> str:
        claims = {
            "u": user,
            "k": key_id,
            "e": int(time.time() + seconds),
            "n": _b64(secrets.token_bytes(16)),
        }
        payload = _b64(json.dumps(claims, separators=(",", ":")).encode())
        return f"{payload}.{self._mac(self.secret(user), payload)}"

    def check(self, cookie: str | None) -> tuple[ApiKey, str, float] | None:
        """(the active API key, CSRF token, expiry) of a valid cookie, else None.
        The key is checked before the user's secret is read, so a forged cookie
        never makes a user's state (or home) appear."""
        if not cookie or len(cookie) > MAX_COOKIE_CHARS or cookie.count(".") != 1:
            return None
        payload, mac = cookie.split(".")
        try:
            data = json.loads(_unb64(payload))
            user, key_id, expires, nonce = data["u"], data["k"], data["e"], data["n"]
            validate_user(user)
        except (ValueError, KeyError, TypeError, MemagentError):
            return None
        if not isinstance(expires, int) or expires <= time.time():
            return None
        if not isinstance(key_id, str) or not isinstance(nonce, str) or len(key_id) > 64:
            return None
        try:
            key = self.server.keys.get(key_id)
        except MemagentError:
            return None
        if not key.active or key.user != user:
            return None
        for fresh in (False, True):  # a rotated secret elsewhere: look again once
            secret = self.secret(user, fresh=fresh)
            if hmac.compare_digest(self._mac(secret, payload), mac):
                return key, self.csrf_of(secret, nonce), float(expires)
        return None

    def end_all(self, user: str) -> None:
        """Sign the user out everywhere: a new secret invalidates every cookie."""
        secret = self._write_secret(user)
        now = time.monotonic()
        with self._guard:
            self._cache[user] = (now + self.ttl, now, secret)
