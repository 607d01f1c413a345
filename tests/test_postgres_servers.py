"""Two `memagent serve` processes with different local roots on one database
behave as one service: a key made through A works on B, a note written through
A is read and searched through B, a chat started on A continues on B, and a key
revoked through B stops working on A at its next request. Neither root keeps
anything the other would need, nor a folder per user."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from bench.serving import start_serve, stop
from typer.testing import CliRunner

from memagent.agent import Conversations
from memagent.cli import app as cli_app
from memagent.core import MemoryHome
from memagent.postgres import Database, PgState


def _serve(root: Path, url: str, script: Path) -> tuple[subprocess.Popen[str], str]:
    return start_serve(
        ["--root", str(root), "--store", url, "--keyword-only", "--no-mcp",
         "--model", f"scripted:{script}"],
        env={**os.environ, "MEMAGENT_HOME": str(root / "home")},
    )  # fmt: skip


@pytest.fixture
def servers(pg_url: str, tmp_path: Path) -> Iterator[tuple[str, str]]:
    procs = []
    urls = []
    for name, reply in (("a", "Noted: Ana lives in Lisbon."), ("b", "Ana lives in Lisbon.")):
        script = tmp_path / f"{name}.json"
        script.write_text(json.dumps([json.dumps({"reply": reply})] * 3))
        proc, url = _serve(tmp_path / name, pg_url, script)
        procs.append(proc)
        urls.append(url)
    try:
        yield urls[0], urls[1]
    finally:
        for proc in procs:
            stop(proc)


def test_two_servers_on_one_database_are_one_service(
    servers: tuple[str, str], pg_url: str, tmp_path: Path
) -> None:
    a_url, b_url = servers
    made = CliRunner().invoke(cli_app, ["keys", "create", "--admin", "--store", pg_url])
    assert made.exit_code == 0, made.output
    admin = {"Authorization": f"Bearer {made.stdout.strip().splitlines()[-1]}"}
    a, b = httpx.Client(base_url=a_url, timeout=30), httpx.Client(base_url=b_url, timeout=30)
    user = f"p-{uuid.uuid4().hex[:10]}"

    # a key created through A authenticates on B
    created = a.post("/v1/admin/keys", json={"user": user}, headers=admin)
    assert created.status_code == 201, created.text
    key, key_id = created.json()["key"], created.json()["id"]
    auth = {"Authorization": f"Bearer {key}"}
    assert b.get("/v1/me", headers=auth).json()["user"] == user

    # a note written through A is read and searched through B
    put = a.put(
        "/v1/vault/notes/people/ana.md", json={"content": "# Ana\nLives in Lisbon.\n"}, headers=auth
    )
    assert put.status_code in (200, 201), put.text
    assert (
        b.get("/v1/vault/notes/people/ana.md", headers=auth).json()["content"].startswith("# Ana")
    )
    found = b.post(
        "/v1/vault/actions",
        json={"actions": [{"action": "search_files", "query": "Lisbon"}]},
        headers=auth,
    )
    assert found.status_code == 200, found.text
    assert found.json()["results"][0]["value"]["matches"][0]["path"] == "people/ana.md"
    # an episodic memory too
    assert (
        a.post("/v1/memories", json={"text": "Ana's birthday is May 3."}, headers=auth).status_code
        == 201
    )
    hits = b.get("/v1/memories/search", params={"q": "birthday"}, headers=auth).json()["hits"]
    assert [h["content"] for h in hits] == ["Ana's birthday is May 3."]

    # a chat started on A continues on B, with its history
    first = a.post("/v1/chat", json={"message": "My sister Ana lives in Lisbon."}, headers=auth)
    assert first.status_code == 200, first.text
    conversation = first.json()["conversation_id"]
    second = b.post(
        "/v1/chat",
        json={"message": "Where does Ana live?", "conversation_id": conversation},
        headers=auth,
    )
    assert second.status_code == 200, second.text
    assert second.json()["conversation_id"] == conversation
    with Database.open(pg_url, max_size=1) as db:
        home = MemoryHome.open(tmp_path / "a" / "shared")
        conv = Conversations(home, PgState(db, user)).load(conversation)
        assert [m.content for m in conv.messages if m.role == "user"] == [
            "My sister Ana lives in Lisbon.",
            "Where does Ana live?",
        ]

    # revoked through B, the key stops on A at its next request
    assert b.delete(f"/v1/admin/keys/{key_id}", headers=admin).status_code == 200
    assert a.get("/v1/me", headers=auth).status_code == 401
    assert b.get("/v1/me", headers=auth).status_code == 401

    # the local roots hold no keys, no notes and no conversations, and no user folders
    for name in ("a", "b"):
        root = tmp_path / name
        assert not (root / "users").exists()
        assert not list((root / "shared" / "state").rglob("*.json"))
        assert not list(root.rglob("keys.json"))
        assert not list(root.rglob("ana.md"))
        assert not list(root.rglob("c-*.json"))
    a.close()
    b.close()
