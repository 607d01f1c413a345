"""API keys, the server's way to know who is calling: stored hashed, in
`<root>/keys.json` (`KeyStore`) or in the shared database
(`memagent.postgres.PgKeyStore`); both are `Keys`.

This module sits just above `memagent.core` (it needs nothing else), below every
layer that handles keys: the database backend stores them, `memagent.stores`
opens a server's key store, and the server's authentication
(`memagent.server._context`) and the `memagent keys` command use them.

A key reads `mak_<id>_<secret>`: `id` (12 hex digits) finds the record without
scanning, `secret` is 32 random bytes (urlsafe base64). Only the sha256 of the
whole key is stored, and a presented key is checked with `hmac.compare_digest`,
so neither the file nor the timing of a check gives a key away. The file is
written through the server root's `Storage` (atomic, locked, logged), so the CLI
can create or revoke keys while a server runs; the server re-reads the file when
its size or modification time changes.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memagent.core import CorruptFile, InvalidInput, NotFound, Storage, now_iso

KEY_PREFIX = "mak_"
_KEY_RE = re.compile(r"^mak_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$")
USER_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
_ACTOR = "keys"


def validate_user(user: str) -> str:
    """A user name is also a folder name under `users/`: keep it plain."""
    if not USER_RE.fullmatch(user):
        raise InvalidInput(
            f"invalid user name {user!r}: use 1-64 letters, digits, '_' or '-', "
            "starting with a letter or digit"
        )
    return user


def _hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def check_new_key(user: str | None, admin: bool, label: str | None) -> None:
    """Refuse a key that could not be used or shown: no user and not admin, a bad
    user name, a label that is long or unprintable."""
    if user is None and not admin:
        raise InvalidInput("a key needs a user (--user U), or must be an admin key")
    if user is not None:
        validate_user(user)
    if label is not None and (len(label) > 200 or not label.isprintable()):
        raise InvalidInput("a key label is at most 200 printable characters")


def new_key(key_id: str) -> tuple[str, str]:
    """A fresh key with id `key_id` and the hash that is stored for it."""
    key = f"{KEY_PREFIX}{key_id}_{secrets.token_urlsafe(32)}"
    return key, _hash_key(key)


def presented_key(presented: str) -> tuple[str, str] | None:
    """(id, hash) of a well-formed presented key; None for anything else."""
    match = _KEY_RE.fullmatch(presented) if isinstance(presented, str) else None
    if match is None:
        return None
    return match.group(1), _hash_key(presented)


def hash_matches(stored: str, wanted: str) -> bool:
    return hmac.compare_digest(stored, wanted)


class ApiKey(BaseModel):
    """One stored key (its hash, never the key itself)."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[0-9a-f]{12}$")
    user: str | None = None
    admin: bool = False
    label: str | None = None
    hash: str = Field(pattern=r"^[0-9a-f]{64}$")
    created: str
    revoked: str | None = None
    last_used: str | None = None

    @property
    def active(self) -> bool:
        return self.revoked is None


class _KeyFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: int = 1
    keys: list[ApiKey] = Field(default_factory=list)


class Keys(Protocol):
    """What every key store does (files or database)."""

    def list(self, *, include_revoked: bool = True) -> list[ApiKey]: ...

    def get(self, key_id: str) -> ApiKey: ...

    def verify(self, presented: str) -> ApiKey | None: ...

    def create(
        self, *, user: str | None, admin: bool = False, label: str | None = None
    ) -> tuple[str, ApiKey]: ...

    def revoke(self, key_id: str) -> ApiKey: ...

    def close(self) -> None: ...


class KeyStore:
    """Create, list, revoke and verify the API keys of one server root (keys.json)."""

    def __init__(self, root: Path) -> None:
        if root.exists() and not root.is_dir():
            raise InvalidInput(f"{root} is not a folder; a server root is a folder")
        self.root = root
        self.path = root / "keys.json"
        self.storage = Storage(root)
        self._cache: tuple[tuple[int, int], _KeyFile] | None = None
        self._cache_guard = threading.Lock()

    # -- reading -----------------------------------------------------------------
    def _load(self) -> _KeyFile:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return _KeyFile()
        stamp = (st.st_mtime_ns, st.st_size)
        with self._cache_guard:
            if self._cache is not None and self._cache[0] == stamp:
                return self._cache[1]
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
            data = _KeyFile.model_validate(raw)
        except FileNotFoundError:
            return _KeyFile()
        except (ValueError, ValidationError) as exc:
            raise CorruptFile(str(self.path), f"not a valid key file: {exc}") from exc
        with self._cache_guard:
            self._cache = (stamp, data)
        return data

    def list(self, *, include_revoked: bool = True) -> list[ApiKey]:
        return [k for k in self._load().keys if include_revoked or k.active]

    def get(self, key_id: str) -> ApiKey:
        for k in self._load().keys:
            if k.id == key_id:
                return k
        raise NotFound(f"no API key with id {key_id!r}")

    def verify(self, presented: str) -> ApiKey | None:
        """The active key record matching `presented`, else None (constant-time check)."""
        parts = presented_key(presented)
        if parts is None:
            return None
        key_id, wanted = parts
        for k in self._load().keys:
            if k.id == key_id:
                if hash_matches(k.hash, wanted) and k.active:
                    return k
                return None
        return None

    # -- writing -----------------------------------------------------------------
    def create(
        self, *, user: str | None, admin: bool = False, label: str | None = None
    ) -> tuple[str, ApiKey]:
        """Make a key; returns `(key, record)`. The key is shown once, never stored."""
        check_new_key(user, admin, label)
        with self.storage.lock():
            data = self._load()
            taken = {k.id for k in data.keys}
            key_id = secrets.token_hex(6)
            while key_id in taken:
                key_id = secrets.token_hex(6)
            key, hashed = new_key(key_id)
            record = ApiKey(
                id=key_id,
                user=user,
                admin=admin,
                label=label,
                hash=hashed,
                created=now_iso(),
            )
            new = _KeyFile(keys=[*data.keys, record])
            self._write(new, op="create", meta={"id": key_id, "user": user, "admin": admin})
        return key, record

    def revoke(self, key_id: str) -> ApiKey:
        """Mark a key revoked (kept in the file so its history stays readable)."""
        with self.storage.lock():
            data = self._load()
            for i, k in enumerate(data.keys):
                if k.id == key_id:
                    if not k.active:
                        return k
                    revoked = k.model_copy(update={"revoked": now_iso()})
                    keys = list(data.keys)
                    keys[i] = revoked
                    self._write(_KeyFile(keys=keys), op="revoke", meta={"id": key_id})
                    return revoked
        raise NotFound(f"no API key with id {key_id!r}")

    def import_keys(self, keys: Sequence[ApiKey]) -> int:
        """Add stored keys (hashes) as they are, e.g. from the database; keys whose
        id is already taken are left alone. Returns how many were added."""
        with self.storage.lock():
            data = self._load()
            taken = {k.id for k in data.keys}
            new = [k for k in keys if k.id not in taken]
            if new:
                self._write(
                    _KeyFile(keys=[*data.keys, *new]),
                    op="import",
                    meta={"ids": [k.id for k in new]},
                )
        return len(new)

    def close(self) -> None:
        """Nothing held open (the file is read when it changes)."""

    def _write(self, data: _KeyFile, *, op: str, meta: dict[str, object]) -> None:
        self.storage.write_json(self.path, data.model_dump(), actor=_ACTOR, op=op, meta=meta)
        with self._cache_guard:
            self._cache = None
