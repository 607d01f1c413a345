"""The ops log in PostgreSQL: the same records as `log/ops.jsonl` (`OpRecord`),
one row per write, written in the transaction of the write it records — so the
log and the data never disagree."""

from __future__ import annotations

import json
from typing import Any

from memagent.core import OpRecord, WriteRecord, now_iso, sha256_hex
from memagent.core.jsontext import JsonObject
from memagent.postgres.db import Database


def json_bytes(obj: Any) -> bytes:
    """The bytes `Storage.write_json` writes for `obj` (so hashes match an export)."""
    return (json.dumps(obj, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def digest(data: bytes | None) -> str | None:
    return sha256_hex(data) if data is not None else None


class PgOpsLog:
    """Append and read one user's ops records."""

    def __init__(self, db: Database, user: str) -> None:
        self.db = db
        self.user = user

    def append(
        self,
        *,
        actor: str,
        op: str,
        path: str,
        before: str | None,
        after: str | None,
        meta: JsonObject | None = None,
        ts: str | None = None,
    ) -> WriteRecord:
        record = WriteRecord(ts or now_iso(), actor, op, path, before, after, meta)
        with self.db.transaction(self.user) as conn:
            conn.execute(
                "INSERT INTO ops(user_id, ts, actor, op, path, before, after, meta) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s::jsonb)",
                (
                    self.user,
                    record.ts,
                    actor,
                    op,
                    path,
                    before,
                    after,
                    json.dumps(meta, ensure_ascii=False) if meta else None,
                ),
            )
        return record

    def read(
        self,
        *,
        actor: str | None = None,
        path_prefix: str | None = None,
        limit: int | None = None,
        mentioning: str | None = None,
    ) -> list[OpRecord]:
        """Records oldest first (the newest `limit` when given), optionally filtered;
        `mentioning`: only records whose meta contains that text."""
        where = ["user_id = %s"]
        params: list[Any] = [self.user]
        if actor is not None:
            where.append("actor = %s")
            params.append(actor)
        if path_prefix is not None:
            where.append("starts_with(path, %s)")
            params.append(path_prefix)
        if mentioning is not None:
            where.append("strpos(meta::text, %s) > 0")
            params.append(mentioning)
        sql = (
            "SELECT ts, actor, op, path, before, after, meta FROM ops "
            f"WHERE {' AND '.join(where)} ORDER BY id DESC"
        )
        if limit is not None:
            sql += " LIMIT %s"
            params.append(limit)

        def go(conn: Any) -> list[OpRecord]:
            rows = conn.execute(sql, params).fetchall()
            return [
                OpRecord(
                    ts=r[0], actor=r[1], op=r[2], path=r[3], before=r[4], after=r[5], meta=r[6]
                )
                for r in reversed(rows)
            ]

        return self.db.run(self.user, go)
