"""`/v1/profile` end to end over loopback: show, apply, learn (scripted LLM), history."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from memagent.server import KeyStore, ServerSettings, create_app
from memagent.server.testing import LiveServer, assert_problem

FOOD = "resource_user_food_prefs.json"
APPEND = {
    "operation": "append",
    "file": FOOD,
    "path": "food.likes",
    "value": {"item": "kung pao chicken"},
}


@pytest.fixture
def clients(tmp_path: Path) -> Iterator[tuple[httpx.Client, httpx.Client, Path]]:
    root = tmp_path / "server"
    script = tmp_path / "script.json"
    replies = [
        json.dumps({"facts": [{"kind": "food_like", "value": "ramen", "name": ""}]}),
    ]
    script.write_text(json.dumps(replies))
    store = KeyStore(root)
    alice, _ = store.create(user="alice")
    bob, _ = store.create(user="bob")
    settings = ServerSettings(mcp=False, embeddings=False, llm=f"scripted:{script}")
    with LiveServer(create_app(root, settings)) as live:
        a = httpx.Client(base_url=live.url, headers={"Authorization": f"Bearer {alice}"})
        b = httpx.Client(base_url=live.url, headers={"Authorization": f"Bearer {bob}"})
        yield a, b, root
        a.close()
        b.close()


def likes(client: httpx.Client) -> list[str]:
    food = client.get("/v1/profile/user_food_prefs").json()["resources"][FOOD]
    return [i["item"] for i in food["food"]["likes"]]


def test_show_apply_history(clients: tuple[httpx.Client, httpx.Client, Path]) -> None:
    alice, bob, _ = clients
    everything = alice.get("/v1/profile").json()["resources"]
    assert FOOD in everything
    dry = alice.post("/v1/profile/apply", json={"operations": [APPEND], "dry_run": True})
    assert dry.status_code == 200 and dry.json()["written"] == []
    assert likes(alice) == []
    applied = alice.post("/v1/profile/apply", json={"operations": [APPEND]})
    assert applied.status_code == 200, applied.text
    assert applied.json()["written"] == [FOOD]
    assert likes(alice) == ["kung_pao_chicken"]
    history = alice.get("/v1/profile/history", params={"item": "kung pao chicken"}).json()
    assert [e["change"] for e in history["entries"]] == ["append"]
    # Bob's profile is his own.
    assert likes(bob) == []
    assert (
        bob.get("/v1/profile/history", params={"item": "kung pao chicken"}).json()["entries"] == []
    )


def test_rejected_batches_change_nothing(clients: tuple[httpx.Client, httpx.Client, Path]) -> None:
    alice, _, root = clients
    alice.post("/v1/profile/apply", json={"operations": [APPEND]})
    path = root / "users" / "alice" / "profile" / FOOD
    before = path.read_bytes()
    remove_missing = {
        "operation": "remove",
        "file": FOOD,
        "path": "food.likes",
        "value": {"item": "pizza"},
    }
    rejected = alice.post("/v1/profile/apply", json={"operations": [APPEND, remove_missing]})
    body = assert_problem(rejected, 409)
    assert body["type"] == "urn:memagent:problem:batch-rejected"
    assert isinstance(body["outcomes"], list)
    for bad in [
        {"operations": [{"operation": "explode"}]},
        {"operations": [{**APPEND, "file": "../../keys.json"}]},
        {"operations": [{**APPEND, "extra": 1}]},
        {"operations": "append"},
        {},
    ]:
        assert_problem(alice.post("/v1/profile/apply", json=bad), 422)
    assert_problem(alice.get("/v1/profile/no_such_resource"), 404)
    assert_problem(alice.get("/v1/profile/BAD..name"), 422)
    assert path.read_bytes() == before


def test_learn_uses_the_server_llm(clients: tuple[httpx.Client, httpx.Client, Path]) -> None:
    alice, bob, _ = clients
    assert_problem(alice.post("/v1/profile/learn", json={"text": ""}), 422)
    learned = alice.post("/v1/profile/learn", json={"text": "I could eat ramen every day"})
    assert learned.status_code == 200, learned.text
    assert learned.json()["facts"][0]["value"] == "ramen"
    assert likes(alice) == ["ramen"]
    assert likes(bob) == []
    # The script is used up: the model "fails", which is a 502, not a crash.
    assert_problem(bob.post("/v1/profile/learn", json={"text": "I like sushi"}), 502)
    assert likes(bob) == []
