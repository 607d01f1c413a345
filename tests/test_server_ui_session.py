"""Sign-in hardening of the web page (`server.ui._session`): `__Host-` Secure
cookies behind TLS, a per-run cookie under `memagent ui`, flash messages only of
the server's own making, and a strict loopback Host."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from memagent.core import MemoryHome
from memagent.llm import ScriptedLLM
from memagent.server import KeyStore, ServerSettings, create_app
from memagent.server.local_ui import local_app
from memagent.server.ui._base import go
from ui_support import sign_in, ui_server


def _secure_app(tmp_path: Path) -> tuple[TestClient, str]:
    root = tmp_path / "server"
    key = KeyStore(root).create(user="alice")[0]
    settings = ServerSettings(mcp=False, embeddings=False, secure_cookies=True)
    app = create_app(root, settings, llm=ScriptedLLM(fn=lambda m, s: "ok"))
    return TestClient(app, base_url="https://testserver", follow_redirects=False), key


def test_behind_tls_cookies_are_host_prefixed_and_secure(tmp_path: Path) -> None:
    client, key = _secure_app(tmp_path)
    with client:
        form = client.get("/ui/login")
        pre_cookie = form.headers["set-cookie"]
        assert pre_cookie.startswith("__Host-memagent_ui_pre=")
        assert "secure" in pre_cookie.lower() and "path=/;" in pre_cookie.lower()
        pre = re.search(r'name="pre" value="([^"]+)"', form.text)
        assert pre
        done = client.post("/ui/login", data={"key": key, "pre": pre.group(1)})
        assert done.status_code == 303
        session = next(
            h for h in done.headers.get_list("set-cookie") if h.startswith("__Host-memagent_ui=")
        )
        lowered = session.lower()
        assert "secure" in lowered and "httponly" in lowered and "samesite=strict" in lowered
        assert "path=/;" in lowered and "domain=" not in lowered
        assert client.get("/ui/search").status_code == 200
        # a failed sign-in's fresh form cookie is Secure too
        again = client.post("/ui/login", data={"key": "msk_nope", "pre": "x"})
        assert all(
            "secure" in h.lower()
            for h in again.headers.get_list("set-cookie")
            if h.startswith("__Host-")
        )


def test_serve_option_turns_secure_cookies_on_behind_a_proxy() -> None:
    from memagent.cli.commands.serve import _settings

    assert _settings([], secure_cookies=True).secure_cookies is True
    assert ServerSettings().secure_cookies is False


def test_a_plain_cookie_is_not_taken_for_the_host_prefixed_one(tmp_path: Path) -> None:
    client, _ = _secure_app(tmp_path)
    with client:
        plain = TestClient(client.app, base_url="https://testserver", follow_redirects=False)
        plain.cookies.set("memagent_ui", "forged.value")
        assert plain.get("/ui/search").status_code == 303


def test_a_flash_written_by_someone_else_is_not_shown(tmp_path: Path) -> None:
    with ui_server(tmp_path) as s:
        client, _ = sign_in(s, "alice")
        phish = "Your session expired: call +1 555 0100 with your API key"
        page = client.get("/ui/search", params={"flash": phish})
        assert page.status_code == 200 and "555 0100" not in page.text
        forged = client.get("/ui/search", params={"flash": phish, "fs": "AAAA"})
        assert "555 0100" not in forged.text
        login = TestClient(s.app).get("/ui/login", params={"flash": phish})
        assert "555 0100" not in login.text
        # the server's own flash (from a redirect) is shown
        own = go("/ui/search", "Saved.").headers["location"]
        assert "Saved." in client.get(own).text
        over = go("/ui/search", "x" * 1000).headers["location"]
        assert client.get(over).status_code == 200


def test_memagent_ui_cookie_is_per_run(home: MemoryHome, tmp_path: Path) -> None:
    first_app, first = local_app(home, embeddings=False, root=tmp_path / "a")
    second_app, second = local_app(home, embeddings=False, root=tmp_path / "b")
    assert first.cookie != second.cookie and first.cookie.startswith("memagent_ui_")
    base = "http://127.0.0.1:8766"
    with TestClient(first_app, base_url=base, follow_redirects=False) as a:
        signed = a.get("/ui/login", params={"token": first.login_token()})
        assert signed.status_code == 303
        assert signed.headers["set-cookie"].startswith(first.cookie + "=")
        assert a.get("/ui/search").status_code == 200
        value = a.cookies[first.cookie]
    with TestClient(second_app, base_url=base, follow_redirects=False) as b:
        # the other run's cookie, under either name, is nobody here
        b.cookies.set(first.cookie, value)
        assert b.get("/ui/search").status_code == 303
        b.cookies.set(second.cookie, value)
        assert b.get("/ui/search").status_code == 303


@pytest.mark.parametrize(
    "host",
    [
        "localhost:8766@evil.example",
        "127.0.0.1:8766@evil",
        "localhost:8767",  # another port's name
        "localhost.evil.example:8766",
        "127.0.0.1:8766:1",
        "127.0.0.1 :8766",
        "[::1]x",
        "",
    ],
)
def test_memagent_ui_refuses_a_malformed_or_foreign_host(
    home: MemoryHome, tmp_path: Path, host: str
) -> None:
    app, state = local_app(home, embeddings=False, root=tmp_path / "ui")
    with TestClient(app, base_url="http://127.0.0.1:8766", follow_redirects=False) as client:
        token = state.login_token()
        refused = client.get("/ui/login", params={"token": token}, headers={"Host": host})
        assert refused.status_code == 403
        assert state.cookie not in refused.headers.get("set-cookie", "")
        ok = client.get("/ui/login", params={"token": token}, headers={"Host": "localhost:8766"})
        assert ok.status_code == 303  # the token was not spent by the refused request


@pytest.mark.parametrize("host", ["127.0.0.1:8766", "localhost:8766", "LOCALHOST", "127.0.0.1"])
def test_memagent_ui_accepts_its_own_loopback_names(
    home: MemoryHome, tmp_path: Path, host: str
) -> None:
    app, state = local_app(home, embeddings=False, root=tmp_path / "ui")
    with TestClient(app, base_url="http://127.0.0.1:8766", follow_redirects=False) as client:
        got = client.get("/ui/login", params={"token": state.login_token()}, headers={"Host": host})
        assert got.status_code == 303
