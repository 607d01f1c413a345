"""The database handle: a psycopg 3 connection pool, the schema migrations, and
per-user transactions.

Every transaction is bound to one user: it sets `memagent.user_id` (which the
row-level security policies check) and every query also names the user
explicitly, so a store can never read or write another user's rows even when it
connects as a role that bypasses RLS. Transactions nest per thread: the
outermost one commits, and a write is acknowledged only after that commit.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib import resources
from typing import Any, TypeVar

from memagent.core import InvalidInput, LockTimeout, MemagentError, Unavailable
from memagent.postgres.context import fill as fill_context

T = TypeVar("T")

URL_RE = re.compile(r"^postgres(ql)?://", re.IGNORECASE)
MIGRATION_RE = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")
_MIGRATION_LOCK = 0x6D656D61  # "mema": one migrator at a time across processes
MAX_USER_CHARS = 200


class DatabaseUnavailable(Unavailable):
    """The database cannot be reached (down, wrong URL, refused, timed out)."""


def is_postgres_url(url: str | None) -> bool:
    return bool(url) and bool(URL_RE.match(url or ""))


def check_user(user: str) -> str:
    if not isinstance(user, str) or not user or len(user) > MAX_USER_CHARS:
        raise InvalidInput(f"user id must be 1..{MAX_USER_CHARS} characters")
    if any(ord(c) < 32 for c in user):
        raise InvalidInput("user id has control characters")
    return user


def _redact(url: str) -> str:
    return re.sub(r"//([^:@/]*):[^@/]*@", r"//\1:***@", url)


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", text)[:3])


_FILLS: dict[int, Callable[[Any], None]] = {7: fill_context, 8: fill_context}
"""Python run after a migration's SQL, in its transaction: derived data the SQL
cannot compute (the turns' context, with the local index's rules)."""
_REDOES = {8: 7}
"""A migration whose fill repeats another's (8 repairs what 7 left undone under
row-level security): skipped when that one ran in the same `migrate`."""


_HAS_MIGRATIONS_TABLE = (
    "SELECT EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
    "WHERE n.nspname = current_schema() AND c.relname = 'memagent_migrations')"
)
"""Whether the schema memagent creates its tables in (the first of the search
path) has the migrations table (one further down the path does not count)."""


def _lift_row_security(conn: Any) -> list[str]:
    """Let a migration see every user's rows. memagent's tables FORCE row-level
    security, which binds their owner too, so an owner that is neither superuser
    nor BYPASSRLS (a managed database's usual application owner) would update
    no row at all: each table's FORCE is lifted, inside the migration's
    transaction, and `_force_row_security` puts it back before the commit (no
    other session sees the gap: ALTER TABLE holds the table exclusively).
    Returns the tables lifted. A role that does not own them cannot lift it:
    InsufficientPrivilege."""
    row = conn.execute(
        "SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user"
    ).fetchone()
    if row is not None and row[0]:
        return []
    tables = [
        str(r[0])
        for r in conn.execute(
            "SELECT c.oid::regclass::text FROM pg_class c "
            "WHERE c.relforcerowsecurity AND c.relnamespace = "
            "(SELECT n.oid FROM pg_namespace n WHERE n.nspname = current_schema()) "
            "AND EXISTS (SELECT 1 FROM pg_policy p WHERE p.polrelid = c.oid "
            "AND p.polname = 'by_user') ORDER BY 1"
        )
    ]
    for table in tables:  # a regclass's text is a quoted identifier
        conn.execute(f"ALTER TABLE {table} NO FORCE ROW LEVEL SECURITY")
    return tables


def _force_row_security(conn: Any, tables: list[str]) -> None:
    for table in tables:
        conn.execute(f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY")


def migrations() -> list[tuple[int, str, str]]:
    """(version, file name, SQL) of every migration shipped, in order."""
    folder = resources.files("memagent.postgres") / "migrations"
    out: list[tuple[int, str, str]] = []
    for entry in folder.iterdir():
        m = MIGRATION_RE.match(entry.name)
        if m:
            out.append((int(m.group(1)), entry.name, entry.read_text(encoding="utf-8")))
    return sorted(out)


class Database:
    """A pool of connections to one PostgreSQL database holding many users' memory.

    `open()` connects (waiting at most `connect_timeout` seconds) and runs the
    migrations that have not run yet; a database that cannot be reached raises
    `DatabaseUnavailable`. `statement_timeout_ms` bounds every statement;
    `lock_timeout_s` bounds waiting for another writer.
    """

    def __init__(
        self,
        url: str,
        *,
        min_size: int = 1,
        max_size: int = 8,
        connect_timeout: float = 5.0,
        statement_timeout_ms: int = 30_000,
        lock_timeout_s: float = 60.0,
        retries: int = 5,
    ) -> None:
        if not is_postgres_url(url):
            raise InvalidInput(f"not a PostgreSQL URL: {_redact(url)!r} (postgresql://…)")
        self.url = url
        self.connect_timeout = connect_timeout
        self.statement_timeout_ms = statement_timeout_ms
        self.lock_timeout_s = lock_timeout_s
        self.retries = retries
        self.min_size = min_size
        self.max_size = max_size
        self._pool: Any = None
        self._local = threading.local()
        self.iterative_scans = False
        """pgvector 0.8+ (HNSW iterative scans), found out by `migrate`."""

    # -- life cycle -------------------------------------------------------------------
    @classmethod
    def open(cls, url: str, **kwargs: Any) -> Database:
        db = cls(url, **kwargs)
        db.connect()
        try:
            db.migrate()
        except BaseException:
            db.close()
            raise
        return db

    def connect(self) -> None:
        import psycopg
        from psycopg.conninfo import conninfo_to_dict
        from psycopg_pool import ConnectionPool, PoolTimeout

        try:  # one direct try first: a database that is down fails at once
            psycopg.connect(self.url, connect_timeout=max(1, int(self.connect_timeout))).close()
        except psycopg.OperationalError as exc:
            raise DatabaseUnavailable(
                f"cannot reach the database at {_redact(self.url)}: "
                f"{str(exc).strip().splitlines()[0] if str(exc).strip() else exc!r}; "
                "is PostgreSQL running?"
            ) from exc

        options = (
            f"-c statement_timeout={self.statement_timeout_ms} "
            f"-c lock_timeout={int(self.lock_timeout_s * 1000)}"
        )
        given = conninfo_to_dict(self.url).get("options")
        if given:  # the URL's own (`?options=-csearch_path%3Dmemagent`) come last: they win
            options = f"{options} {given}"
        pool = ConnectionPool(
            self.url,
            min_size=self.min_size,
            max_size=self.max_size,
            open=False,
            timeout=self.connect_timeout,
            reconnect_timeout=self.connect_timeout,
            kwargs={"connect_timeout": max(1, int(self.connect_timeout)), "options": options},
            check=ConnectionPool.check_connection,
            name="memagent",
        )
        try:
            pool.open(wait=True, timeout=self.connect_timeout)
        except PoolTimeout as exc:
            pool.close()
            raise DatabaseUnavailable(
                f"cannot reach the database at {_redact(self.url)} "
                f"(waited {self.connect_timeout:.0f}s); is PostgreSQL running?"
            ) from exc
        self._pool = pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- migrations ---------------------------------------------------------------------
    def migrate(self) -> list[int]:
        """Apply the migrations not yet applied (each in its own transaction,
        one migrator at a time). Idempotent; returns the versions it applied.
        A role that may not apply a pending one (not the tables' owner) gets a
        one-line `MemagentError` saying which role to run it as."""
        import psycopg

        applied: list[int] = []
        with self._connection() as conn:
            conn.autocommit = True
            conn.execute("SELECT pg_advisory_lock(%s)", (_MIGRATION_LOCK,))
            step = "memagent_migrations"
            try:
                # Created only when missing: CREATE ... IF NOT EXISTS needs the right
                # to create in the schema, which a role that only uses it lacks.
                if not conn.execute(_HAS_MIGRATIONS_TABLE).fetchone()[0]:
                    conn.execute(
                        "CREATE TABLE memagent_migrations ("
                        "version integer PRIMARY KEY, name text NOT NULL, "
                        "applied_at timestamptz NOT NULL DEFAULT now())"
                    )
                done = {r[0] for r in conn.execute("SELECT version FROM memagent_migrations")}
                for version, step, sql in migrations():
                    if version not in done:
                        self._apply(conn, version, step, sql, redo=_REDOES.get(version) in applied)
                        applied.append(version)
            except psycopg.errors.InsufficientPrivilege as exc:
                raise MemagentError(
                    f"cannot migrate the database schema ({step}) as role {conn.info.user!r}: "
                    f"{str(exc).strip().splitlines()[0]}; a migration changes every user's "
                    "rows, so run it once as the role that owns memagent's tables (any "
                    "memagent command given --store with that role's URL applies it)"
                ) from exc
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", (_MIGRATION_LOCK,))
                conn.autocommit = False
            row = conn.execute(
                "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
            ).fetchone()
            conn.rollback()
        self.iterative_scans = row is not None and _version(row[0]) >= (0, 8)
        return applied

    @staticmethod
    def _apply(conn: Any, version: int, name: str, sql: str, *, redo: bool) -> None:
        """One migration in its transaction, seeing every user's rows (`redo`:
        its fill repeats one that just ran, so it is skipped)."""
        with conn.transaction():
            lifted = _lift_row_security(conn)
            conn.execute(sql)
            if version in _FILLS and not redo:
                _FILLS[version](conn)
            _force_row_security(conn, lifted)
            conn.execute(
                "INSERT INTO memagent_migrations(version, name) VALUES (%s, %s)", (version, name)
            )

    def schema_version(self) -> int:
        with self._connection() as conn:
            row = conn.execute("SELECT max(version) FROM memagent_migrations").fetchone()
            return int(row[0] or 0) if row else 0

    # -- connections and transactions --------------------------------------------------
    @contextmanager
    def _connection(self) -> Iterator[Any]:
        import psycopg
        from psycopg_pool import PoolTimeout

        if self._pool is None:
            raise DatabaseUnavailable("the database is closed")
        try:
            with self._pool.connection() as conn:
                yield conn
        except PoolTimeout as exc:
            raise DatabaseUnavailable(
                f"no database connection within {self.connect_timeout:.0f}s "
                f"({_redact(self.url)}); is PostgreSQL running?"
            ) from exc
        except psycopg.errors.LockNotAvailable as exc:
            raise LockTimeout(f"waited {self.lock_timeout_s:.0f}s for another writer") from exc
        except psycopg.errors.QueryCanceled as exc:
            raise MemagentError(
                f"a database statement ran past {self.statement_timeout_ms} ms"
            ) from exc
        except psycopg.OperationalError as exc:
            if isinstance(
                exc, psycopg.errors.SerializationFailure | psycopg.errors.DeadlockDetected
            ):
                raise
            raise DatabaseUnavailable(
                f"lost the database at {_redact(self.url)}: {str(exc).strip()}"
            ) from exc

    def checkout(self) -> Any:
        """A pooled connection in autocommit mode, held until `checkin` (for
        session-level advisory locks that outlive one transaction)."""
        from psycopg_pool import PoolTimeout

        if self._pool is None:
            raise DatabaseUnavailable("the database is closed")
        try:
            conn = self._pool.getconn()
        except PoolTimeout as exc:
            raise DatabaseUnavailable(
                f"no database connection within {self.connect_timeout:.0f}s "
                f"({_redact(self.url)}); is PostgreSQL running?"
            ) from exc
        conn.autocommit = True
        return conn

    def checkin(self, conn: Any) -> None:
        conn.autocommit = False
        if self._pool is not None:
            self._pool.putconn(conn)

    @property
    def in_transaction(self) -> bool:
        return getattr(self._local, "conn", None) is not None

    @contextmanager
    def transaction(self, user: str) -> Iterator[Any]:
        """A transaction bound to `user` (nested calls in this thread join the
        outer one; the outermost commits on success, rolls back on error)."""
        current = getattr(self._local, "conn", None)
        if current is not None:
            if self._local.user != user:
                raise MemagentError("one transaction cannot span two users")
            yield current
            return
        check_user(user)
        with self._connection() as conn, conn.transaction():
            conn.execute("SELECT set_config('memagent.user_id', %s, true)", (user,))
            self._local.conn = conn
            self._local.user = user
            try:
                yield conn
            finally:
                self._local.conn = None
                self._local.user = None

    def run(self, user: str, fn: Callable[[Any], T]) -> T:
        """`fn(conn)` in a transaction of `user`, retried (with backoff) when the
        database reports a serialization failure or a deadlock."""
        import psycopg

        if self.in_transaction:
            with self.transaction(user) as conn:
                return fn(conn)
        for attempt in range(self.retries + 1):
            try:
                with self.transaction(user) as conn:
                    return fn(conn)
            except (psycopg.errors.SerializationFailure, psycopg.errors.DeadlockDetected):
                if attempt == self.retries:
                    raise
                time.sleep(min(0.01 * 2**attempt, 0.5))
        raise AssertionError("unreachable")

    def run_shared(self, fn: Callable[[Any], T]) -> T:
        """`fn(conn)` in a transaction bound to no user, for server-wide tables
        (API keys), retried like `run`. Not inside a user's transaction."""
        import psycopg

        if self.in_transaction:
            raise MemagentError("a server-wide statement cannot join a user's transaction")
        for attempt in range(self.retries + 1):
            try:
                with self._connection() as conn, conn.transaction():
                    return fn(conn)
            except (psycopg.errors.SerializationFailure, psycopg.errors.DeadlockDetected):
                if attempt == self.retries:
                    raise
                time.sleep(min(0.01 * 2**attempt, 0.5))
        raise AssertionError("unreachable")

    @contextmanager
    def locked(self, user: str, name: str) -> Iterator[Any]:
        """A transaction of `user` holding the advisory lock `name` of that user
        until it ends: the database-wide twin of a memory home's file lock."""
        with self.transaction(user) as conn:
            conn.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"{user}\x1f{name}",)
            )
            yield conn
