"""The web page (`/ui`) in-process: sign-in, sessions, CSRF, users kept apart,
hostile content shown inert, path tricks refused, and every edit it offers."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from memagent import Memory
from memagent.core import MemoryHome
from memagent.llm import ScriptedLLM
from memagent.server import KeyStore, ServerSettings, create_app
from memagent.server.local_ui import local_app
from memagent.server.ui.pages_profile import _tail

XSS = [
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(2)">',
    "[click](javascript:alert(3))",
    '<a href="javascript:alert(4)">x</a>',
    '"><svg onload=alert(5)>',
    "<iframe src=javascript:alert(6)></iframe>",
    '[[x" onmouseover="alert(7)]]',
    "![i](javascript:alert(8))",
    "<style>body{display:none}</style>",
]
STATIC_SCRIPTS = {"/ui/static/htmx.min.js", "/ui/static/ui.js"}


class _Audit(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "script" and values.get("src") not in STATIC_SCRIPTS:
            self.problems.append(f"script {attrs}")
        if tag in ("iframe", "object", "embed", "style", "svg", "base"):
            self.problems.append(f"tag {tag}")
        for name, value in attrs:
            if name.startswith("on"):
                self.problems.append(f"attribute {name}={value}")
            url = re.sub(r"[\s\x00-\x1f]", "", value or "").lower()
            if name in ("href", "src", "action", "formaction") and url.startswith(
                ("javascript:", "data:")
            ):
                self.problems.append(f"url {name}={value}")


def assert_inert(html: str) -> None:
    audit = _Audit()
    audit.feed(html)
    assert audit.problems == []


def csrf_of(html: str) -> str:
    match = re.search(r'<meta name="csrf-token" content="([^"]+)"', html)
    assert match, "no CSRF token on the page"
    return match.group(1)


@dataclass
class Setup:
    root: Path
    keys: dict[str, str]
    app: Any


def _model(messages: list[Any], schema: dict[str, Any] | None) -> str:
    props = (schema or {}).get("properties", {})
    if "facts" in props:
        return '{"facts": []}'
    if "reply" in props:
        return json.dumps({"reply": "You like green tea."})
    return "You like green tea."


@pytest.fixture
def s(tmp_path: Path) -> Iterator[Setup]:
    root = tmp_path / "server"
    store = KeyStore(root)
    keys = {u: store.create(user=u)[0] for u in ("alice", "bob")}
    keys["admin"] = store.create(user=None, admin=True)[0]
    app = create_app(root, ServerSettings(mcp=False, embeddings=False), llm=ScriptedLLM(fn=_model))
    with TestClient(app):
        yield Setup(root, keys, app)


def sign_in(s: Setup, user: str) -> tuple[TestClient, str]:
    client = TestClient(s.app, follow_redirects=False)
    form = client.get("/ui/login")
    pre = re.search(r'name="pre" value="([^"]+)"', form.text)
    assert pre
    done = client.post("/ui/login", data={"key": s.keys[user], "pre": pre.group(1)})
    assert done.status_code == 303, done.text
    page = client.get("/ui/search")
    assert page.status_code == 200
    return client, csrf_of(page.text)


def memory_of(s: Setup, user: str) -> Memory:
    memory: Memory = s.app.state.server.memory_for(user)
    return memory


def test_sign_in_cookie_and_sign_out(s: Setup) -> None:
    anon = TestClient(s.app, follow_redirects=False)
    assert anon.get("/ui/search").headers["location"] == "/ui/login"
    assert anon.get("/ui/memories").status_code == 303
    # No pre-session token (a cross-site form): refused.
    assert anon.post("/ui/login", data={"key": s.keys["alice"]}).status_code == 403
    form = anon.get("/ui/login")
    assert form.headers["content-security-policy"].startswith("default-src 'none'")
    pre = re.search(r'name="pre" value="([^"]+)"', form.text)
    assert pre
    bad = anon.post("/ui/login", data={"key": "msk_nope", "pre": pre.group(1)})
    assert bad.status_code == 401 and "not valid" in bad.text
    pre2 = re.search(r'name="pre" value="([^"]+)"', bad.text)
    assert pre2
    admin = anon.post("/ui/login", data={"key": s.keys["admin"], "pre": pre2.group(1)})
    assert admin.status_code == 403

    client, csrf = sign_in(s, "alice")
    cookie = client.cookies.jar
    assert any(c.name == "memagent_ui" for c in cookie)
    raw = [h for h in client.get("/ui/login").headers.get_list("set-cookie") if "memagent_ui=" in h]
    assert raw == []  # the session cookie is set once, at sign-in
    assert "signed in as alice" in client.get("/ui/search").text
    assert client.post("/ui/logout").status_code == 403  # no CSRF token
    out = client.post("/ui/logout", data={"csrf": csrf})
    assert out.status_code == 303
    assert client.get("/ui/search").status_code == 303


def test_session_cookie_attributes(s: Setup) -> None:
    client = TestClient(s.app, follow_redirects=False)
    pre = re.search(r'name="pre" value="([^"]+)"', client.get("/ui/login").text)
    assert pre
    done = client.post("/ui/login", data={"key": s.keys["alice"], "pre": pre.group(1)})
    header = next(h for h in done.headers.get_list("set-cookie") if h.startswith("memagent_ui="))
    lowered = header.lower()
    assert "httponly" in lowered and "samesite=strict" in lowered and "path=/ui" in lowered


def test_revoked_key_ends_the_session(s: Setup) -> None:
    client, _ = sign_in(s, "alice")
    store: KeyStore = s.app.state.server.keys
    key_id = next(k.id for k in store.list() if k.user == "alice")
    store.revoke(key_id)
    assert client.get("/ui/search").status_code == 303


def test_users_never_see_each_other(s: Setup) -> None:
    alice = memory_of(s, "alice")
    mid = alice.remember("Alice's locker code is 4711.", tags=["secret"])[0].id
    alice.write_note("entities/locker.md", "# Locker\n\nCode 4711.\n")
    alice.update(mid, text="Alice's locker code is 4712.")
    bob, csrf = sign_in(s, "bob")
    assert bob.get(f"/ui/memories/{mid}").status_code == 404
    assert bob.get(f"/ui/memories/{mid}/history").status_code == 404
    for action in ("delete", "restore", "undo"):
        assert bob.post(f"/ui/memories/{mid}/{action}", data={"csrf": csrf}).status_code == 404
    edit = bob.post(f"/ui/memories/{mid}/edit", data={"csrf": csrf, "text": "mine", "tags": ""})
    assert edit.status_code == 404
    assert bob.get("/ui/notes/view", params={"path": "entities/locker.md"}).status_code == 404
    for page in ("/ui/search?q=locker+code", "/ui/memories", "/ui/activity", "/ui/notes"):
        html = bob.get(page).text
        assert "4711" not in html and "4712" not in html and mid not in html, page
    undo = bob.post(
        "/ui/activity/undo", data={"csrf": csrf, "chunk": mid, "edit": "edit-" + "0" * 16}
    )
    assert undo.status_code == 404
    assert alice.get(mid).content == "Alice's locker code is 4712."


def test_csrf_is_required_for_every_change(s: Setup) -> None:
    alice = memory_of(s, "alice")
    mid = alice.remember("Parking on level 2.")[0].id
    client, csrf = sign_in(s, "alice")
    posts = [
        (f"/ui/memories/{mid}/edit", {"text": "hijacked", "tags": ""}),
        (f"/ui/memories/{mid}/delete", {}),
        ("/ui/notes/save", {"path": "x.md", "content": "x", "base": "new"}),
        ("/ui/profile/item", {"action": "remove", "file": "x", "path": "a.b", "item": "x"}),
        ("/ui/activity/undo", {"chunk": mid, "edit": "edit-" + "0" * 16}),
        ("/ui/status/slider", {"slider": "humor", "value": "90"}),
        ("/ui/chat", {"message": "hi"}),
        ("/ui/logout", {}),
    ]
    for url, data in posts:
        assert client.post(url, data=data).status_code == 403, url
        assert client.post(url, data={**data, "csrf": "wrong" + csrf}).status_code == 403, url
    stream = client.post("/ui/chat/stream", json={"message": "hi"})
    assert stream.status_code == 403
    assert alice.get(mid).content == "Parking on level 2." and not alice.get(mid).deleted
    assert not (alice.home.layout.vault / "x.md").exists()
    ok = client.post(
        f"/ui/memories/{mid}/edit", data={"csrf": csrf, "text": "Level 3.", "tags": "car"}
    )
    assert ok.status_code == 303
    header = client.post(
        f"/ui/memories/{mid}/edit",
        data={"text": "Level 4.", "tags": ""},
        headers={"X-CSRF-Token": csrf},
    )
    assert header.status_code == 303
    assert alice.get(mid).content == "Level 4."


def test_hostile_content_is_inert_on_every_page(s: Setup) -> None:
    alice = memory_of(s, "alice")
    payload = "\n\n".join(XSS)
    mid = alice.remember(payload, tags=["xss"])[0].id
    alice.update(mid, text=payload + "\n\nedited")
    alice.write_note("entities/evil.md", "# Evil\n\n" + payload + "\n\n[[user]]\n")
    alice.write_note("user.md", "# Me\n\nSee [[entities/evil]].\n")
    alice.profile_apply(
        [
            {
                "operation": "append",
                "file": "resource_user_food_prefs.json",
                "path": "food.likes",
                "value": {"item": "xss_item", "display": XSS[1], "note": XSS[0]},
            }
        ]
    )
    client, _ = sign_in(s, "alice")
    pages = [
        "/ui/search?q=alert",
        "/ui/search?q=" + XSS[0],
        "/ui/memories",
        f"/ui/memories/{mid}",
        f"/ui/memories/{mid}/history",
        "/ui/notes",
        "/ui/notes/view?path=entities/evil.md",
        "/ui/notes/edit?path=entities/evil.md",
        "/ui/notes/view?path=user.md",
        "/ui/profile",
        "/ui/profile/history?item=xss_item",
        "/ui/activity",
        "/ui/status",
        "/ui/chat",
        "/ui/memories?tag=" + XSS[4],
    ]
    for url in pages:
        r = client.get(url)
        assert r.status_code == 200, (url, r.text[:300])
        assert_inert(r.text)
    view = client.get("/ui/notes/view?path=entities/evil.md").text
    assert "&lt;script&gt;" in view  # shown as text, not run
    assert 'href="/ui/notes/link?to=user"' in view
    bad = client.get("/ui/notes/view?path=" + XSS[0])
    assert bad.status_code in (400, 404)
    assert_inert(bad.text)


@pytest.mark.parametrize(
    "path",
    [
        "../config.toml",
        "../../keys.json",
        "/etc/passwd",
        "entities/../../config.toml",
        "user.md\x00.txt",
        "C:\\Windows\\win.ini",
        "~/.ssh/id_rsa",
    ],
)
def test_path_tricks_in_note_urls_are_refused(s: Setup, path: str) -> None:
    client, csrf = sign_in(s, "alice")
    for url in ("/ui/notes/view", "/ui/notes/edit"):
        r = client.get(url, params={"path": path})
        assert r.status_code in (400, 404), (url, path, r.status_code)
        assert "[llm]" not in r.text and "root:" not in r.text
    saved = client.post(
        "/ui/notes/save", data={"csrf": csrf, "path": path, "content": "pwned", "base": "new"}
    )
    assert saved.status_code in (400, 404)
    home = memory_of(s, "alice").home.root
    assert "pwned" not in (home / "config.toml").read_text()
    assert not any("pwned" in p.read_text(errors="ignore") for p in home.rglob("*.md"))


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
    link = re.search(r'href="(/ui/notes/view\?path=[^"]+)">Open note', found)
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
    assert mid in found and "score" in found and "keyword match" in found
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
        seen += re.findall(r'<a href="/ui/memories/(chunk-[^"]+)">Open', html)
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


def test_local_page_one_time_token(home: MemoryHome, tmp_path: Path) -> None:
    app, state = local_app(home, embeddings=False, root=tmp_path / "ui-root")
    with TestClient(app, base_url="http://127.0.0.1:8766", follow_redirects=False) as client:
        assert client.get("/ui/search").status_code == 303
        token = state.login_token()
        assert client.get("/ui/login", params={"token": "guess"}).status_code == 401
        first = client.get("/ui/login", params={"token": token})
        assert first.status_code == 303 and first.headers["location"] == "/ui/search"
        assert client.get("/ui/search").status_code == 200
        other = TestClient(app, base_url="http://127.0.0.1:8766", follow_redirects=False)
        assert other.get("/ui/login", params={"token": token}).status_code == 401  # used once
        assert other.get("/ui/search").status_code == 303
        assert other.post("/ui/login", data={"key": "x"}).status_code == 303
        Memory(home, embeddings=False).remember("Local memory of mine.")
        assert "Local memory of mine." in client.get("/ui/memories").text
        rebound = client.get("/ui/memories", headers={"Host": "evil.example:8766"})
        assert rebound.status_code == 403
        fresh = state.login_token()
        elsewhere = other.get(
            "/ui/login", params={"token": fresh}, headers={"Host": "evil.example"}
        )
        assert elsewhere.status_code == 403 and "memagent_ui" not in elsewhere.headers.get(
            "set-cookie", ""
        )
    assert not any((tmp_path / "ui-root").glob("users/*"))


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


def test_cli_ui_refuses_non_loopback_and_missing_home(tmp_path: Path, home: MemoryHome) -> None:
    from typer.testing import CliRunner

    from memagent.cli import app

    runner = CliRunner()
    res = runner.invoke(app, ["ui", "--home", str(home.root), "--host", "0.0.0.0"])
    assert res.exit_code != 0 and "loopback" in res.output and "Traceback" not in res.output
    res = runner.invoke(app, ["ui", "--home", str(tmp_path / "nope")])
    assert res.exit_code != 0 and "Traceback" not in res.output


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


def test_forged_and_tampered_cookies_are_refused(s: Setup) -> None:
    import base64

    client, _ = sign_in(s, "alice")
    good = client.cookies["memagent_ui"]
    payload, mac = good.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    for changed in ({"u": "bob"}, {"e": claims["e"] + 10**6}, {"u": "mallory"}, {"e": 1}):
        forged = base64.urlsafe_b64encode(json.dumps({**claims, **changed}).encode()).decode()
        bad = TestClient(s.app, follow_redirects=False)
        bad.cookies.set("memagent_ui", forged.rstrip("=") + "." + mac, path="/ui")
        assert bad.get("/ui/search").status_code == 303, changed
    for junk in ("", "x", "a.b", "." * 5, "x" * 5000, good + "x", payload + ".", "." + mac):
        bad = TestClient(s.app, follow_redirects=False)
        bad.cookies.set("memagent_ui", junk, path="/ui")
        assert bad.get("/ui/search").status_code == 303, junk
    assert not (s.root / "users" / "mallory").exists()
    assert not (s.root / "users" / "bob").exists()  # nothing read or made for bob
    # Signing out in one browser signs the user out in every browser.
    other, csrf = sign_in(s, "alice")
    assert client.get("/ui/search").status_code == 200
    assert other.post("/ui/logout", data={"csrf": csrf}).status_code == 303
    assert client.get("/ui/search").status_code == 303


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


def test_an_unexpected_error_is_a_plain_500_page(s: Setup, monkeypatch: pytest.MonkeyPatch) -> None:
    from memagent.server.ui import pages_agent

    def broken(who: Any) -> Any:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(pages_agent, "_hud", broken)
    client, _ = sign_in(s, "alice")
    r = client.get("/ui/status")
    assert r.status_code == 500 and "logged on the server" in r.text
    assert "secret internals" not in r.text and "Traceback" not in r.text
