"""`memagent serve --store postgresql://…` over HTTP: two server apps on one
database see the same memory, users stay apart, the database going away is a
503 problem, and a server cannot start on a database it cannot reach."""

from __future__ import annotations

import shutil
import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from conftest import pg_data_dir
from memagent.postgres import Database, DatabaseUnavailable, PgKeyStore
from memagent.server import ServerSettings, create_app
from memagent.server.testing import LiveServer, assert_problem


@pytest.fixture
def two_servers(pg_url: str, tmp_path: Path) -> Iterator[tuple[httpx.Client, ...]]:
    root = tmp_path / "server"
    alice, bob = f"alice-{uuid.uuid4().hex[:6]}", f"bob-{uuid.uuid4().hex[:6]}"
    with Database.open(pg_url, max_size=1) as db:
        keys = [PgKeyStore(db).create(user=u)[0] for u in (alice, alice, bob)]
    settings = ServerSettings(mcp=False, embeddings=False, store=pg_url)
    with (
        LiveServer(create_app(root, settings)) as one,
        LiveServer(create_app(root, settings)) as two,
    ):
        clients = tuple(
            httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=10)
            for url, key in ((one.url, keys[0]), (two.url, keys[1]), (two.url, keys[2]))
        )
        yield clients
        for c in clients:
            c.close()


def test_two_servers_share_memory_and_keep_users_apart(
    two_servers: tuple[httpx.Client, ...], tmp_path: Path
) -> None:
    alice_one, alice_two, bob = two_servers
    made = alice_one.post("/v1/memories", json={"text": "The spare key is under the blue pot."})
    assert made.status_code == 201, made.text
    mid = made.json()["id"]
    got = alice_two.get(f"/v1/memories/{mid}")
    assert got.status_code == 200 and got.json()["content"].startswith("The spare key")
    hits = alice_two.get("/v1/memories/search", params={"q": "where is the spare key"})
    assert [h["id"] for h in hits.json()["hits"]] == [mid]
    assert_problem(bob.get(f"/v1/memories/{mid}"), 404)
    assert bob.get("/v1/memories/search", params={"q": "spare key"}).json()["hits"] == []
    # Chunks are not files under the server root in this mode, nor is any user's folder.
    assert not list((tmp_path / "server").rglob("chunk-*.json"))
    assert not (tmp_path / "server" / "users").exists()

    op = {
        "operation": "append",
        "file": "resource_user_food_prefs.json",
        "path": "food.likes",
        "value": {"item": "figs"},
    }
    first = alice_one.post("/v1/profile/apply", json={"operations": [op]})
    assert first.status_code == 200, first.text
    again = alice_two.post("/v1/profile/apply", json={"operations": [op]})
    assert again.json()["outcomes"][0]["status"] == "no_change"
    shown = alice_two.get("/v1/profile/user_food_prefs").json()
    likes = shown["resources"]["resource_user_food_prefs.json"]["food"]["likes"]
    assert [i["item"] for i in likes] == ["figs"]
    assert (
        bob.get("/v1/profile/user_food_prefs").json()["resources"]["resource_user_food_prefs.json"][
            "food"
        ]["likes"]
        == []
    )
    bad = alice_two.post(
        "/v1/profile/apply",
        json={"operations": [{**op, "value": {"item": "plums"}}, {**op, "operation": "remove",
                                                                     "value": {"item": "nope"}}]},
    )  # fmt: skip
    assert bad.status_code == 409
    shown = alice_one.get("/v1/profile/user_food_prefs").json()
    likes = shown["resources"]["resource_user_food_prefs.json"]["food"]["likes"]
    assert [i["item"] for i in likes] == ["figs"]


class _StalledKeys:
    """The database's key store, with every check held until `release` is set (a
    database that has stalled)."""

    def __init__(self, keys: Any) -> None:
        self.keys = keys
        self.release = threading.Event()
        self.entered = threading.Semaphore(0)

    def verify(self, presented: str) -> Any:
        self.entered.release()
        self.release.wait(60)
        return self.keys.verify(presented)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.keys, name)


def test_key_checks_run_off_the_event_loop_with_their_own_admission(
    pg_url: str, tmp_path: Path
) -> None:
    with Database.open(pg_url, max_size=1) as db:
        key, _ = PgKeyStore(db).create(user=f"dana-{uuid.uuid4().hex[:6]}")
    app = create_app(tmp_path / "server", ServerSettings(mcp=False, embeddings=False, store=pg_url))
    server = app.state.server
    server.auth_threads, server.auth_queue = 1, 1
    server.new_key_threads, server.new_key_queue = 1, 0
    auth = {"Authorization": f"Bearer {key}"}
    junk = {"Authorization": "Bearer mk_0123456789ab_" + "x" * 40}

    def waiting_for_a_thread(known: bool, future: Any) -> None:
        while server._auth_limiters[known].statistics().tasks_waiting < 1:
            assert not future.done()
            threading.Event().wait(0.01)

    with LiveServer(app) as live, ThreadPoolExecutor(3) as pool:
        client = httpx.Client(base_url=live.url, timeout=30)
        assert client.get("/v1/me", headers=auth).status_code == 200  # now a known key
        stalled = _StalledKeys(server.keys)
        server.keys = stalled  # the database stalls
        # made-up tokens: one thread of their own, no queue
        flood = pool.submit(client.get, "/v1/me", headers=junk)
        assert stalled.entered.acquire(timeout=30)
        assert_problem(client.get("/v1/me", headers=junk), 503)
        # the known key is not behind them: its own thread, and a queue of one
        held = pool.submit(client.get, "/v1/me", headers=auth)
        assert stalled.entered.acquire(timeout=30)
        waiting = pool.submit(client.get, "/v1/me", headers=auth)
        waiting_for_a_thread(True, waiting)
        # the event loop is free while the database is stuck: /health answers
        assert client.get("/health").status_code == 200
        # one more key check than the pool and its queue hold: 503 at once, no thread
        refused = client.get("/v1/me", headers=auth)
        assert "checking API keys" in assert_problem(refused, 503)["detail"]
        assert int(refused.headers["Retry-After"]) >= 1
        stalled.release.set()
        assert held.result().status_code == 200
        assert waiting.result().status_code == 200
        assert_problem(flood.result(), 401)
        assert client.get("/v1/me", headers=auth).json()["user"].startswith("dana-")
        client.close()


def test_database_stopped_is_503_and_unreachable_database_refuses_to_start(
    tmp_path: Path,
) -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pgserver

        data = pg_data_dir()
        own = pgserver.get_server(data / "pg", cleanup_mode="stop")
    own.psql("CREATE EXTENSION IF NOT EXISTS vector;")
    root = tmp_path / "server"
    with Database.open(own.get_uri(), max_size=1) as db:
        key, _ = PgKeyStore(db).create(user="carol")
    settings = ServerSettings(mcp=False, embeddings=False, store=own.get_uri())
    app = create_app(root, settings)
    with LiveServer(app) as live:
        client = httpx.Client(
            base_url=live.url, headers={"Authorization": f"Bearer {key}"}, timeout=30
        )
        assert client.post("/v1/memories", json={"text": "kept"}).status_code == 201
        own.cleanup()  # PostgreSQL stops under the running server
        shutil.rmtree(data, ignore_errors=True)
        problem = assert_problem(client.post("/v1/memories", json={"text": "lost?"}), 503)
        assert "database" in problem["detail"]
        client.close()
    down = f"postgresql://postgres:@/postgres?host={tmp_path}"
    with pytest.raises(DatabaseUnavailable):
        create_app(root, ServerSettings(mcp=False, store=down))
