"""HTTP end to end against a real uvicorn on loopback: keys, auth, limits, problems."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from starlette.types import Receive, Scope, Send
from typer.testing import CliRunner

from memagent.cli import app as cli_app
from memagent.core import CorruptFile, InvalidInput
from memagent.server import KeyStore, ServerSettings, create_app
from memagent.server._limits import TimeoutMiddleware
from memagent.server.testing import LiveServer, assert_problem


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "server"


@pytest.fixture
def live(root: Path) -> Iterator[LiveServer]:
    settings = ServerSettings(mcp=False, max_body_bytes=10_000)
    with LiveServer(create_app(root, settings)) as server:
        yield server


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_missing_wrong_and_revoked_keys_are_401(live: LiveServer, root: Path) -> None:
    store = KeyStore(root)
    key, record = store.create(user="alice")
    with httpx.Client(base_url=live.url) as client:
        body = assert_problem(client.get("/v1/me"), 401)
        assert body["type"] == "urn:memagent:problem:unauthenticated"
        assert client.get("/v1/me").headers["www-authenticate"] == "Bearer"
        assert_problem(client.get("/v1/me", headers=auth(key + "x")), 401)
        flipped = "B" if key.endswith("A") else "A"
        assert_problem(client.get("/v1/me", headers=auth(key[:-1] + flipped)), 401)
        assert_problem(client.get("/v1/me", headers={"Authorization": f"Basic {key}"}), 401)
        assert_problem(client.get("/v1/me", headers=auth("mak_000000000000_" + "a" * 43)), 401)
        assert client.get("/v1/me", headers=auth(key)).json() == {
            "user": "alice",
            "key_id": record.id,
            "admin": False,
        }
        # Revoked from another KeyStore (as the CLI does) while the server runs.
        KeyStore(root).revoke(record.id)
        assert_problem(client.get("/v1/me", headers=auth(key)), 401)


def test_keys_are_stored_hashed(root: Path) -> None:
    key, record = KeyStore(root).create(user="bob", label="laptop")
    text = (root / "keys.json").read_text()
    assert key not in text
    assert key.split("_", 2)[2] not in text  # the secret may itself contain "_"
    assert record.hash in text
    assert KeyStore(root).verify(key) == record
    ops = (root / "log" / "ops.jsonl").read_text().splitlines()
    assert json.loads(ops[-1])["op"] == "create"


def test_key_store_refuses_bad_input_and_writes_nothing(root: Path) -> None:
    store = KeyStore(root)
    for user in ["", "../etc", "a/b", "x" * 65, "-lead", "é"]:
        with pytest.raises(InvalidInput):
            store.create(user=user)
    with pytest.raises(InvalidInput):
        store.create(user=None)
    with pytest.raises(InvalidInput):
        store.create(user="ok", label="x" * 201)
    assert not (root / "keys.json").exists()


def test_corrupt_key_file_is_reported_and_kept(root: Path) -> None:
    root.mkdir(parents=True)
    (root / "keys.json").write_text("{not json")
    with pytest.raises(CorruptFile):
        KeyStore(root).list()
    with pytest.raises(CorruptFile):
        KeyStore(root).create(user="alice")
    assert (root / "keys.json").read_text() == "{not json"


def test_admin_key_manages_keys_over_http(live: LiveServer, root: Path) -> None:
    admin_key, _ = KeyStore(root).create(user=None, admin=True)
    user_key, _ = KeyStore(root).create(user="alice")
    with httpx.Client(base_url=live.url, headers=auth(admin_key)) as client:
        body = assert_problem(client.get("/v1/admin/keys", headers=auth(user_key)), 403)
        assert "admin" in str(body["detail"])
        created = client.post("/v1/admin/keys", json={"user": "carol", "label": "ci"})
        assert created.status_code == 201
        new = created.json()
        assert new["user"] == "carol" and new["key"].startswith("mak_")
        me = client.get("/v1/me", headers=auth(new["key"])).json()
        assert me["user"] == "carol"
        listed = client.get("/v1/admin/keys").json()["keys"]
        assert {k["user"] for k in listed} == {None, "alice", "carol"}
        assert all("hash" not in k for k in listed)
        revoked = client.delete(f"/v1/admin/keys/{new['id']}")
        assert revoked.status_code == 200 and revoked.json()["revoked"]
        assert_problem(client.get("/v1/me", headers=auth(new["key"])), 401)
        assert_problem(client.delete("/v1/admin/keys/0123456789ab"), 404)
        assert_problem(client.delete("/v1/admin/keys/NOT-A-KEY-ID"), 422)
        assert_problem(client.post("/v1/admin/keys", json={"user": "../x"}), 422)
        assert_problem(client.post("/v1/admin/keys", json={"admin": False}), 400)


def test_malformed_and_oversized_bodies(live: LiveServer, root: Path) -> None:
    admin_key, _ = KeyStore(root).create(user=None, admin=True)
    before = (root / "keys.json").read_text()
    with httpx.Client(base_url=live.url, headers=auth(admin_key)) as client:
        bad = client.post(
            "/v1/admin/keys", content=b'{"user": ', headers={"content-type": "application/json"}
        )
        assert assert_problem(bad, 400)["type"] == "urn:memagent:problem:malformed-json"
        big = json.dumps({"user": "alice", "label": "x" * 20_000}).encode()
        assert_problem(client.post("/v1/admin/keys", content=big), 413)

        def chunks() -> Iterator[bytes]:
            for _ in range(30):
                yield b" " * 1000

        assert_problem(client.post("/v1/admin/keys", content=chunks()), 413)
        assert_problem(client.post("/v1/admin/keys", json=["not", "an", "object"]), 422)
    assert (root / "keys.json").read_text() == before


def test_unknown_route_and_method_are_problems(live: LiveServer) -> None:
    with httpx.Client(base_url=live.url) as client:
        assert_problem(client.get("/v1/nothing-here"), 404)
        assert_problem(client.put("/health"), 405)
        assert client.get("/health").json()["status"] == "ok"


def test_rate_limit_per_key(root: Path) -> None:
    settings = ServerSettings(mcp=False, rate_per_second=0.01, rate_burst=3)
    store = KeyStore(root)
    key_a, _ = store.create(user="alice")
    key_b, _ = store.create(user="bob")
    with LiveServer(create_app(root, settings)) as live, httpx.Client(base_url=live.url) as c:
        for _ in range(3):
            assert c.get("/v1/me", headers=auth(key_a)).status_code == 200
        limited = c.get("/v1/me", headers=auth(key_a))
        assert_problem(limited, 429)
        assert int(limited.headers["retry-after"]) >= 1
        assert c.get("/v1/me", headers=auth(key_b)).status_code == 200


def test_timeout_middleware_answers_504_before_the_response_starts() -> None:
    async def slow(scope: Scope, receive: Receive, send: Send) -> None:
        await asyncio.sleep(5)

    async def streaming(scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await asyncio.sleep(0.2)
        await send({"type": "http.response.body", "body": b"done"})

    async def run() -> tuple[httpx.Response, httpx.Response]:
        transport = httpx.ASGITransport(app=TimeoutMiddleware(slow, seconds=0.05))
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            first = await client.get("/slow")
        transport = httpx.ASGITransport(app=TimeoutMiddleware(streaming, seconds=0.05))
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            second = await client.get("/stream")
        return first, second

    first, second = asyncio.run(run())
    assert_problem(first, 504)
    assert second.status_code == 200 and second.text == "done"


def test_keys_cli_create_ls_revoke(root: Path) -> None:
    runner = CliRunner()
    created = runner.invoke(cli_app, ["keys", "create", "--user", "alice", "--root", str(root)])
    assert created.exit_code == 0, created.output
    key = created.stdout.strip().splitlines()[-1]
    record = KeyStore(root).verify(key)
    assert record is not None and record.user == "alice"
    listed = runner.invoke(cli_app, ["keys", "ls", "--root", str(root), "--json"])
    assert json.loads(listed.stdout)["keys"][0]["id"] == record.id
    assert key not in listed.stdout
    revoked = runner.invoke(cli_app, ["keys", "revoke", record.id, "--root", str(root)])
    assert revoked.exit_code == 0
    assert KeyStore(root).verify(key) is None
    gone = runner.invoke(cli_app, ["keys", "ls", "--root", str(root), "--json"])
    assert json.loads(gone.stdout)["keys"] == []
    bad = runner.invoke(cli_app, ["keys", "create", "--user", "../x", "--root", str(root)])
    assert bad.exit_code == 1 and "invalid user name" in bad.stderr
    missing = runner.invoke(cli_app, ["keys", "revoke", "0123456789ab", "--root", str(root)])
    assert missing.exit_code == 1


def test_keys_cli_default_root_follows_home(tmp_path: Path) -> None:
    runner = CliRunner()
    home = tmp_path / "h"
    created = runner.invoke(cli_app, ["keys", "create", "--admin", "--home", str(home)])
    assert created.exit_code == 0, created.output
    assert KeyStore(home / "server").verify(created.stdout.strip().splitlines()[-1])
