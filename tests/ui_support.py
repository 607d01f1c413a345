"""What the web page's tests share: a server with two users and an admin, signing
in through the form, and an audit that a page carries nothing that could run."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from memagent import Memory
from memagent.llm import ScriptedLLM
from memagent.server import KeyStore, ServerSettings, create_app

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


@contextmanager
def ui_server(tmp_path: Path) -> Iterator[Setup]:
    """A running app with keys for `alice`, `bob` and an admin, and a scripted model."""
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
