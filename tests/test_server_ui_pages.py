"""The web page's product behaviour in-process: adding a memory, undo shown only
when there is one, refusals said on the page, Activity in words, chat turns as
conversation, and Chat waiting for a model that is still loading."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memagent.llm import ScriptedLLM
from memagent.server import KeyStore, ServerSettings, create_app
from memagent.server.ui import pages_agent
from ui_support import Setup, memory_of, sign_in, ui_server


@pytest.fixture
def s(tmp_path: Path) -> Iterator[Setup]:
    with ui_server(tmp_path) as setup:
        yield setup


def test_add_a_memory(s: Setup) -> None:
    alice = memory_of(s, "alice")
    client, csrf = sign_in(s, "alice")
    empty = client.get("/ui/memories").text
    assert "No memories yet." in empty and 'action="/ui/memories/new"' in empty
    made = client.post(
        "/ui/memories/new",
        data={"csrf": csrf, "text": "My bike is a blue Brompton.", "tags": "bike"},
    )
    assert made.status_code == 303
    mid = made.headers["location"].split("?")[0].rsplit("/", 1)[1]
    assert alice.get(mid).content == "My bike is a blue Brompton." and alice.get(mid).tags == [
        "bike"
    ]
    before = len(alice.chunks.list(limit=100))
    refused = [
        {"csrf": csrf, "text": "   "},
        {"csrf": csrf, "text": "x" * 100_001},
        {"csrf": csrf, "text": "ok", "tags": "two words"},
        {"csrf": csrf, "text": "ok", "tags": "t" * 5000},
    ]
    for data in refused:
        r = client.post("/ui/memories/new", data=data)
        assert r.status_code == 400 and 'role="alert"' in r.text, data
        assert "Memories" in r.text  # the menu is still there to carry on from
    assert client.post("/ui/memories/new", data={"text": "no token"}).status_code == 403
    assert client.post("/ui/memories/new", data={"csrf": "forged", "text": "x"}).status_code == 403
    assert len(alice.chunks.list(limit=100)) == before  # nothing written


def test_undo_only_where_there_is_an_edit(s: Setup) -> None:
    alice = memory_of(s, "alice")
    mid = alice.remember("The spare key is under the pot.")[0].id
    client, csrf = sign_in(s, "alice")
    fresh = client.get(f"/ui/memories/{mid}").text
    assert "Undo last edit" not in fresh and "/history" not in fresh
    refused = client.post(f"/ui/memories/{mid}/undo", data={"csrf": csrf})
    assert refused.status_code == 404 and "Nothing to undo" in refused.text
    alice.update(mid, text="The spare key is under the mat.")
    edited = client.get(f"/ui/memories/{mid}").text
    assert "Undo last edit" in edited and "History (1 edit)" in edited
    assert client.post(f"/ui/memories/{mid}/undo", data={"csrf": csrf}).status_code == 303
    assert alice.get(mid).content == "The spare key is under the pot."
    assert "Undo last edit" not in client.get(f"/ui/memories/{mid}").text


def test_refused_note_paths_are_said_on_the_page(s: Setup) -> None:
    alice = memory_of(s, "alice")
    client, _ = sign_in(s, "alice")
    for bad in ("../escape.md", "/etc/passwd", "a/../../b.md", "x" * 1001):
        r = client.get("/ui/notes/edit", params={"path": bad})
        assert r.status_code in (400, 422), bad
        assert 'role="alert"' in r.text, bad
    r = client.get("/ui/notes/edit", params={"path": "../escape.md"})
    assert "Cannot use that path" in r.text and 'value="../escape.md"' in r.text
    assert not (alice.home.root / "escape.md").exists()
    missing = client.get("/ui/notes/view", params={"path": "nope.md"})
    assert missing.status_code == 404 and "does not exist" in missing.text
    assert "Notes" in missing.text and "signed in as alice" in missing.text


def test_activity_in_words_and_bookkeeping_hidden(s: Setup) -> None:
    alice = memory_of(s, "alice")
    mid = alice.remember("Green tea in the morning.")[0].id
    alice.update(mid, text="Jasmine tea in the morning.")
    alice.home.storage.write_text(
        alice.home.layout.root / "gauges" / "LIVEHUD.md", "hud", actor="hud", op="hud.update"
    )
    client, _ = sign_in(s, "alice")
    page = client.get("/ui/activity").text
    assert "A memory was changed" in page and "Jasmine tea" in page
    assert "hud.update" not in page and "LIVEHUD" not in page
    assert "bookkeeping entr" in page
    everything = client.get("/ui/activity", params={"all": "true"}).text
    assert "hud.update" in everything
    status = client.get("/ui/status").text
    assert "A memory was changed" in status and "hud.update" not in status


def test_chat_turns_are_conversation_not_memories(s: Setup) -> None:
    alice = memory_of(s, "alice")
    alice.remember("I drink green tea.")
    with alice.guard:
        alice.chunks.create(
            "What should I drink?",
            tags=["conversation", "question"],
            conversation_id="c1",
            source={"kind": "agent_exchange", "role": "user", "type": "question",
                    "user": "What should I drink?", "reply": "Green tea.", "turn": 1},
        )  # fmt: skip
    client, _ = sign_in(s, "alice")
    page = client.get("/ui/memories").text
    chat = page.split('class="card chat', 1)[1].split("</article>", 1)[0]
    assert "What should I drink?" in chat and "Green tea." in chat and "Assistant" in chat
    memories = [p.split("</article>")[0] for p in page.split('class="card memory')[1:]]
    assert len(memories) == 1 and "I drink green tea." in memories[0]
    found = client.get("/ui/search", params={"q": "drink"}).text
    assert (
        found.index("I drink green tea.") < found.index("What should I drink?")
        if ("What should I drink?" in found)
        else "I drink green tea." in found
    )


def _reply(messages: list[Any], schema: dict[str, Any] | None) -> str:
    if schema and "reply" in schema.get("properties", {}):
        return json.dumps({"reply": "You like green tea."})
    return "You like green tea."


class _SlowStart(ScriptedLLM):
    """A model that loads until the test lets it (as the embedded one loads)."""

    def __init__(self, name: str, gate: threading.Event) -> None:
        super().__init__(fn=_reply)
        self.name = name
        self.gate = gate
        self.loaded = False

    def load(self) -> float:
        assert self.gate.wait(60), "the test never let the model load"
        self.loaded = True
        return 0.0


def test_chat_waits_for_a_loading_model(tmp_path: Path) -> None:
    gate = threading.Event()
    llm = _SlowStart(f"slow-{tmp_path.name}", gate)
    root = tmp_path / "server"
    keys = {"alice": KeyStore(root).create(user="alice")[0]}
    app = create_app(root, ServerSettings(mcp=False, embeddings=False), llm=llm)
    from fastapi.testclient import TestClient

    with TestClient(app):
        setup = Setup(root, keys, app)
        client, csrf = sign_in(setup, "alice")
        assert pages_agent.model_state(llm).state == "idle"
        page = client.get("/ui/chat").text
        assert 'data-state="idle"' in page
        plain = client.post("/ui/chat", data={"csrf": csrf, "message": "What do I like?"})
        assert plain.status_code == 200 and "still loading" in plain.text
        assert ">What do I like?</textarea>" in plain.text  # the message is given back
        state = client.get("/ui/chat/model").json()
        assert state["state"] == "loading"
        assert client.post("/ui/chat/model").status_code == 403  # no CSRF header
        events: list[str] = []
        with client.stream(
            "POST", "/ui/chat/stream", json={"message": "What do I like?"},
            headers={"X-CSRF-Token": csrf},
        ) as r:  # fmt: skip
            for line in r.iter_lines():
                if line.startswith("event: "):
                    events.append(line[7:])
                    if line == "event: status":
                        gate.set()  # the page was told; now the model finishes loading
                elif line.startswith("data: ") and events[-1] == "done":
                    done = json.loads(line[6:])
        assert events[0] == "status" and events[-1] == "done" and "error" not in events
        assert "green tea" in done["reply"]
        assert client.get("/ui/chat/model").json()["state"] == "ready"


def test_memories_used_are_shown_as_text_with_links(s: Setup) -> None:
    alice = memory_of(s, "alice")
    mid = alice.remember("I like green tea.", tags=["drink"])[0].id
    client, csrf = sign_in(s, "alice")
    plain = client.post("/ui/chat", data={"csrf": csrf, "message": "What do I drink?"})
    assert f'<a href="/ui/memories/{mid}">I like green tea.</a>' in plain.text
    with client.stream(
        "POST", "/ui/chat/stream", json={"message": "What do I drink?"},
        headers={"X-CSRF-Token": csrf},
    ) as r:  # fmt: skip
        body = "".join(r.iter_text())
    done = json.loads(body.split("event: done\ndata: ", 1)[1].split("\n\n", 1)[0])
    shown = {x["href"]: x for x in done["sources_shown"]}
    assert shown[f"/ui/memories/{mid}"]["text"] == "I like green tea."
    assert all(x["label"] in ("Memory", "Note", "Profile", "Chat") for x in done["sources_shown"])


def test_favicon_is_served(s: Setup) -> None:
    client, _ = sign_in(s, "alice")
    page = client.get("/ui/search").text
    assert '<link rel="icon" href="/ui/static/favicon.svg"' in page
    for url in ("/ui/static/favicon.svg", "/favicon.ico"):
        icon = client.get(url)
        assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg")
        assert icon.content.startswith(b"<svg")


def test_hybrid_search_lists_by_score_and_cuts_nonsense(tmp_path: Path) -> None:
    """With meaning search on, the nearest rows always come back from the vector
    list; the page lists only those with evidence, best first."""
    from fastapi.testclient import TestClient

    root = tmp_path / "server"
    keys = {"alice": KeyStore(root).create(user="alice")[0]}
    app = create_app(root, ServerSettings(mcp=False, embeddings=True), llm=ScriptedLLM(fn=_reply))
    with TestClient(app):
        alice = app.state.server.memory_for("alice")
        if alice.chunks.embedder is None:
            pytest.skip("embeddings not installed")
        for text in (
            "I drink green tea every morning.",
            "Matcha lattes are my favourite afternoon drink.",
            "The car is parked on level 2.",
            "My sister Ana lives in Porto.",
            "I walk the dog before work.",
            "The wifi password is on the fridge.",
        ):
            alice.remember(text)
        client, _ = sign_in(Setup(root, keys, app), "alice")
        page = client.get("/ui/search", params={"q": "what tea do I drink"}).text
        found = [float(x) for x in re.findall(r'data-score="([0-9.]+)"', page)]
        assert found and found == sorted(found, reverse=True)
        assert "green tea" in page.split('data-score="', 2)[1]  # the best hit is listed first
        assert "parked on level 2" not in page  # shares no word and little meaning
        nonsense = client.get("/ui/search", params={"q": "zzqxv quantum tuba"}).text
        assert 'data-score="' not in nonsense and "Nothing in memory matches" in nonsense


def test_memories_used_that_read_the_same_are_shown_once() -> None:
    from types import SimpleNamespace
    from typing import cast

    from memagent.server.ui.pages_agent import Viewer, sources_shown

    who = cast(Viewer, SimpleNamespace(caller=SimpleNamespace(memory=None)))
    shown = sources_shown(
        who,
        [
            {"kind": "note", "id": "note:user.md"},
            {"kind": "fact", "id": ""},
            {"kind": "fact", "id": ""},
            {"kind": "fact", "id": "fact:drink.likes:green tea"},
        ],
    )
    assert [(x["label"], x["text"]) for x in shown] == [
        ("Note", "user.md"),
        ("Profile", "your profile"),
        ("Profile", "green tea"),
    ]
