"""Profile resources on PostgreSQL: the same `ProfileStore`, handler, history
and undo, with one row per resource (its file text, exactly as a local home
would hold it) and one row per item key.

Concurrency is the database's: a batch runs in one transaction that holds the
user's advisory `profile` lock and reads each resource `FOR UPDATE`, so two
servers appending the same fact serialise and the second sees the first's item
(dedupe); the primary key on `(user, resource, path, normalized key)` refuses a
duplicate outright should anything slip past. A failure anywhere rolls the
whole batch back, ops-log rows included.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import date
from typing import TYPE_CHECKING, Any

from memagent.core import Config, Conflict, CorruptFile, NotFound, OpRecord, WriteRecord
from memagent.core.jsontext import JsonObject
from memagent.memory.profile.item_keys import match_key
from memagent.memory.profile.models import Resource
from memagent.memory.profile.store import ACTOR, ProfileStore, parse_resource
from memagent.postgres.db import Database
from memagent.postgres.docs import index_facts
from memagent.postgres.ops import PgOpsLog, digest

if TYPE_CHECKING:
    from memagent.embeddings import Embedder


class PgProfileStore(ProfileStore):
    """One user's profile resources in a shared PostgreSQL database."""

    def __init__(
        self,
        db: Database,
        user: str,
        *,
        config: Config | None = None,
        today: Callable[[], date] = date.today,
        embedder: Embedder | None = None,
    ) -> None:
        """`embedder`: for the facts' search rows (None: keyword search only)."""
        self.db = db
        self.embedder = embedder
        self.user = user
        self.config = config or Config()
        self.ops = PgOpsLog(db, user)
        self.today = today

    @property
    def max_bytes(self) -> int:
        return self.config.limits.max_file_bytes

    @contextmanager
    def lock(self) -> Iterator[None]:
        with self.db.locked(self.user, "profile"):
            yield

    def op_records(self) -> list[OpRecord]:
        return self.ops.read()

    def names(self) -> list[str]:
        rows = self.db.run(
            self.user,
            lambda c: c.execute(
                "SELECT name FROM profile_resources WHERE user_id = %s ORDER BY name",
                (self.user,),
            ).fetchall(),
        )
        return [r[0] for r in rows]

    def exists(self, name: str) -> bool:
        self.check_name(name)
        row = self.db.run(
            self.user,
            lambda c: c.execute(
                "SELECT 1 FROM profile_resources WHERE user_id = %s AND name = %s",
                (self.user, name),
            ).fetchone(),
        )
        return row is not None

    def _read_text(self, name: str) -> str:
        self.check_name(name)
        # Inside a batch (`lock`) the row stays locked until the batch commits.
        lock = " FOR UPDATE" if self.db.in_transaction else ""
        row = self.db.run(
            self.user,
            lambda c: c.execute(
                f"SELECT body FROM profile_resources WHERE user_id = %s AND name = %s{lock}",
                (self.user, name),
            ).fetchone(),
        )
        if row is None:
            known = ", ".join(self.names()) or "none"
            raise NotFound(f"no profile resource {name!r} (known: {known})")
        text: str = row[0]
        if len(text.encode("utf-8")) > self.max_bytes:
            raise CorruptFile(
                f"profile/{name}",
                f"over the limit of {self.max_bytes} bytes (limits.max_file_bytes)",
            )
        return text

    def _item_keys(self, resource: Resource) -> list[tuple[str, str]]:
        return [
            (path, match_key(item.item)) for path, items in resource.iter_lists() for item in items
        ]

    def _save(self, conn: Any, resource: Resource, text: str, *, insert: bool) -> None:
        name = resource.name
        if insert:
            conn.execute(
                "INSERT INTO profile_resources(user_id, name, body, version) "
                "VALUES (%s, %s, %s, %s)",
                (self.user, name, text, resource.metadata.version),
            )
        else:
            conn.execute(
                "UPDATE profile_resources SET body = %s, version = %s "
                "WHERE user_id = %s AND name = %s",
                (text, resource.metadata.version, self.user, name),
            )
            conn.execute(
                "DELETE FROM profile_items WHERE user_id = %s AND name = %s", (self.user, name)
            )
        index_facts(conn, self.user, name, text, self.embedder)
        keys = self._item_keys(resource)
        if keys:
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO profile_items(user_id, name, path, item_key) "
                    "VALUES (%s, %s, %s, %s)",
                    [(self.user, name, path, key) for path, key in keys],
                )

    def _write_text(
        self, resource: Resource, text: str, *, op: str, meta: JsonObject
    ) -> WriteRecord:
        with self.db.transaction(self.user) as conn:
            old = conn.execute(
                "SELECT body FROM profile_resources WHERE user_id = %s AND name = %s FOR UPDATE",
                (self.user, resource.name),
            ).fetchone()
            self._save(conn, resource, text, insert=old is None)
            return self.ops.append(
                actor=ACTOR,
                op=op,
                path=f"profile/{resource.name}",
                before=digest(old[0].encode("utf-8")) if old is not None else None,
                after=digest(text.encode("utf-8")),
                meta=meta,
            )

    def _create_text(self, name: str, text: str, *, actor: str) -> None:
        resource = parse_resource(name, text, f"profile/{name}")
        with self.lock(), self.db.transaction(self.user) as conn:
            exists = conn.execute(
                "SELECT 1 FROM profile_resources WHERE user_id = %s AND name = %s",
                (self.user, name),
            ).fetchone()
            if exists is not None:
                raise Conflict(f"profile resource {name} already exists")
            self._save(conn, resource, text, insert=True)
            self.ops.append(
                actor=actor,
                op="create",
                path=f"profile/{name}",
                before=None,
                after=digest(text.encode("utf-8")),
                meta={"file": name},
            )

    def texts(self) -> dict[str, str]:
        """Every resource's file text by name: for export."""
        rows = self.db.run(
            self.user,
            lambda c: c.execute(
                "SELECT name, body FROM profile_resources WHERE user_id = %s ORDER BY name",
                (self.user,),
            ).fetchall(),
        )
        return {r[0]: r[1] for r in rows}

    def import_resource(self, conn: Any, resource: Resource, text: str) -> None:
        """Add a resource read from a memory home, keeping that file's text as it is,
        in the caller's transaction (`memagent.postgres.transfer.import_home`)."""
        self._save(conn, resource, text, insert=True)
