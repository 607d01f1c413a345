"""API keys in the shared database (`api_keys`): the same `Keys` as the file
store, so a key created through any server works on every server, and a revoked
one stops on every server at its next request (each check reads the row).

Only the sha256 of a key is stored; a presented key is compared in constant
time. `last_used` is stamped at most once a minute per key, so checking a key
is a read in the common case.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from datetime import UTC
from typing import Any

from memagent.api_keys import ApiKey, check_new_key, hash_matches, new_key, presented_key
from memagent.core import NotFound, now_iso
from memagent.postgres.db import Database

_COLS = "id, user_id, admin, label, hash, created, last_used, revoked"
LAST_USED_EVERY_S = 60


def _key(row: tuple[Any, ...]) -> ApiKey:
    used = row[6]
    return ApiKey(
        id=row[0],
        user=row[1],
        admin=bool(row[2]),
        label=row[3],
        hash=row[4],
        created=row[5],
        last_used=used.astimezone(UTC).isoformat(timespec="seconds") if used else None,
        revoked=row[7],
    )


class PgKeyStore:
    """Create, list, revoke and verify API keys stored in the database."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def list(self, *, include_revoked: bool = True) -> list[ApiKey]:
        where = "" if include_revoked else " WHERE revoked IS NULL"
        rows = self.db.run_shared(
            lambda c: c.execute(
                f"SELECT {_COLS} FROM api_keys{where} ORDER BY created, id"
            ).fetchall()
        )
        return [_key(r) for r in rows]

    def get(self, key_id: str) -> ApiKey:
        row = self.db.run_shared(
            lambda c: c.execute(f"SELECT {_COLS} FROM api_keys WHERE id = %s", (key_id,)).fetchone()
        )
        if row is None:
            raise NotFound(f"no API key with id {str(key_id)[:40]!r}")
        return _key(row)

    def verify(self, presented: str) -> ApiKey | None:
        """The active key matching `presented`, else None (constant-time check)."""
        parts = presented_key(presented)
        if parts is None:
            return None
        key_id, wanted = parts

        def go(c: Any) -> Any:
            row = c.execute(f"SELECT {_COLS} FROM api_keys WHERE id = %s", (key_id,)).fetchone()
            if row is None or not hash_matches(row[4], wanted) or row[7] is not None:
                return None
            c.execute(
                "UPDATE api_keys SET last_used = now() WHERE id = %s AND revoked IS NULL "
                "AND (last_used IS NULL OR last_used < now() - make_interval(secs => %s))",
                (key_id, LAST_USED_EVERY_S),
            )
            return row

        row = self.db.run_shared(go)
        return _key(row) if row is not None else None

    def create(
        self, *, user: str | None, admin: bool = False, label: str | None = None
    ) -> tuple[str, ApiKey]:
        """Make a key; returns `(key, record)`. The key is shown once, never stored."""
        check_new_key(user, admin, label)

        def go(c: Any) -> tuple[str, ApiKey]:
            while True:
                key_id = secrets.token_hex(6)
                key, hashed = new_key(key_id)
                record = ApiKey(
                    id=key_id, user=user, admin=admin, label=label, hash=hashed, created=now_iso()
                )
                inserted = c.execute(
                    "INSERT INTO api_keys(id, user_id, admin, label, hash, created) "
                    "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO NOTHING RETURNING id",
                    (key_id, user, admin, label, hashed, record.created),
                ).fetchone()
                if inserted is not None:
                    return key, record

        return self.db.run_shared(go)

    def revoke(self, key_id: str) -> ApiKey:
        """Mark a key revoked (the row stays, so its history stays readable)."""

        def go(c: Any) -> Any:
            c.execute(
                "UPDATE api_keys SET revoked = %s WHERE id = %s AND revoked IS NULL",
                (now_iso(), key_id),
            )
            return c.execute(f"SELECT {_COLS} FROM api_keys WHERE id = %s", (key_id,)).fetchone()

        row = self.db.run_shared(go)
        if row is None:
            raise NotFound(f"no API key with id {str(key_id)[:40]!r}")
        return _key(row)

    def import_keys(self, keys: Sequence[ApiKey]) -> int:
        """Add stored keys (hashes) as they are, e.g. from an exported home; keys
        whose id is already taken are left alone. Returns how many were added."""
        return self.db.run_shared(lambda c: insert_keys(c, keys))

    def of_user(self, user: str) -> Sequence[ApiKey]:
        """Every key of `user` (revoked ones too)."""
        rows = self.db.run_shared(
            lambda c: c.execute(
                f"SELECT {_COLS} FROM api_keys WHERE user_id = %s ORDER BY created, id", (user,)
            ).fetchall()
        )
        return [_key(r) for r in rows]

    def close(self) -> None:
        """The database is shared (closed by its owner)."""


def insert_keys(conn: Any, keys: Sequence[ApiKey]) -> int:
    """Insert stored keys on `conn` (ids already taken are skipped); how many went in."""
    added = 0
    for k in keys:
        row = conn.execute(
            "INSERT INTO api_keys(id, user_id, admin, label, hash, created, revoked) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (id) DO NOTHING RETURNING id",
            (k.id, k.user, k.admin, k.label, k.hash, k.created, k.revoked),
        ).fetchone()
        added += row is not None
    return added
