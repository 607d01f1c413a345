"""The plan executor's resource locks as PostgreSQL advisory locks, so steps of
plans running in different server processes (or machines) on one database keep
the same read/write exclusion as steps inside one process.

Each step's locks are held on one pooled connection (session-level advisory
locks keyed by user and resource), taken in the executor's global order and
all released together when the step ends.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from memagent.postgres.db import Database, check_user


class AdvisoryLocks:
    """`memagent.plan.SharedLocks` over PostgreSQL advisory locks for one user."""

    def __init__(self, db: Database, user: str) -> None:
        self.db = db
        self.user = check_user(user)

    def _key(self, resource: str) -> str:
        return f"{self.user}\x1fplan\x1f{resource}"

    def _acquire(self, resources: Sequence[tuple[str, bool]]) -> Any:
        conn = self.db.checkout()
        try:
            for resource, exclusive in resources:
                fn = "pg_advisory_lock" if exclusive else "pg_advisory_lock_shared"
                conn.execute(f"SELECT {fn}(hashtextextended(%s, 0))", (self._key(resource),))
        except BaseException:
            self._release(conn)
            raise
        return conn

    def _release(self, conn: Any) -> None:
        try:
            conn.execute("SELECT pg_advisory_unlock_all()")
        finally:
            self.db.checkin(conn)

    async def acquire(self, resources: Sequence[tuple[str, bool]]) -> Any:
        loop = asyncio.get_running_loop()
        fut = loop.run_in_executor(None, self._acquire, list(resources))
        try:
            return await asyncio.shield(fut)
        except asyncio.CancelledError:
            # The waiting thread cannot be interrupted: free its locks once it has them.
            fut.add_done_callback(
                lambda f: (
                    self._release(f.result())
                    if not f.cancelled() and f.exception() is None
                    else None
                )
            )
            raise

    async def release(self, token: Any) -> None:
        await asyncio.get_running_loop().run_in_executor(None, self._release, token)
