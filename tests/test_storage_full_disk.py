"""A full disk: every write route answers 507 `insufficient-storage` (not 500),
nothing is half-written, and a `remember` that failed leaves no chunk file
behind, so a retry stores it once. The full disk is injected (`OSError(ENOSPC)`
from the storage's file writes or its log, SQLite's "database or disk is full"
from the index): mounting a tiny tmpfs needs privileges a test run may lack."""

from __future__ import annotations

import errno
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from memagent.cli import app as cli_app
from memagent.core import MemoryHome, StorageFull
from memagent.core.storage import Storage, is_full
from memagent.index.sqlite import Index
from memagent.server import KeyStore, ServerSettings, create_app
from memagent.server.testing import assert_problem

FOOD = "resource_user_food_prefs.json"
APPEND = {"operation": "append", "file": FOOD, "path": "food.likes", "value": {"item": "tea"}}


def _no_space(*_: Any, **__: Any) -> None:
    raise OSError(errno.ENOSPC, "No space left on device")


@pytest.fixture
def client(tmp_path: Path) -> Iterator[tuple[TestClient, Path]]:
    root = tmp_path / "server"
    key = KeyStore(root).create(user="alice")[0]
    app = create_app(root, ServerSettings(mcp=False, ui=False, embeddings=False))
    auth = {"Authorization": f"Bearer {key}"}
    with TestClient(app, headers=auth, raise_server_exceptions=False) as c:
        yield c, root / "users" / "alice"


def _files(home: Path) -> dict[str, bytes]:
    return {
        p.relative_to(home).as_posix(): p.read_bytes()
        for p in home.rglob("*")
        if p.is_file() and "index" not in p.name and not p.name.endswith((".lock", "-wal", "-shm"))
    }


WRITES: list[tuple[str, str, dict[str, Any] | None]] = [
    ("POST", "/v1/memories", {"text": "I like green tea."}),
    ("PUT", "/v1/vault/notes/new.md", {"content": "a new note"}),
    ("PUT", "/v1/vault/notes/old.md", {"content": "changed"}),
    ("DELETE", "/v1/vault/notes/old.md", None),
    ("PATCH", "/v1/memories/{id}", {"text": "edited"}),
    ("DELETE", "/v1/memories/{id}", None),
    ("POST", "/v1/profile/apply", {"operations": [APPEND]}),
]


@pytest.mark.parametrize("where", ["_atomic_replace", "_log"])
@pytest.mark.parametrize(("method", "path", "body"), WRITES)
def test_every_write_route_answers_507_and_changes_nothing(
    client: tuple[TestClient, Path],
    monkeypatch: pytest.MonkeyPatch,
    where: str,
    method: str,
    path: str,
    body: dict[str, Any] | None,
) -> None:
    c, home = client
    if (method, path, where) == ("DELETE", "/v1/vault/notes/old.md", "_atomic_replace"):
        pytest.skip("removing a note writes no file data (it frees space)")
    assert c.put("/v1/vault/notes/old.md", json={"content": "old"}).status_code == 200
    made = c.post("/v1/memories", json={"text": "An earlier memory."})
    assert made.status_code == 201, made.text
    chunk_id = made.json()["memories"][0]["id"]
    before = _files(home)
    monkeypatch.setattr(Storage, where, _no_space)
    r: Any = c.request(method, path.format(id=chunk_id), json=body)
    problem = assert_problem(r, 507)
    assert problem["type"].endswith("insufficient-storage"), problem
    assert "no space" in problem["detail"].lower()
    monkeypatch.undo()
    after = _files(home)
    if where == "_atomic_replace":
        assert after == before  # the write never happened
    else:  # the file may be rewritten before its log line fails; never a new file
        assert set(after) <= set(before) | {"log/ops.jsonl"}, set(after) - set(before)


def test_a_full_index_leaves_no_chunk_behind_over_http(
    client: tuple[TestClient, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    c, home = client
    assert c.post("/v1/memories", json={"text": "An earlier memory."}).status_code == 201
    before = sorted((home / "chunks").rglob("*.json"))

    def full(*_: Any, **__: Any) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(Index, "upsert", full)
    r: Any = c.post("/v1/memories", json={"text": "I like green tea."})
    assert_problem(r, 507)
    assert sorted((home / "chunks").rglob("*.json")) == before


@pytest.mark.parametrize("where", ["log", "index"])
def test_cli_remember_on_a_full_disk_leaves_nothing_and_a_retry_stores_once(
    home: MemoryHome, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    runner = CliRunner()
    first = runner.invoke(cli_app, ["remember", "--home", str(home.root), "An earlier memory."])
    assert first.exit_code == 0, first.output  # the index exists: the failure is the new one's
    args = ["remember", "--home", str(home.root), "I like green tea."]
    if where == "log":
        monkeypatch.setattr(Storage, "_log", _no_space)
    else:

        def full(*_: Any, **__: Any) -> None:
            raise sqlite3.OperationalError("database or disk is full")

        monkeypatch.setattr(Index, "upsert", full)
    failed = runner.invoke(cli_app, args)
    assert failed.exit_code != 0 and "Traceback" not in failed.output
    assert "no space" in failed.output.lower()
    assert len(list(home.root.glob("chunks/*/*.json"))) == 1
    monkeypatch.undo()
    again = runner.invoke(cli_app, args)
    assert again.exit_code == 0, again.output
    assert len(list(home.root.glob("chunks/*/*.json"))) == 2


def test_storage_turns_a_full_disk_into_storage_full(home: MemoryHome, tmp_path: Path) -> None:
    storage = home.storage
    original = Storage._atomic_replace

    def partial(self: Storage, target: Path, data: bytes) -> None:
        original(self, target, data)  # the file lands, then the log cannot be written

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Storage, "_atomic_replace", partial)
        mp.setattr(Storage, "_log", _no_space)
        with pytest.raises(StorageFull, match="no space left"):
            storage.write_text("vault/fresh.md", "x", actor="t", op="create")
    assert not (home.root / "vault" / "fresh.md").exists()
    assert is_full(OSError(errno.EDQUOT, "quota")) and not is_full(OSError(errno.EIO, "io"))
    assert is_full(sqlite3.OperationalError("database or disk is full"))
    assert not is_full(sqlite3.OperationalError("no such table"))
