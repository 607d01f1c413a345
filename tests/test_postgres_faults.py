"""Faults of a shared database: servers migrating a fresh database at the same
time, and a key revoked while one of its requests is in flight."""

from __future__ import annotations

import json
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import quote

import httpx
import psycopg

from memagent.llm import ScriptedLLM
from memagent.postgres import Database, PgKeyStore
from memagent.postgres.db import migrations
from memagent.server import ServerSettings, create_app
from memagent.server.testing import LiveServer, assert_problem


def test_servers_migrating_one_fresh_database_at_once(pg_url: str) -> None:
    schema = f"race_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in pg_url else "?"
    url = f"{pg_url}{sep}options={quote(f'-csearch_path={schema},public')}"
    start = threading.Barrier(4)

    def open_one(_: int) -> int:
        start.wait()
        with Database.open(url, max_size=1) as db:
            return db.schema_version()

    try:
        with ThreadPoolExecutor(4) as pool:
            versions = list(pool.map(open_one, range(4)))
        assert versions == [max(v for v, _, _ in migrations())] * 4
        with psycopg.connect(url) as conn:
            applied = conn.execute("SELECT count(*) FROM memagent_migrations").fetchone()
        assert applied is not None and applied[0] == len(migrations())  # each applied once
    finally:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


def test_a_key_revoked_during_its_request(pg_url: str, tmp_path: Path) -> None:
    """The request that was let in finishes (its writes are whole); the next one
    with that key is refused."""
    with Database.open(pg_url, max_size=1) as db:
        keys = PgKeyStore(db)
        key, record = keys.create(user=f"f-{uuid.uuid4().hex[:10]}")
        entered = threading.Event()

        def slow_reply(messages: object, schema: object) -> str:
            entered.set()
            release.wait(30)
            return json.dumps({"reply": "Done."})

        release = threading.Event()
        llm = ScriptedLLM(fn=slow_reply)
        settings = ServerSettings(mcp=False, embeddings=False, store=pg_url)
        with LiveServer(create_app(tmp_path / "root", settings, llm=llm)) as live:
            auth = {"Authorization": f"Bearer {key}"}
            result: dict[str, httpx.Response] = {}

            def chat() -> None:
                result["r"] = httpx.post(
                    f"{live.url}/v1/chat", json={"message": "Hello?"}, headers=auth, timeout=60
                )

            worker = threading.Thread(target=chat)
            worker.start()
            assert entered.wait(30)
            keys.revoke(record.id)
            release.set()
            worker.join(60)
            assert result["r"].status_code == 200 and result["r"].json()["reply"] == "Done."
            assert_problem(httpx.get(f"{live.url}/v1/me", headers=auth, timeout=10), 401)
