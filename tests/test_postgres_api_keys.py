"""API keys in the shared database: one key works on every server of that
database (whatever its local root), a revocation stops it everywhere at the next
request, the CLI manages them with `--store`, and bad input changes nothing."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from memagent.cli import app as cli_app
from memagent.core import InvalidInput, NotFound
from memagent.postgres import Database, PgKeyStore
from memagent.server import ServerSettings, create_app
from memagent.server.testing import LiveServer, assert_problem


@pytest.fixture(scope="module")
def db(pg_url: str) -> Iterator[Database]:
    database = Database.open(pg_url, max_size=2)
    yield database
    database.close()


def _user() -> str:
    return f"k-{uuid.uuid4().hex[:10]}"


def test_create_verify_list_revoke(db: Database, pg_url: str) -> None:
    keys = PgKeyStore(db)
    user = _user()
    key, record = keys.create(user=user, label="laptop")
    assert record.user == user and key.startswith(f"mak_{record.id}_")
    found = keys.verify(key)
    assert found is not None and found.id == record.id and found.hash == record.hash
    assert keys.get(record.id).last_used is not None  # stamped by the check
    assert record.id in [k.id for k in keys.list()]
    # a second process (its own pool) sees the revocation at its next check
    with Database.open(pg_url, max_size=1) as other_db:
        other = PgKeyStore(other_db)
        assert other.verify(key) is not None
        revoked = keys.revoke(record.id)
        assert revoked.revoked is not None
        assert other.verify(key) is None
    assert keys.revoke(record.id).revoked == revoked.revoked  # revoking twice is a no-op
    assert record.id not in [k.id for k in keys.list(include_revoked=False)]


@pytest.mark.parametrize(
    "presented",
    ["", "mak_", "x" * 10_000, "mak_0123456789ab_" + "A" * 43, "mak_' OR 1=1 --_" + "A" * 43],
)
def test_malformed_or_unknown_keys_do_not_verify(db: Database, presented: str) -> None:
    assert PgKeyStore(db).verify(presented) is None


def test_wrong_secret_for_a_real_id_does_not_verify(db: Database) -> None:
    keys = PgKeyStore(db)
    key, _ = keys.create(user=_user())
    forged = key[:-4] + ("AAAA" if not key.endswith("AAAA") else "BBBB")
    assert keys.verify(forged) is None and keys.verify(key) is not None


def test_bad_new_keys_write_nothing(db: Database) -> None:
    keys = PgKeyStore(db)
    before = len(keys.list())
    for kwargs in (
        {"user": None},
        {"user": "../etc"},
        {"user": "x" * 65},
        {"user": "ok", "label": "l" * 201},
        {"user": "ok", "label": "bell\x07"},
    ):
        with pytest.raises(InvalidInput):
            keys.create(**kwargs)  # type: ignore[arg-type]
    with pytest.raises(NotFound):
        keys.revoke("0123456789ab")
    with pytest.raises(NotFound):
        keys.get("'; DROP TABLE api_keys; --")
    assert len(keys.list()) == before


def test_cli_manages_database_keys(pg_url: str, tmp_path: Path) -> None:
    runner = CliRunner()
    user = _user()
    created = runner.invoke(cli_app, ["keys", "create", "--user", user, "--store", pg_url])
    assert created.exit_code == 0, created.output
    key = created.stdout.strip().splitlines()[-1]
    key_id = key.split("_")[1]
    listed = runner.invoke(cli_app, ["keys", "ls", "--store", pg_url])
    lines = [ln for ln in listed.stdout.splitlines() if ln.startswith(key_id)]
    assert len(lines) == 1 and f"user={user}" in lines[0]
    assert all(ln.split()[0].isalnum() for ln in listed.stdout.splitlines())
    as_json = json.loads(runner.invoke(cli_app, ["keys", "ls", "--store", pg_url, "--json"]).stdout)
    assert all("hash" not in k for k in as_json["keys"])
    # nothing of it under a local root
    assert not (tmp_path / "ambient-home").exists()
    revoked = runner.invoke(cli_app, ["keys", "revoke", key_id, "--store", pg_url])
    assert revoked.exit_code == 0 and f"revoked {key_id}" in revoked.stdout
    bad = runner.invoke(cli_app, ["keys", "create", "--user", "../x", "--store", pg_url])
    assert bad.exit_code == 1 and "invalid user name" in bad.stderr
    wrong = runner.invoke(cli_app, ["keys", "ls", "--store", "mysql://x"])
    assert wrong.exit_code == 1 and "postgresql" in wrong.stderr


def test_key_from_one_server_works_on_another_and_revocation_is_seen_at_once(
    pg_url: str, tmp_path: Path
) -> None:
    settings = ServerSettings(mcp=False, embeddings=False, store=pg_url)
    admin_key, _ = _create_key(pg_url, admin=True)
    with (
        LiveServer(create_app(tmp_path / "a", settings)) as a,
        LiveServer(create_app(tmp_path / "b", settings)) as b,
    ):
        admin_a = httpx.Client(base_url=a.url, headers=_auth(admin_key), timeout=10)
        made = admin_a.post("/v1/admin/keys", json={"user": _user()})
        assert made.status_code == 201, made.text
        key, key_id = made.json()["key"], made.json()["id"]
        on_a = httpx.Client(base_url=a.url, headers=_auth(key), timeout=10)
        on_b = httpx.Client(base_url=b.url, headers=_auth(key), timeout=10)
        assert on_b.get("/v1/me").status_code == 200
        assert on_a.get("/v1/me").status_code == 200
        admin_b = httpx.Client(base_url=b.url, headers=_auth(admin_key), timeout=10)
        assert admin_b.delete(f"/v1/admin/keys/{key_id}").status_code == 200
        revoked_at = time.monotonic()
        assert_problem(on_a.get("/v1/me"), 401)
        assert time.monotonic() - revoked_at < 5  # the very next request, not a cache expiry
        for c in (admin_a, admin_b, on_a, on_b):
            c.close()
    # the server roots keep no key file
    assert not list(tmp_path.rglob("keys.json"))


def _create_key(url: str, *, admin: bool = False) -> tuple[str, str]:
    with Database.open(url, max_size=1) as db:
        key, record = PgKeyStore(db).create(user=None if admin else _user(), admin=admin)
    return key, record.id


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}
