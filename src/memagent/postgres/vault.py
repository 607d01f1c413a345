"""The vault on PostgreSQL: the same `Vault` (path rules, size caps, every
action, wikilinks, search, result shapes), with rows instead of files.

Only the storage hooks differ: where a path lives (`locate`: a note row, a
folder row, or nothing; a note in the middle of a path is refused as on files),
reading and writing a note's bytes, folders, the walk used by listing, search
and link resolution, and the lock (an advisory lock of the user's `vault`).
Paths are normalized by the very same `normalize` and always travel as query
parameters, so a name with quotes, `%`, `_` or any Unicode is just a name.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from memagent.core import Config, InvalidInput, NotFound, PathRejected
from memagent.memory.vault import JournaledVault, Located, Vault, normalize
from memagent.postgres.db import Database
from memagent.postgres.docs import index_note
from memagent.postgres.ops import PgOpsLog, digest

if TYPE_CHECKING:
    from memagent.embeddings import Embedder

PREFIX = "vault/"


def _parents(rel: str) -> list[str]:
    parts = rel.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


class PgVault(Vault):
    """One user's notes in a shared PostgreSQL database."""

    def __init__(
        self,
        db: Database,
        user: str,
        *,
        config: Config | None = None,
        actor: str = "vault",
        embedder: Embedder | None = None,
    ) -> None:
        """`embedder`: for the notes' search rows (None: keyword search only)."""
        cfg = config or Config()
        self.db = db
        self.embedder = embedder
        self.user = user
        self.actor = actor
        self.ops = PgOpsLog(db, user)
        self.dir = PurePosixPath(PREFIX.rstrip("/"))  # type: ignore[assignment]
        self.max_bytes = cfg.limits.max_file_bytes
        self.max_results = cfg.limits.max_search_results
        self.max_entries = cfg.limits.max_list_entries

    def _q(self, sql: str, params: tuple[Any, ...]) -> list[Any]:
        rows: list[Any] = self.db.run(self.user, lambda c: c.execute(sql, params).fetchall())
        return rows

    # -- where a path lives ----------------------------------------------------------
    def locate(self, path: object) -> Located:
        rel = normalize(path)
        if not rel:
            return Located(rel="", real_rel="", path=self.dir, kind="dir")
        wanted = [*_parents(rel), rel]
        files = {
            r[0]
            for r in self._q(
                "SELECT path FROM notes WHERE user_id = %s AND path = ANY(%s)", (self.user, wanted)
            )
        }
        for parent in wanted[:-1]:
            if parent in files:
                raise PathRejected(f"'{rel}': '{parent}' is a file, not a folder")
        kind: str | None = None
        if rel in files:
            kind = "file"
        elif self._q("SELECT 1 FROM note_dirs WHERE user_id = %s AND path = %s", (self.user, rel)):
            kind = "dir"
        return Located(rel=rel, real_rel=rel, path=self.dir / rel, kind=kind)

    @property
    def real_root(self) -> Any:
        return self.dir

    # -- storage hooks -------------------------------------------------------------------
    @contextmanager
    def _lock(self) -> Iterator[Any]:
        with self.db.locked(self.user, "vault"):
            yield None

    def _regex_scope(self) -> Hashable:
        return ("postgres", self.db.url, self.user)

    def holds_lock(self) -> bool:
        return self.db.in_transaction

    def owner_key(self) -> str:
        return f"postgres:{self.db.url}:{self.user}"

    def _read_bytes(self, loc: Located) -> bytes:
        rows = self._q(
            "SELECT content FROM notes WHERE user_id = %s AND path = %s", (self.user, loc.rel)
        )
        if not rows:
            raise NotFound(f"'{loc.rel}' does not exist")
        data = bytes(rows[0][0])
        if len(data) > self.max_bytes:
            raise InvalidInput(f"'{loc.rel}' is {len(data)} bytes; the limit is {self.max_bytes}")
        return data

    def _size(self, loc: Located) -> int:
        rows = self._q(
            "SELECT octet_length(content) FROM notes WHERE user_id = %s AND path = %s",
            (self.user, loc.rel),
        )
        if not rows:
            raise NotFound(f"'{loc.rel}' does not exist")
        return int(rows[0][0])

    def _write(self, loc: Located, data: bytes, op: str, meta: Mapping[str, str] | None) -> None:
        if b"\x00" in data:
            raise InvalidInput("the content has a NUL character, which notes cannot hold here")
        with self.db.transaction(self.user) as conn:
            old = conn.execute(
                "SELECT content FROM notes WHERE user_id = %s AND path = %s FOR UPDATE",
                (self.user, loc.rel),
            ).fetchone()
            self._add_dirs(conn, _parents(loc.rel))
            conn.execute(
                "INSERT INTO notes(user_id, path, content) VALUES (%s, %s, %s) "
                "ON CONFLICT (user_id, path) DO UPDATE SET content = EXCLUDED.content, "
                "version = notes.version + 1, updated = now()",
                (self.user, loc.rel, data),
            )
            index_note(conn, self.user, loc.rel, data, self.embedder)
            self.ops.append(
                actor=self.actor,
                op=op,
                path=PREFIX + loc.rel,
                before=digest(bytes(old[0])) if old is not None else None,
                after=digest(data),
                meta=_clean(meta),
            )

    def _remove(self, loc: Located, op: str, meta: Mapping[str, str] | None) -> None:
        with self.db.transaction(self.user) as conn:
            old = conn.execute(
                "DELETE FROM notes WHERE user_id = %s AND path = %s RETURNING content",
                (self.user, loc.rel),
            ).fetchone()
            if old is None:
                raise NotFound(f"'{loc.rel}' does not exist")
            index_note(conn, self.user, loc.rel, None, None)
            self.ops.append(
                actor=self.actor,
                op=op,
                path=PREFIX + loc.rel,
                before=digest(bytes(old[0])),
                after=None,
                meta=_clean(meta),
            )

    def _make_dir(self, loc: Located) -> None:
        with self.db.transaction(self.user) as conn:
            self._add_dirs(conn, [*_parents(loc.rel), loc.rel])
            self.ops.append(
                actor=self.actor, op="mkdir", path=PREFIX + loc.rel, before=None, after=None
            )

    def _remove_dir(self, loc: Located, op: str) -> None:
        prefix = loc.rel + "/"
        with self.db.transaction(self.user) as conn:
            inside = conn.execute(
                "SELECT 1 FROM notes WHERE user_id = %s AND starts_with(path, %s) UNION ALL "
                "SELECT 1 FROM note_dirs WHERE user_id = %s AND starts_with(path, %s) LIMIT 1",
                (self.user, prefix, self.user, prefix),
            ).fetchone()
            if inside is not None:
                raise OSError(f"'{loc.rel}' is not empty")
            conn.execute(
                "DELETE FROM note_dirs WHERE user_id = %s AND path = %s", (self.user, loc.rel)
            )
            self.ops.append(actor=self.actor, op=op, path=PREFIX + loc.rel, before=None, after=None)

    def _add_dirs(self, conn: Any, dirs: list[str]) -> None:
        for d in dirs:
            conn.execute(
                "INSERT INTO note_dirs(user_id, path) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                (self.user, d),
            )

    # -- walking -----------------------------------------------------------------------
    def _walk(
        self, start: str, *, recursive: bool = True, limit: int | None = None
    ) -> Iterator[tuple[str, str]]:
        """(path, "file"|"dir") under `start` in sorted pre-order, as on files."""
        prefix = f"{start}/" if start else ""
        rows = self._q(
            "SELECT path, 'file' FROM notes WHERE user_id = %s AND starts_with(path, %s) "
            "UNION ALL SELECT path, 'dir' FROM note_dirs WHERE user_id = %s "
            "AND starts_with(path, %s)",
            (self.user, prefix, self.user, prefix),
        )
        children: dict[str, list[tuple[str, str]]] = {}
        for path, kind in rows:
            parent, _, name = path.rpartition("/")
            children.setdefault(parent, []).append((name, kind))
        count = 0

        def walk(folder: str) -> Iterator[tuple[str, str]]:
            nonlocal count
            for name, kind in sorted(children.get(folder, [])):
                rel = f"{folder}/{name}" if folder else name
                yield rel, kind
                count += 1
                if limit is not None and count >= limit:
                    return
                if kind == "dir" and recursive:
                    yield from walk(rel)
                    if limit is not None and count >= limit:
                        return

        yield from walk(start)

    def ensure_starters(self) -> bool:
        """A user's first use: the starter `user.md`, as `memagent init` writes it
        on files. Returns whether it was written."""
        from memagent.core.home import STARTER_USER_MD

        with self._lock():
            if self._q("SELECT 1 FROM notes WHERE user_id = %s LIMIT 1", (self.user,)):
                return False
            if self._q("SELECT 1 FROM note_dirs WHERE user_id = %s LIMIT 1", (self.user,)):
                return False
            self._write(self.locate("user.md"), STARTER_USER_MD.encode(), "create", None)
        return True

    # -- whole-vault access (export) --------------------------------------------------------
    def all_notes(self) -> list[tuple[str, bytes]]:
        """Every note as (path, bytes), sorted by path."""
        rows = self._q(
            "SELECT path, content FROM notes WHERE user_id = %s ORDER BY path", (self.user,)
        )
        return [(r[0], bytes(r[1])) for r in rows]


class PgJournaledVault(JournaledVault, PgVault):
    """A journaled vault in the database: `JournaledVault`'s journal over
    `PgVault`'s storage hooks."""


def _clean(meta: Mapping[str, str] | None) -> dict[str, str] | None:
    """Ops-log meta as jsonb can hold it (no NUL characters in its strings)."""
    if not meta:
        return None
    return {k: v.replace("\x00", "") for k, v in meta.items()}
