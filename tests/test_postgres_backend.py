"""PostgreSQL-only behaviour: users kept apart (queries and row-level security),
concurrent writer processes, the database being down, migrations, export /
import round trip, and no lost acknowledged write when a server is killed."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from bench.serving import start_serve
from typer.testing import CliRunner

from memagent.api import Memory
from memagent.cli import app as cli_app
from memagent.core import (
    Conflict,
    InvalidInput,
    MemagentError,
    MemoryHome,
    NotFound,
    Unavailable,
)
from memagent.memory.profile import apply_operations, parse_operation
from memagent.postgres import Database, DatabaseUnavailable, PgChunkStore, PgProfileStore
from memagent.postgres.db import migrations

FOOD = "resource_user_food_prefs.json"


@pytest.fixture(scope="module")
def db(pg_url: str) -> Iterator[Database]:
    database = Database.open(pg_url)
    yield database
    database.close()


def _user() -> str:
    return f"u-{uuid.uuid4().hex[:12]}"


def test_migrations_are_idempotent(pg_url: str, db: Database) -> None:
    assert db.migrate() == []
    assert db.schema_version() == max(v for v, _, _ in migrations())
    with Database.open(pg_url) as again:
        assert again.migrate() == []


def test_the_urls_own_options_are_kept(pg_url: str) -> None:
    """`?options=-csearch_path=…` in the URL puts memagent's tables in that
    schema (the pool's own options, timeouts, used to replace the URL's)."""
    import psycopg

    schema = f"opt_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in pg_url else "?"
    url = f"{pg_url}{sep}options={quote(f'-csearch_path={schema},public -cwork_mem=5MB')}"
    try:
        with Database.open(url, max_size=1, statement_timeout_ms=12_345) as database:
            got = database.run(
                "u",
                lambda c: c.execute(
                    "SELECT current_schema(), current_setting('work_mem'), "
                    "current_setting('statement_timeout')"
                ).fetchone(),
            )
            assert got == (schema, "5MB", "12345ms")
        with psycopg.connect(pg_url) as conn:
            tables = conn.execute(
                "SELECT count(*) FROM pg_tables WHERE schemaname = %s AND tablename = 'chunks'",
                (schema,),
            ).fetchone()
            assert tables == (1,)
    finally:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


def test_users_are_kept_apart(db: Database) -> None:
    alice, bob = _user(), _user()
    a = PgChunkStore(db, alice, embeddings=False)
    b = PgChunkStore(db, bob, embeddings=False)
    [secret] = a.remember("alice's secret recipe uses saffron")
    assert b.list() == [] and b.recall("saffron") == []
    with pytest.raises(NotFound):
        b.get(secret.id)
    with pytest.raises(NotFound):
        b.soft_delete(secret.id)
    apply_operations(
        PgProfileStore(db, alice),
        [
            parse_operation(
                {"operation": "append", "file": FOOD, "path": "food.likes", "value": {"item": "x"}}
            )
        ],
    )
    assert PgProfileStore(db, bob).names() == []
    assert PgProfileStore(db, bob).op_records() == []
    assert a.get(secret.id).content.startswith("alice")


def test_row_level_security_for_an_application_role(pg_url: str, db: Database) -> None:
    """A non-superuser role sees only the rows of the user its transaction names,
    even with a query that forgets the user filter."""
    alice, bob = _user(), _user()
    PgChunkStore(db, alice, embeddings=False).remember("alice row")
    PgChunkStore(db, bob, embeddings=False).remember("bob row")
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute(
            "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'memagent_app') "
            "THEN CREATE ROLE memagent_app LOGIN; END IF; END $$"
        )
        admin.execute(
            "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO memagent_app"
        )
    app_url = pg_url.replace("postgres:@", "memagent_app:@")
    with psycopg.connect(app_url) as conn:
        conn.execute("SELECT set_config('memagent.user_id', %s, true)", (alice,))
        rows = conn.execute("SELECT content FROM chunks").fetchall()
        assert rows == [("alice row",)]
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(
                "INSERT INTO ops(user_id, ts, actor, op, path) VALUES (%s, 'x', 'x', 'x', 'x')",
                (bob,),
            )


def _append_items(url: str, user: str, items: list[str], out: Any) -> None:
    with Database.open(url) as database:
        store = PgProfileStore(database, user)
        applied = 0
        for item in items:
            op = {
                "operation": "append",
                "file": FOOD,
                "path": "food.likes",
                "value": {"item": item},
            }
            result = apply_operations(store, [parse_operation(op)])
            assert result.ok
            applied += result.outcomes[0].status == "applied"
        out.put(applied)


def test_concurrent_processes_append_each_item_once(pg_url: str, db: Database) -> None:
    user = _user()
    PgProfileStore(db, user).ensure_starters()
    items = [f"dish {i}" for i in range(15)]
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    procs = [
        ctx.Process(target=_append_items, args=(pg_url, user, items[::step], out))
        for step in (1, 1, 2)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    applied = sum(out.get(timeout=5) for _ in procs)
    assert applied == len(items)
    likes = PgProfileStore(db, user).load(FOOD).items_at("food.likes") or []
    assert sorted(i.item for i in likes) == sorted(i.replace(" ", "_") for i in items)


def test_database_down_is_a_clear_error(tmp_path: Path, home: MemoryHome) -> None:
    url = f"postgresql://postgres:@/postgres?host={tmp_path}"
    t0 = time.monotonic()
    with pytest.raises(DatabaseUnavailable, match="cannot reach the database"):
        Database.open(url, connect_timeout=1)
    assert time.monotonic() - t0 < 10
    assert issubclass(DatabaseUnavailable, Unavailable)
    with pytest.raises(Unavailable):
        Memory.open(home, store=url)
    result = CliRunner().invoke(cli_app, ["recall", "x", "--home", str(home.root), "--store", url])
    assert result.exit_code == 1 and "cannot reach the database" in result.output
    for bad in ("mysql://x", "postgresql", "file:///etc/passwd"):
        with pytest.raises(InvalidInput):
            Memory.open(home, store=bad)


def test_lost_connection_mid_use_is_unavailable(pg_url: str, db: Database) -> None:
    user = _user()
    store = PgChunkStore(db, user, embeddings=False)
    store.remember("before the outage")
    with Database.open(pg_url, connect_timeout=1) as other:
        other.close()
        with pytest.raises(Unavailable):
            PgChunkStore(other, user, embeddings=False).list()


def test_export_import_round_trip(db: Database, tmp_path: Path, pg_url: str) -> None:
    user = _user()
    chunks = PgChunkStore(db, user, embeddings=False)
    a = chunks.create("the first memory about sailing", tags=["sea"])
    b = chunks.create("the second memory about sailing", tags=["sea"])
    chunks.link(a.id, "supports", b.id)
    chunks.soft_delete(a.id)
    profile = PgProfileStore(db, user)
    profile.ensure_starters()
    apply_operations(
        profile,
        [
            parse_operation(
                {
                    "operation": "append",
                    "file": FOOD,
                    "path": "food.likes",
                    "value": {"item": "kale"},
                }
            )
        ],
    )
    out = tmp_path / "exported"
    runner = CliRunner()
    result = runner.invoke(
        cli_app, ["export", "--store", pg_url, "--user", user, "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    counts = json.loads(result.stdout.strip().splitlines()[-1])
    assert counts["chunks"] == 2 and counts["profile"] == 4
    # The export is an ordinary memory home: local commands read it.
    local = Memory.open(out, create=False, embeddings=False)
    assert [m["id"] for m in local.memories()] == [b.id]
    assert local.get(a.id).deleted
    assert local.profile_show("user_food_prefs")[FOOD]["food"]["likes"][0]["item"] == "kale"
    assert any(r.actor == "profile" for r in local.profile.op_records())
    local.close()
    # A second export into a non-empty folder is refused.
    again = runner.invoke(cli_app, ["export", "--store", pg_url, "--user", user, "--out", str(out)])
    assert again.exit_code == 1 and "not an empty folder" in again.output
    # Import as a new user: everything comes back, links and deletions included.
    copy = _user()
    result = runner.invoke(
        cli_app, ["import-home", str(out), "--store", pg_url, "--user", copy, "--keyword-only"]
    )
    assert result.exit_code == 0, result.output
    restored = PgChunkStore(db, copy, embeddings=False)
    assert restored.get(a.id, record_access=False).deleted
    assert {"type": "supports", "source": a.id} in restored.links(b.id)["incoming"]
    assert PgProfileStore(db, copy).load(FOOD).items_at("food.likes")[0].item == "kale"  # type: ignore[index]
    # Importing over existing memory is refused, with nothing changed.
    result = runner.invoke(cli_app, ["import-home", str(out), "--store", pg_url, "--user", copy])
    assert result.exit_code == 1 and "already has memory" in result.output
    assert len(restored.list(None)) == 1


def test_import_refuses_a_corrupt_home_and_writes_nothing(db: Database, tmp_path: Path) -> None:
    from memagent.postgres.transfer import import_home
    from memagent.setup import init_home

    home = MemoryHome.open(tmp_path / "h")
    init_home(home)
    Memory(home, embeddings=False).remember("a good chunk")
    bad = home.layout.chunks / "2024-01-01"
    bad.mkdir()
    (bad / "chunk-20240101-000000000000.json").write_text("{not json")
    user = _user()
    with pytest.raises(Exception, match="not a valid chunk"):
        import_home(db, user, home.root, embeddings=False)
    assert PgChunkStore(db, user, embeddings=False).list() == []
    with pytest.raises(InvalidInput):
        import_home(db, user, tmp_path / "missing", embeddings=False)
    with pytest.raises(Conflict):
        from memagent.postgres.transfer import export_home

        export_home(db, user, home.root)


def _start_server(root: Path, url: str) -> tuple[subprocess.Popen[str], str]:
    return start_serve(
        ["--root", str(root), "--store", url, "--keyword-only", "--no-mcp"],
        env={**os.environ, "MEMAGENT_HOME": str(root)},
    )


def test_no_acknowledged_write_lost_when_a_server_is_killed(pg_url: str, tmp_path: Path) -> None:
    root = tmp_path / "srv"
    user = _user()
    created = CliRunner().invoke(cli_app, ["keys", "create", "--user", user, "--store", pg_url])
    assert created.exit_code == 0, created.output
    key = created.stdout.strip().splitlines()[-1]
    headers = {"Authorization": f"Bearer {key}"}
    proc, base = _start_server(root, pg_url)
    acknowledged: list[str] = []
    try:
        for i in range(20):
            r = httpx.post(
                f"{base}/v1/memories", json={"text": f"acknowledged fact number {i}"},
                headers=headers, timeout=10,
            )  # fmt: skip
            assert r.status_code in (200, 201), r.text
            acknowledged += [m["id"] for m in r.json()["memories"]]
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    second, base2 = _start_server(root, pg_url)
    try:
        r = httpx.get(f"{base2}/v1/memories", params={"limit": 100}, headers=headers, timeout=10)
        assert r.status_code == 200, r.text
        seen = {m["id"] for m in r.json()["memories"]}
        assert set(acknowledged) <= seen and len(acknowledged) == 20
    finally:
        second.kill()
        second.wait(10)


def test_config_store_section_and_store_flag_pick_the_database(
    pg_url: str, home: MemoryHome, db: Database
) -> None:
    import tomli_w

    runner = CliRunner()
    user = _user()
    args = ["--home", str(home.root), "--store", pg_url, "--store-user", user, "--keyword-only"]
    assert runner.invoke(cli_app, ["remember", "the boat is called Petrel", *args]).exit_code == 0
    assert list(home.layout.chunks.rglob("*.json")) == []
    assert PgChunkStore(db, user, embeddings=False).recall("Petrel")
    # `[store]` in config.toml makes the database the default for this home.
    home.layout.config.write_text(
        tomli_w.dumps({"store": {"backend": "postgres", "url": pg_url}}), encoding="utf-8"
    )
    result = runner.invoke(
        cli_app, ["recall", "Petrel", "--home", str(home.root), "--json", "--store-user", user]
    )
    assert result.exit_code == 0, result.output
    assert "Petrel" in result.stdout
    local = runner.invoke(
        cli_app, ["recall", "Petrel", "--home", str(home.root), "--json", "--store", "local"]
    )
    assert local.exit_code == 0 and "Petrel" not in local.stdout
    home.layout.config.write_text(
        tomli_w.dumps({"store": {"backend": "postgres"}}), encoding="utf-8"
    )
    broken = runner.invoke(cli_app, ["recall", "Petrel", "--home", str(home.root)])
    assert broken.exit_code == 1 and "needs a url" in broken.output


def test_retries_serialization_failures_and_bounds_statements(pg_url: str, db: Database) -> None:
    import psycopg

    calls = []

    def flaky(conn: Any) -> int:
        calls.append(1)
        if len(calls) < 3:
            raise psycopg.errors.SerializationFailure("could not serialize access")
        return int(conn.execute("SELECT 41 + 1").fetchone()[0])

    assert db.run(_user(), flaky) == 42 and len(calls) == 3

    def always(conn: Any) -> None:
        raise psycopg.errors.DeadlockDetected("deadlock detected")

    with pytest.raises(psycopg.errors.DeadlockDetected):
        db.run(_user(), always)
    with Database.open(pg_url, statement_timeout_ms=200) as quick:
        with pytest.raises(MemagentError, match="ran past 200 ms"):
            quick.run(_user(), lambda c: c.execute("SELECT pg_sleep(2)"))
        assert quick.run(_user(), lambda c: c.execute("SELECT 1").fetchone()[0]) == 1


def test_hostile_user_ids_and_urls_are_refused(pg_url: str, db: Database, tmp_path: Path) -> None:
    for bad in ("", "a\x00b", "tab\there", "x" * 201):
        with pytest.raises(InvalidInput):
            PgChunkStore(db, bad, embeddings=False).list()
    runner = CliRunner()
    result = runner.invoke(
        cli_app, ["export", "--store", pg_url, "--user", "", "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 1 and "user id" in result.output
    assert not (tmp_path / "o").exists()
    result = runner.invoke(
        cli_app, ["export", "--store", "sqlite:///x", "--user", "u", "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 1 and "not a PostgreSQL URL" in result.output
    secret = "postgresql://app:hunter2@/postgres?host=" + str(tmp_path)
    result = runner.invoke(
        cli_app, ["import-home", str(tmp_path), "--store", secret, "--user", "u"]
    )
    assert result.exit_code == 1 and "hunter2" not in result.output and "***" in result.output
    a_file = tmp_path / "file"
    a_file.write_text("x")
    result = runner.invoke(cli_app, ["import-home", str(a_file), "--store", pg_url, "--user", "u"])
    assert result.exit_code == 1 and "not a memory home" in result.output
