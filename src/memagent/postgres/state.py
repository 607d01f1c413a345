"""Agent state documents (conversations, traces) in the database: the `State`
of `memagent.core.state`, one row per user and name. A write is one
statement, committed before it returns."""

from __future__ import annotations

from typing import Any

from memagent.core import NotFound
from memagent.postgres.db import Database
from memagent.postgres.ops import PgOpsLog, digest


class PgState:
    def __init__(self, db: Database, user: str) -> None:
        self.db = db
        self.user = user
        self.ops = PgOpsLog(db, user)

    def read(self, name: str) -> bytes:
        row = self.db.run(
            self.user,
            lambda c: c.execute(
                "SELECT data FROM state WHERE user_id = %s AND name = %s", (self.user, name)
            ).fetchone(),
        )
        if row is None:
            raise NotFound(f"no state/{name}")
        return bytes(row[0])

    def write(self, name: str, data: bytes, *, actor: str, op: str) -> None:
        def go(c: Any) -> None:
            c.execute(
                "INSERT INTO state(user_id, name, data) VALUES (%s, %s, %s) "
                "ON CONFLICT (user_id, name) DO UPDATE SET data = EXCLUDED.data, updated = now()",
                (self.user, name, data),
            )
            self.ops.append(
                actor=actor, op=op, path=f"state/{name}", before=None, after=digest(data)
            )

        self.db.run(self.user, go)

    def swap(self, name: str, data: bytes, expected: str | None, *, actor: str, op: str) -> bool:
        """Write only while the row's sha256 is `expected` (None: no row), in one
        transaction (the row locked), so two servers saving one document cannot
        both win."""

        def go(c: Any) -> bool:
            if expected is None:
                made = c.execute(
                    "INSERT INTO state(user_id, name, data) VALUES (%s, %s, %s) "
                    "ON CONFLICT (user_id, name) DO NOTHING RETURNING name",
                    (self.user, name, data),
                ).fetchone()
                if made is None:
                    return False
            else:
                row = c.execute(
                    "SELECT data FROM state WHERE user_id = %s AND name = %s FOR UPDATE",
                    (self.user, name),
                ).fetchone()
                if row is None or digest(bytes(row[0])) != expected:
                    return False
                c.execute(
                    "UPDATE state SET data = %s, updated = now() WHERE user_id = %s AND name = %s",
                    (data, self.user, name),
                )
            self.ops.append(
                actor=actor, op=op, path=f"state/{name}", before=expected, after=digest(data)
            )
            return True

        return self.db.run(self.user, go)

    def delete(self, name: str, *, actor: str, op: str) -> None:
        def go(c: Any) -> bool:
            row = c.execute(
                "DELETE FROM state WHERE user_id = %s AND name = %s RETURNING data",
                (self.user, name),
            ).fetchone()
            if row is not None:
                self.ops.append(
                    actor=actor,
                    op=op,
                    path=f"state/{name}",
                    before=digest(bytes(row[0])),
                    after=None,
                )
            return row is not None

        if not self.db.run(self.user, go):
            raise NotFound(f"no state/{name}")

    def names(self, folder: str) -> list[str]:
        prefix = f"{folder}/"
        rows = self.db.run(
            self.user,
            lambda c: c.execute(
                "SELECT name FROM state WHERE user_id = %s AND starts_with(name, %s) "
                "AND strpos(substr(name, %s), '/') = 0 ORDER BY name",
                (self.user, prefix, len(prefix) + 1),
            ).fetchall(),
        )
        return [r[0] for r in rows]
