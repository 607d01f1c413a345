"""The web page (`/ui`) against an attacker: sign-in, sessions and cookies, CSRF,
users kept apart, hostile content shown inert, path tricks refused, errors that
tell nothing."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from memagent import Memory
from memagent.core import MemoryHome
from memagent.server import KeyStore
from memagent.server.local_ui import local_app
from ui_support import XSS, Setup, assert_inert, memory_of, sign_in, ui_server


@pytest.fixture
def s(tmp_path: Path) -> Iterator[Setup]:
    with ui_server(tmp_path) as setup:
        yield setup


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


def test_cli_ui_refuses_non_loopback_and_missing_home(tmp_path: Path, home: MemoryHome) -> None:
    from typer.testing import CliRunner

    from memagent.cli import app

    runner = CliRunner()
    res = runner.invoke(app, ["ui", "--home", str(home.root), "--host", "0.0.0.0"])
    assert res.exit_code != 0 and "loopback" in res.output and "Traceback" not in res.output
    res = runner.invoke(app, ["ui", "--home", str(tmp_path / "nope")])
    assert res.exit_code != 0 and "Traceback" not in res.output


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


def test_an_unexpected_error_is_a_plain_500_page(s: Setup, monkeypatch: pytest.MonkeyPatch) -> None:
    from memagent.server.ui import pages_agent

    def broken(who: Any) -> Any:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(pages_agent, "_hud", broken)
    client, _ = sign_in(s, "alice")
    r = client.get("/ui/status")
    assert r.status_code == 500 and "logged on the server" in r.text
    assert "secret internals" not in r.text and "Traceback" not in r.text
