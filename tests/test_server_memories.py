"""`/v1/memories` and `/v1/vault` end to end over loopback, with two users kept apart."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from memagent.server import KeyStore, ServerSettings, create_app
from memagent.server.testing import LiveServer, assert_problem


@dataclass
class Setup:
    root: Path
    alice: httpx.Client
    bob: httpx.Client
    admin: httpx.Client


def ids(response: httpx.Response) -> list[str]:
    assert response.status_code == 200, response.text
    return [h["id"] for h in response.json()["hits"]]


@pytest.fixture
def s(tmp_path: Path) -> Iterator[Setup]:
    root = tmp_path / "server"
    store = KeyStore(root)
    keys = {u: store.create(user=u)[0] for u in ("alice", "bob")}
    admin_key, _ = store.create(user=None, admin=True)
    settings = ServerSettings(mcp=False, embeddings=False, max_body_bytes=64_000)
    with LiveServer(create_app(root, settings)) as live:
        clients = {
            name: httpx.Client(base_url=live.url, headers={"Authorization": f"Bearer {key}"})
            for name, key in {**keys, "admin": admin_key}.items()
        }
        yield Setup(root, clients["alice"], clients["bob"], clients["admin"])
        for c in clients.values():
            c.close()


def test_remember_search_get_list_forget_restore(s: Setup) -> None:
    made = s.alice.post("/v1/memories", json={"text": "Jane prefers green tea.", "tags": ["jane"]})
    assert made.status_code == 201
    mid = made.json()["id"]
    assert made.json()["ids"] == [mid]
    assert (s.root / "users" / "alice" / "chunks").is_dir()

    hits = s.alice.get("/v1/memories/search", params={"q": "what tea does Jane like", "k": 3})
    assert hits.status_code == 200
    assert hits.json()["hits"][0]["id"] == mid
    tagged = s.alice.get("/v1/memories/search", params={"q": "tea", "tag": "nobody"})
    assert tagged.json()["hits"] == []
    only_notes = s.alice.get("/v1/memories/search", params={"q": "tea", "kind": "note"})
    assert mid not in ids(only_notes)

    got = s.alice.get(f"/v1/memories/{mid}").json()
    assert got["content"] == "Jane prefers green tea." and got["tags"] == ["jane"]
    assert [m["id"] for m in s.alice.get("/v1/memories").json()["memories"]] == [mid]

    assert s.alice.delete(f"/v1/memories/{mid}").json() == {
        "id": mid,
        "deleted": True,
        "hard": False,
    }
    assert mid not in ids(s.alice.get("/v1/memories/search", params={"q": "green tea"}))
    assert s.alice.get("/v1/memories").json()["memories"] == []
    listed = s.alice.get("/v1/memories", params={"include_deleted": True}).json()["memories"]
    assert listed[0]["deleted"] is True

    restored = s.alice.post(f"/v1/memories/{mid}/restore")
    assert restored.status_code == 200 and restored.json()["deleted"] is False
    assert mid in ids(s.alice.get("/v1/memories/search", params={"q": "green tea"}))

    hard = s.alice.delete(f"/v1/memories/{mid}", params={"hard": True})
    assert hard.json()["hard"] is True
    assert_problem(s.alice.get(f"/v1/memories/{mid}"), 404)


def test_another_users_memory_is_404_on_every_route(s: Setup) -> None:
    mid = s.alice.post("/v1/memories", json={"text": "Alice's secret plan"}).json()["id"]
    assert_problem(s.bob.get(f"/v1/memories/{mid}"), 404)
    assert_problem(s.bob.delete(f"/v1/memories/{mid}"), 404)
    assert_problem(s.bob.delete(f"/v1/memories/{mid}", params={"hard": True}), 404)
    assert_problem(s.bob.post(f"/v1/memories/{mid}/restore"), 404)
    assert mid not in ids(s.bob.get("/v1/memories/search", params={"q": "secret plan"}))
    assert s.bob.get("/v1/memories").json()["memories"] == []
    # Alice's memory is untouched by Bob's attempts.
    assert s.alice.get(f"/v1/memories/{mid}").json()["deleted"] is False
    # A user-less admin key has no memory at all.
    assert_problem(s.admin.get("/v1/memories"), 403)


def test_memory_input_is_validated_and_nothing_is_written(s: Setup) -> None:
    s.alice.get("/v1/memories")  # creates alice's home
    chunks = s.root / "users" / "alice" / "chunks"
    bad_bodies: list[object] = [
        {},
        {"text": ""},
        {"text": 5},
        {"text": "x", "tags": "notalist"},
        {"text": "x", "tags": ["bad tag!"]},
        {"text": "x", "type": "gossip"},
        {"text": "x", "created_at": "yesterday-ish"},
        {"text": "x", "extra": 1},
        ["text"],
    ]
    for out_of_range in ("0001-01-01T00:30:00+01:00", "9999-12-31T23:59:59-01:00", "0999-05-01"):
        r = s.alice.post("/v1/memories", json={"text": "x", "created_at": out_of_range})
        assert_problem(r, 400)  # a validation problem like any other bad field, never a 500
        assert "out of range" in r.text
    for body in bad_bodies:
        r = s.alice.post("/v1/memories", json=body)
        assert r.status_code in (400, 422), (body, r.text)
        assert_problem(r, r.status_code)
    malformed = s.alice.post(
        "/v1/memories", content=b'{"text": "x"', headers={"content-type": "application/json"}
    )
    assert_problem(malformed, 400)
    assert_problem(s.alice.post("/v1/memories", json={"text": "x" * 100_000}), 413)
    assert_problem(s.alice.get("/v1/memories/not-an-id"), 404)
    assert_problem(s.alice.delete("/v1/memories/search"), 405)
    assert_problem(s.alice.get("/v1/memories/chunk-20260101-000000000000"), 404)
    assert_problem(s.alice.get("/v1/memories/search", params={"q": ""}), 422)
    assert_problem(s.alice.get("/v1/memories/search", params={"q": "x", "k": 0}), 422)
    assert_problem(s.alice.get("/v1/memories/search", params={"q": "x" * 5000}), 422)
    hostile = s.alice.get("/v1/memories/search", params={"q": '") OR 1=1 -- "*'})
    assert hostile.status_code == 200
    assert all(h["kind"] == "note" for h in hostile.json()["hits"])
    assert not any(p.suffix == ".json" for p in chunks.rglob("*"))


def test_vault_notes_read_write_list_delete_and_actions(s: Setup) -> None:
    put = s.alice.put("/v1/vault/notes/entities/jane.md", json={"content": "# Jane\n"})
    assert put.status_code == 200 and put.json()["created"] is True
    again = s.alice.put("/v1/vault/notes/entities/jane.md", json={"content": "# Jane\ntea\n"})
    assert again.json()["created"] is False
    note = s.alice.get("/v1/vault/notes/entities/jane.md").json()
    assert note == {"path": "entities/jane.md", "content": "# Jane\ntea\n"}
    entries = s.alice.get("/v1/vault/notes").json()["entries"]
    assert "entities/jane.md" in entries and "user.md" in entries

    actions = [
        {"action": "read_file", "path": "entities/jane.md", "assign_to": "jane"},
        {"action": "create_file", "path": "entities/tom.md", "content": "# Tom"},
    ]
    ran = s.alice.post("/v1/vault/actions", json={"actions": actions}).json()
    assert ran["ok"] is True and ran["succeeded"] == 2
    text = '<actions>[{"action": "check_file_exists", "path": "entities/tom.md"}]</actions>'
    ran = s.alice.post("/v1/vault/actions", json={"text": text}).json()
    assert ran["results"][0]["value"] is True

    deleted = s.alice.delete("/v1/vault/notes/entities/tom.md")
    assert deleted.json() == {"path": "entities/tom.md", "deleted": True}
    assert_problem(s.alice.get("/v1/vault/notes/entities/tom.md"), 404)


def test_vault_is_per_user_and_confined(s: Setup) -> None:
    s.alice.put("/v1/vault/notes/private.md", json={"content": "alice only"})
    assert_problem(s.bob.get("/v1/vault/notes/private.md"), 404)
    assert_problem(s.bob.delete("/v1/vault/notes/private.md"), 404)
    assert "private.md" not in s.bob.get("/v1/vault/notes").json()["entries"]
    bob_reads = s.bob.post(
        "/v1/vault/actions", json={"actions": [{"action": "read_file", "path": "private.md"}]}
    ).json()
    assert bob_reads["ok"] is False
    # Paths that try to leave the vault (or the user's home) are refused.
    for path in ["../../bob/vault/user.md", "..%2F..%2Fkeys.json", "%2Fetc%2Fpasswd"]:
        r = s.bob.get(f"/v1/vault/notes/{path}")
        assert r.status_code in (400, 404), (path, r.text)
    escape = s.bob.post(
        "/v1/vault/actions",
        json={"actions": [{"action": "read_file", "path": "../../alice/vault/private.md"}]},
    ).json()
    assert escape["ok"] is False and "alice only" not in str(escape)
    assert s.alice.get("/v1/vault/notes/private.md").json()["content"] == "alice only"


def test_vault_rejects_bad_input_without_writing(s: Setup) -> None:
    s.alice.put("/v1/vault/notes/a.md", json={"content": "original"})
    for body in [{}, {"content": 3}, {"content": "x", "more": 1}, []]:
        r = s.alice.put("/v1/vault/notes/a.md", json=body)
        assert r.status_code in (400, 422), r.text
    assert_problem(s.alice.put("/v1/vault/notes/a.md", json={"content": "x" * 70_000}), 413)
    assert_problem(s.alice.post("/v1/vault/actions", json={}), 400)
    assert_problem(s.alice.post("/v1/vault/actions", json={"actions": [], "text": "x"}), 400)
    bad = s.alice.post("/v1/vault/actions", json={"actions": [{"action": "format_disk"}]})
    assert_problem(bad, 400)
    assert s.alice.get("/v1/vault/notes/a.md").json()["content"] == "original"


def test_patch_history_undo_and_other_user_404(s: Setup) -> None:
    mid = s.alice.post("/v1/memories", json={"text": "Jane likes jasmine tea."}).json()["id"]
    patched = s.alice.patch(
        f"/v1/memories/{mid}", json={"text": "Jane likes rooibos.", "tags": ["jane"]}
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["content"] == "Jane likes rooibos." and patched.json()["tags"] == ["jane"]
    assert ids(s.alice.get("/v1/memories/search", params={"q": "rooibos"})) == [mid]
    hist = s.alice.get(f"/v1/memories/{mid}/history").json()["edits"]
    assert hist[0]["before"]["content"] == "Jane likes jasmine tea."
    # Bob cannot see, edit, read the history of, or undo Alice's memory.
    assert_problem(s.bob.patch(f"/v1/memories/{mid}", json={"text": "mine"}), 404)
    assert_problem(s.bob.get(f"/v1/memories/{mid}/history"), 404)
    assert_problem(s.bob.post(f"/v1/memories/{mid}/undo"), 404)
    assert_problem(s.bob.post(f"/v1/memories/{mid}/undo", params={"edit": hist[0]["edit"]}), 404)
    for body in [
        {},
        {"text": ""},
        {"text": 5},
        {"tags": "jane"},
        {"tags": ["x" * 65]},
        {"type": "rumour"},
        {"text": "ok", "owner": "bob"},
    ]:
        r = s.alice.patch(f"/v1/memories/{mid}", json=body)
        assert r.status_code in (400, 422), (body, r.text)
    assert_problem(s.alice.patch(f"/v1/memories/{mid}", json={"tags": ["two words"]}), 400)
    big = s.alice.patch(f"/v1/memories/{mid}", json={"text": "x" * 70_000})
    assert big.status_code == 413
    assert s.alice.patch("/v1/memories/chunk-..%2F..%2Fkeys", json={"text": "x"}).status_code == 404
    assert_problem(s.alice.post(f"/v1/memories/{mid}/undo", params={"edit": "edit-zz"}), 422)
    undone = s.alice.post(f"/v1/memories/{mid}/undo")
    assert undone.status_code == 200 and undone.json()["op"] == "undo"
    assert s.alice.get(f"/v1/memories/{mid}").json()["content"] == "Jane likes jasmine tea."
    assert_problem(s.alice.post(f"/v1/memories/{mid}/undo"), 404)


def test_quota_is_a_507_problem_and_nothing_is_written(tmp_path: Path) -> None:
    root = tmp_path / "server"
    key, _ = KeyStore(root).create(user="alice")
    settings = ServerSettings(mcp=False, embeddings=False, quota_chunks=1, quota_bytes=200_000)
    with LiveServer(create_app(root, settings)) as live:
        client = httpx.Client(base_url=live.url, headers={"Authorization": f"Bearer {key}"})
        assert client.post("/v1/memories", json={"text": "first"}).status_code in (200, 201)
        over = client.post("/v1/memories", json={"text": "second"})
        body = assert_problem(over, 507)
        assert body["type"] == "urn:memagent:problem:quota-exceeded"
        assert "quotas.max_chunks" in body["detail"]
        chunks = root / "users" / "alice" / "chunks"
        assert len(list(chunks.rglob("*.json"))) == 1
        big = client.put("/v1/vault/notes/big.md", json={"content": "x" * 250_000})
        assert big.status_code in (413, 507), big.text
        assert not (root / "users" / "alice" / "vault" / "big.md").exists()
        client.close()
