"""The web page (`/ui`) in-process: each page and every edit it offers, on the
local and the PostgreSQL backend. Sign-in, sessions and hostile input are in
`test_server_ui_security.py`."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from memagent.server import ServerSettings, create_app
from memagent.server.ui.pages_profile import _tail
from ui_support import Setup, assert_inert, memory_of, sign_in, ui_server


@pytest.fixture
def s(tmp_path: Path) -> Iterator[Setup]:
    with ui_server(tmp_path) as setup:
        yield setup


def test_note_edit_refuses_a_conflicting_save(s: Setup) -> None:
    alice = memory_of(s, "alice")
    alice.write_note("entities/jane.md", "# Jane\n\nLikes tea.\n")
    client, csrf = sign_in(s, "alice")
    form = client.get("/ui/notes/edit", params={"path": "entities/jane.md"}).text
    base = re.search(r'name="base" value="([^"]+)"', form)
    assert base
    alice.write_note("entities/jane.md", "# Jane\n\nLikes coffee now.\n")  # meanwhile
    stale = client.post(
        "/ui/notes/save",
        data={
            "csrf": csrf,
            "path": "entities/jane.md",
            "content": "# Jane\n\nMine.\n",
            "base": base.group(1),
        },
    )
    assert stale.status_code == 409 and "changed since you opened it" in stale.text
    assert "Mine." in stale.text  # the person's text is given back
    assert alice.read_note("entities/jane.md") == "# Jane\n\nLikes coffee now.\n"
    fresh = re.search(r'name="base" value="([^"]+)"', stale.text)
    assert fresh
    ok = client.post(
        "/ui/notes/save",
        data={
            "csrf": csrf,
            "path": "entities/jane.md",
            "content": "# Jane\n\nMine.\n",
            "base": fresh.group(1),
        },
    )
    assert ok.status_code == 303
    assert alice.read_note("entities/jane.md") == "# Jane\n\nMine.\n"
    limit = alice.home.config.limits.max_file_bytes
    big = client.post(
        "/ui/notes/save",
        data={"csrf": csrf, "path": "big.md", "content": "x" * (limit + 1), "base": "new"},
    )
    assert big.status_code in (400, 413)
    assert not (alice.home.layout.vault / "big.md").exists()


def test_wikilink_and_backlink(s: Setup) -> None:
    alice = memory_of(s, "alice")
    alice.write_note("entities/jane_doe.md", "# Jane Doe\n\nFriend. See [[user]].\n")
    alice.write_note("user.md", "# Me\n\nMy friend [[Jane Doe]].\n")
    client, _ = sign_in(s, "alice")
    follow = client.get("/ui/notes/link", params={"to": "Jane Doe"})
    assert follow.status_code == 303
    assert follow.headers["location"] == "/ui/notes/view?path=entities/jane_doe.md"
    view = client.get(follow.headers["location"]).text
    assert 'href="/ui/notes/view?path=user.md"' in view  # backlink
    assert client.get("/ui/notes/link", params={"to": "Nobody"}).status_code == 404
    found = client.get("/ui/search", params={"q": "sister friend", "kind": "note"}).text
    link = re.search(r'class="hit-text"><a href="(/ui/notes/view\?path=[^"]+)">', found)
    assert link, found[-2000:]
    assert client.get(link.group(1).replace("&amp;", "&")).status_code == 200


def test_memory_edit_delete_restore_undo(s: Setup) -> None:
    alice = memory_of(s, "alice")
    mid = alice.remember("The wifi password is hunter2.", tags=["home"])[0].id
    client, csrf = sign_in(s, "alice")
    r = client.post(
        f"/ui/memories/{mid}/edit",
        data={
            "csrf": csrf,
            "text": "The wifi password is correcthorse.",
            "tags": "home, wifi",
            "type": "fact",
        },
    )
    assert r.status_code == 303
    found = client.get("/ui/search", params={"q": "correcthorse"}).text
    assert mid in found and "data-score=" in found and "Matches ‘correcthorse’" in found
    assert (
        client.get("/ui/search", params={"q": "correcthorse", "tag": "nothing"}).text.count(mid)
        == 0
    )
    for bad in (
        {"text": "", "tags": ""},
        {"text": "x", "tags": "two words"},
        {"text": "x", "type": "rumour"},
    ):
        assert (
            client.post(f"/ui/memories/{mid}/edit", data={"csrf": csrf, **bad}).status_code == 400
        )
    assert client.post(f"/ui/memories/{mid}/delete", data={"csrf": csrf}).status_code == 303
    assert mid not in client.get("/ui/search", params={"q": "correcthorse"}).text
    assert "deleted" in client.get(f"/ui/memories/{mid}").text
    first = alice.history(mid)[0].edit
    conflict = client.post("/ui/activity/undo", data={"csrf": csrf, "chunk": mid, "edit": first})
    assert conflict.status_code == 409  # deleted since: no silent overwrite
    assert "changed since" in conflict.text
    assert client.post(f"/ui/memories/{mid}/restore", data={"csrf": csrf}).status_code == 303
    activity = client.get("/ui/activity").text
    assert "correcthorse" in activity and "hunter2" in activity
    undo = client.post("/ui/activity/undo", data={"csrf": csrf, "chunk": mid, "edit": first})
    assert undo.status_code == 303
    assert alice.get(mid).content == "The wifi password is hunter2."
    assert client.get("/ui/memories/chunk-20240101-000000000000").status_code == 404
    assert client.get("/ui/memories/chunk-..%2F..%2Fkeys").status_code == 404


def test_memories_pages_cover_every_chunk_once(s: Setup) -> None:
    from memagent.memory.chunks import ChunkDraft

    alice = memory_of(s, "alice")
    same = "2024-05-01T10:00:00+00:00"
    drafts = [ChunkDraft(content=f"Bulk memory number {i}.", created_at=same) for i in range(70)]
    drafts += [
        ChunkDraft(content=f"Later memory {i}.", created_at=f"2024-05-02T10:00:{i:02d}+00:00")
        for i in range(40)
    ]
    made = {c.id for c in alice.chunks.create_many(drafts, auto_link=False)}
    client, _ = sign_in(s, "alice")
    seen: list[str] = []
    url = "/ui/memories"
    for _ in range(10):
        html = client.get(url).text
        seen += re.findall(r'class="memory-text"><a href="/ui/memories/(chunk-[^"]+)">', html)
        nxt = re.search(r'<a rel="next" href="([^"]+)"', html)
        if not nxt:
            break
        url = nxt.group(1).replace("&amp;", "&")
    assert len(seen) == len(set(seen)) == 110
    assert set(seen) == made
    assert client.get("/ui/memories", params={"before": "x:1"}).status_code == 400


def test_profile_expiry_remove_history_undo(s: Setup) -> None:
    alice = memory_of(s, "alice")
    alice.profile_apply(
        [{"operation": "append", "file": "resource_user_food_prefs.json", "path": "food.likes",
          "value": {"item": "dumplings"}}]
    )  # fmt: skip
    client, csrf = sign_in(s, "alice")
    base = {
        "csrf": csrf,
        "file": "resource_user_food_prefs.json",
        "path": "food.likes",
        "item": "dumplings",
    }
    r = client.post(
        "/ui/profile/item",
        data={**base, "action": "save", "display": "Dumplings", "expiry": "2999-01-01"},
    )
    assert r.status_code == 303
    assert "2999-01-01" in client.get("/ui/profile").text
    assert (
        client.post(
            "/ui/profile/item", data={**base, "action": "save", "expiry": "yesterday"}
        ).status_code
        == 400
    )
    assert (
        client.post(
            "/ui/profile/item", data={**base, "action": "save", "expiry": "2001-01-01"}
        ).status_code
        == 400
    )
    assert client.post("/ui/profile/item", data={**base, "action": "explode"}).status_code == 400
    assert client.post(
        "/ui/profile/item", data={**base, "file": "../../keys.json", "action": "remove"}
    ).status_code in (400, 409)
    assert client.post("/ui/profile/item", data={**base, "action": "clear"}).status_code == 303
    shown = alice.profile_show("user_food_prefs")["resource_user_food_prefs.json"]["food"]["likes"]
    assert shown[0]["expiry"] is None and shown[0]["display"] == "Dumplings"
    assert client.post("/ui/profile/item", data={**base, "action": "remove"}).status_code == 303
    history = client.get("/ui/profile/history", params={"item": "dumplings"}).text
    batch = re.findall(r'name="batch" value="([^"]+)"', history)
    assert batch
    assert (
        client.post("/ui/activity/undo", data={"csrf": csrf, "batch": batch[0]}).status_code == 303
    )
    shown = alice.profile_show("user_food_prefs")["resource_user_food_prefs.json"]["food"]["likes"]
    assert [i["item"] for i in shown] == ["dumplings"]


def test_status_sliders_and_persona(s: Setup) -> None:
    client, csrf = sign_in(s, "alice")
    page = client.get("/ui/status").text
    assert "Sliders of" in page and 'type="range"' in page
    assert (
        client.post(
            "/ui/status/slider", data={"csrf": csrf, "slider": "humor", "value": "85"}
        ).status_code
        == 303
    )
    assert "Humor (85)" in client.get("/ui/status").text
    for bad in ("101", "-1", "x", "1e3"):
        assert (
            client.post(
                "/ui/status/slider", data={"csrf": csrf, "slider": "humor", "value": bad}
            ).status_code
            == 400
        )
    assert client.post(
        "/ui/status/slider", data={"csrf": csrf, "slider": "../x", "value": "5"}
    ).status_code in (400, 404)
    assert client.post(
        "/ui/status/persona", data={"csrf": csrf, "persona": "../../etc"}
    ).status_code in (400, 404)


def test_chat_streams_and_shows_memories_used(s: Setup) -> None:
    alice = memory_of(s, "alice")
    alice.remember("I like green tea.", tags=["drink"])
    client, csrf = sign_in(s, "alice")
    with client.stream(
        "POST",
        "/ui/chat/stream",
        json={"message": "What do I drink?"},
        headers={"X-CSRF-Token": csrf},
    ) as r:
        assert r.status_code == 200
        body = "".join(r.iter_text())
    assert "event: delta" in body and "event: done" in body
    done = json.loads(body.split("event: done\ndata: ", 1)[1].split("\n\n", 1)[0])
    assert "green tea" in done["reply"]
    assert done["memory_sources"]
    plain = client.post("/ui/chat", data={"csrf": csrf, "message": "What do I drink?"})
    assert plain.status_code == 200 and "green tea" in plain.text
    assert_inert(plain.text)
    too_big = client.post(
        "/ui/chat/stream", content=b"{" + b" " * 70_000 + b"}", headers={"X-CSRF-Token": csrf}
    )
    assert too_big.status_code in (400, 413)
    assert (
        client.post(
            "/ui/chat/stream", content=b"not json", headers={"X-CSRF-Token": csrf}
        ).status_code
        == 400
    )


def test_activity_tail_pages_backwards(tmp_path: Path) -> None:
    log = tmp_path / "ops.jsonl"
    lines = [
        json.dumps({"ts": f"t{i}", "actor": "a", "op": "o", "path": f"p{i}"}) for i in range(130)
    ]
    log.write_text("\n".join(lines) + "\n" + '{"ts": "torn', encoding="utf-8")
    seen: list[str] = []
    end = None
    for _ in range(5):
        records, end = _tail(log, end, 50)
        seen += [r.path for r in records]
        if not end:
            break
    assert seen == [f"p{i}" for i in reversed(range(130))]
    assert _tail(tmp_path / "missing.jsonl", None, 50) == ([], 0)


def test_vendored_htmx_is_the_pinned_file() -> None:
    import memagent.server.ui as ui

    static = Path(ui.__file__).parent / "static"
    digest = hashlib.sha256((static / "htmx.min.js").read_bytes()).hexdigest()
    assert digest in (static / "VENDORED.md").read_text()


def test_ui_is_not_in_the_openapi_document(s: Setup) -> None:
    doc = TestClient(s.app).get("/openapi.json").json()
    assert not any(p.startswith("/ui") for p in doc["paths"])


def test_undo_a_note_edit_from_activity(s: Setup) -> None:
    alice = memory_of(s, "alice")
    alice.write_note("entities/bob.md", "# Bob\n\nLikes chess.\n")
    alice.write_note("entities/bob.md", "# Bob\n\nLikes go.\n")
    client, csrf = sign_in(s, "alice")
    html = client.get("/ui/activity").text
    ts = re.search(
        r'name="note" value="vault/entities/bob.md"><input type="hidden" name="ts" value="([^"]+)"',
        html,
    )
    assert ts
    data = {"csrf": csrf, "note": "vault/entities/bob.md", "ts": ts.group(1)}
    alice.write_note("entities/bob.md", "# Bob\n\nLikes poker.\n")  # changed since
    assert client.post("/ui/activity/undo", data=data).status_code == 409
    assert alice.read_note("entities/bob.md") == "# Bob\n\nLikes poker.\n"
    alice.write_note("entities/bob.md", "# Bob\n\nLikes go.\n")
    assert client.post("/ui/activity/undo", data=data).status_code == 303
    assert alice.read_note("entities/bob.md") == "# Bob\n\nLikes chess.\n"
    forged = {**data, "note": "vault/../config.toml"}
    assert client.post("/ui/activity/undo", data=forged).status_code == 404
    assert client.post("/ui/activity/undo", data={**data, "ts": "x" * 100}).status_code == 400


def test_page_on_the_postgresql_backend(pg_url: str, tmp_path: Path) -> None:
    """Under `serve --store postgresql://…` the page edits the database: an edit made
    through one server is seen, undone and audited through another."""
    import uuid

    from memagent.postgres import Database, PgKeyStore

    alice, bob = f"alice-{uuid.uuid4().hex[:6]}", f"bob-{uuid.uuid4().hex[:6]}"
    with Database.open(pg_url, max_size=1) as db:
        keys = {u: PgKeyStore(db).create(user=u)[0] for u in (alice, bob)}
    settings = ServerSettings(mcp=False, embeddings=False, store=pg_url)
    one = create_app(tmp_path / "one", settings)
    two = create_app(tmp_path / "two", settings)
    with TestClient(one), TestClient(two):
        a1, csrf1 = sign_in(Setup(tmp_path, keys, one), alice)
        a2, csrf2 = sign_in(Setup(tmp_path, keys, two), alice)
        b2, _ = sign_in(Setup(tmp_path, keys, two), bob)
        mid = one.state.server.memory_for(alice).remember("The spare key is under the pot.")[0].id
        r = a1.post(
            f"/ui/memories/{mid}/edit", data={"csrf": csrf1, "text": "Under the mat.", "tags": ""}
        )
        assert r.status_code == 303
        assert mid in a2.get("/ui/search", params={"q": "mat"}).text
        assert "Under the mat." in a2.get("/ui/activity").text
        assert b2.get(f"/ui/memories/{mid}").status_code == 404
        assert a2.post(f"/ui/memories/{mid}/undo", data={"csrf": csrf2}).status_code == 303
        assert "The spare key is under the pot." in a1.get(f"/ui/memories/{mid}").text
        saved = a2.post(
            "/ui/notes/save",
            data={"csrf": csrf2, "path": "entities/pot.md", "content": "# Pot\n", "base": "new"},
        )
        assert saved.status_code == 303
        assert "# Pot" in a1.get("/ui/notes/edit", params={"path": "entities/pot.md"}).text
        assert a1.get("/ui/profile").status_code == 200
        assert (
            a2.post(
                "/ui/status/slider", data={"csrf": csrf2, "slider": "humor", "value": "95"}
            ).status_code
            == 303
        )
        assert "Humor (95)" in a1.get("/ui/status").text  # the choice is in the database
        # One sign-in works on every server of the service (a signed cookie).
        roaming = TestClient(two, follow_redirects=False)
        roaming.cookies.set("memagent_ui", a1.cookies["memagent_ui"], path="/ui")
        assert "signed in as " + alice in roaming.get("/ui/search").text
        assert roaming.post(f"/ui/memories/{mid}/undo", data={"csrf": csrf1}).status_code in (
            303,
            404,
        )
        assert a2.post("/ui/logout", data={"csrf": csrf2}).status_code == 303
        one.state.ui.signed.ttl = 0  # let server one see the rotated secret at once
        one.state.ui.signed._cache.clear()
        assert a1.get("/ui/search").status_code == 303  # signed out everywhere
    for root in (tmp_path / "one", tmp_path / "two"):  # nothing of a user is local
        assert not (root / "users").exists()
        shared = root / "shared"
        assert [p.name for p in (shared / "vault").rglob("*.md")] == ["user.md"]
        assert not list((shared / "state").rglob("*.json"))


def test_activity_reads_across_segments_and_restores_blobs(tmp_path: Path) -> None:
    from memagent.core.oplog import BLOB_KEY, blob_path, segment_name

    log = tmp_path / "log" / "ops.jsonl"
    log.parent.mkdir()
    digest = "sha256:" + hashlib.sha256(b"big text").hexdigest()
    blob = blob_path(log, digest)
    blob.parent.mkdir()
    blob.write_text("big text", encoding="utf-8")
    lines = [
        json.dumps({"ts": f"t{i}", "actor": "a", "op": "o", "path": f"p{i}"}).encode() + b"\n"
        for i in range(120)
    ]
    lines[5] = (
        json.dumps(
            {"ts": "t5", "actor": "vault", "op": "update", "path": "p5",
             "meta": {"old_content": {BLOB_KEY: digest}, "new_content": "x"}}
        ).encode()
        + b"\n"
    )  # fmt: skip
    first, second = b"".join(lines[:70]), b"".join(lines[70:])
    (log.parent / segment_name(0)).write_bytes(first)
    log.write_bytes(second)
    seen = []
    end = None
    for _ in range(5):
        records, end = _tail(log, end, 50)
        seen += records
        if not end:
            break
    assert [r.path for r in seen] == [f"p{i}" for i in reversed(range(120))]
    assert next(r for r in seen if r.path == "p5").meta == {
        "old_content": "big text",
        "new_content": "x",
    }
