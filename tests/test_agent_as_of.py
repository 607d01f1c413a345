"""Questions have a date: `as_of` in `Agent.turn`/`run` and `Memory.recall`,
`ask --as-of`, `recall --as-of`, `asked_at` in batch lines and over HTTP. It is
"now" for relative times, recall's time signals and the answer's prompt."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from memagent.agent import Agent
from memagent.api import Memory
from memagent.cli.app import app
from memagent.core import InvalidInput, MemoryHome
from memagent.llm import Message, ScriptedLLM
from memagent.memory.chunks import ChunkDraft, ChunkStore

runner = CliRunner()
APRIL, MAY = "2023-04-03T10:00:00+00:00", "2023-05-02T10:00:00+00:00"


def trips(home: MemoryHome) -> dict[str, str]:
    """Two trips a month apart; which one is "last week" depends on the date asked."""
    store = ChunkStore(home, embeddings=False)
    made = store.create_many(
        [
            ChunkDraft(content="My trip: I was in Rome.", created_at=APRIL),
            ChunkDraft(content="My trip: I was in Paris.", created_at=MAY),
        ]
    )
    store.close()
    return {"rome": made[0].id, "paris": made[1].id}


def no_vectors(home: MemoryHome) -> MemoryHome:
    cfg = home.layout.config
    text = cfg.read_text().replace("[embeddings]\nenabled = true", "[embeddings]\nenabled = false")
    cfg.write_text(text, encoding="utf-8")
    return MemoryHome.open(home.root)


def test_memory_recall_counts_last_week_from_as_of(home: MemoryHome) -> None:
    ids = trips(home)
    with Memory(home, embeddings=False) as m:
        may = m.recall("Which trip was last week?", k=2, as_of="2023-05-08")
        april = m.recall("Which trip was last week?", k=2, as_of="2023-04-09")
        with pytest.raises(InvalidInput, match="bad as-of date"):
            m.recall("trip", as_of="last Tuesday")
    assert may[0].id == ids["paris"] and april[0].id == ids["rome"]


def test_agent_turn_as_of_sets_recall_and_the_prompt(home: MemoryHome) -> None:
    trips(home)
    seen: list[str] = []

    def fn(messages: list[Message], schema: dict[str, Any] | None) -> str:
        seen.append([m for m in messages if m.role == "user"][-1].content)
        return json.dumps({"reply": "Paris."})

    no_check = home.config.agent.model_copy(update={"verify_min": 0.0})
    with Agent(
        home, ScriptedLLM(fn=fn), config=no_check, prompt_set="qa", learn_profile=False
    ) as a:
        r = a.turn("Which trip did I take last week?", as_of="2023-05-08")
        assert str(r.memory_sources[0].id).endswith(trips_id(home, "Paris"))
        # the qa set keeps the date out of its prompt (it lowers the grounding
        # check's P(yes)); recall above is what the date steers
        assert "Asked on" not in seen[-1]
        assert a.run("Which trip did I take last week?") == "Paris."
        before = len(seen)
        with pytest.raises(InvalidInput, match="bad as-of date"):
            a.turn("Which trip?", as_of="2023-02-30")
        assert len(seen) == before  # refused before any model call
    no_checks = home.config.agent.model_copy(update={"chat_verify_min": 0.0, "focus_check": False})
    with Agent(
        home, ScriptedLLM(fn=fn), config=no_checks, prompt_set="instruct", learn_profile=False
    ) as a:
        a.turn("Which trip did I take last week?", as_of="2023-05-08")
        assert "(Asked on 8 May 2023.)" in seen[-1]
        a.turn("Which trip did I take last week?")
        assert "Asked on" not in seen[-1]  # no date given: now is now, and unsaid


def trips_id(home: MemoryHome, city: str) -> str:
    for p in home.layout.chunks.rglob("chunk-*.json"):
        data = json.loads(p.read_text())
        if city in data["content"]:
            return str(data["id"])
    raise AssertionError(city)


def test_cli_ask_as_of_and_batch_asked_at(home: MemoryHome, tmp_path: Path) -> None:
    home = no_vectors(home)
    trips(home)
    script = tmp_path / "s.json"
    script.write_text(json.dumps([json.dumps({"reply": "Paris."})] * 4))
    h, model = str(home.root), f"scripted:{script}"
    res = runner.invoke(
        app, ["ask", "Which trip was last week?", "--short", "--home", h, "--model", model,
              "--as-of", "2023-05-08", "--json"],
    )  # fmt: skip
    assert res.exit_code == 0, res.stderr
    assert json.loads(res.stdout)["reply"] == "Paris."
    qs = tmp_path / "q.jsonl"
    qs.write_text(
        json.dumps({"id": 1, "question": "Which trip was last week?", "asked_at": "2023-04-09"})
        + "\n"
        + json.dumps({"id": 2, "question": "Which trip was last week?"})
        + "\n"
    )
    res = runner.invoke(
        app, ["ask", "--batch", str(qs), "--json", "--short", "--home", h, "--model", model,
              "--as-of", "2023-05-08"],
    )  # fmt: skip
    assert res.exit_code == 0, res.stderr
    first, second = (json.loads(x) for x in res.stdout.splitlines())
    assert first["asked_at"] == "2023-04-09T23:59:59+00:00"  # the line's own date wins
    assert second["asked_at"] == "2023-05-08T23:59:59+00:00"  # else --as-of
    assert first["memory_ids"][0] == trips_id(home, "Rome")
    assert second["memory_ids"][0] == trips_id(home, "Paris")
    assert "refused_by" in first


@pytest.mark.parametrize("bad", ["yesterday", "2023-02-30", "", "x" * 100_000])
def test_cli_malformed_dates_are_one_error_and_nothing_runs(
    home: MemoryHome, tmp_path: Path, bad: str
) -> None:
    home = no_vectors(home)
    h = str(home.root)
    before = home.layout.ops_log.read_bytes()
    empty = tmp_path / "s.json"
    empty.write_text("[]")  # a model call would fail: none is made
    for args in (
        ["ask", "Which trip?", "--as-of", bad, "--model", f"scripted:{empty}"],
        ["recall", "trip", "--as-of", bad],
    ):
        res = runner.invoke(app, [*args, "--home", h])
        assert res.exit_code != 0 and res.stdout == ""
        assert res.stderr.count("\n") == 1 and "bad as-of date" in res.stderr
    qs = tmp_path / "q.jsonl"
    qs.write_text(json.dumps({"question": "Which trip?", "asked_at": bad}) + "\n")
    res = runner.invoke(
        app, ["ask", "--batch", str(qs), "--home", h, "--model", f"scripted:{empty}"]
    )
    assert res.exit_code != 0 and "q.jsonl, line 1: asked_at" in res.stderr
    rq = tmp_path / "r.jsonl"
    rq.write_text(json.dumps({"query": "trip", "asked_at": bad}) + "\n")
    res = runner.invoke(app, ["recall", "--batch", str(rq), "--home", h])
    assert res.exit_code != 0 and "r.jsonl, line 1: asked_at" in res.stderr
    assert home.layout.ops_log.read_bytes() == before


def test_cli_recall_as_of_and_batch(home: MemoryHome, tmp_path: Path) -> None:
    home = no_vectors(home)
    trips(home)
    h = str(home.root)
    res = runner.invoke(app, ["recall", "trip last week", "--as-of", "2023-04-09", "--json",
                              "--home", h, "--keyword-only"])  # fmt: skip
    assert res.exit_code == 0, res.stderr
    assert json.loads(res.stdout)["hits"][0]["id"] == trips_id(home, "Rome")
    rq = tmp_path / "r.jsonl"
    rq.write_text(
        json.dumps({"id": "a", "query": "trip last week", "asked_at": "2023-05-08"}) + "\n"
    )
    res = runner.invoke(app, ["recall", "--batch", str(rq), "--home", h, "--keyword-only",
                              "--as-of", "2023-04-09"])  # fmt: skip
    assert res.exit_code == 0, res.stderr
    assert json.loads(res.stdout)["hits"][0]["id"] == trips_id(home, "Paris")


def test_http_chat_and_search_take_asked_at(tmp_path: Path) -> None:
    from memagent.server import KeyStore, ServerSettings, create_app
    from memagent.server.testing import LiveServer, assert_problem

    seen: list[str] = []

    def fn(messages: list[Message], schema: dict[str, Any] | None) -> str:
        seen.append([m for m in messages if m.role == "user"][-1].content)
        return json.dumps({"reply": "Paris."})

    root = tmp_path / "server"
    key = KeyStore(root).create(user="alice")[0]
    app_ = create_app(root, ServerSettings(mcp=False, embeddings=False), llm=ScriptedLLM(fn=fn))
    auth = {"Authorization": f"Bearer {key}"}
    with LiveServer(app_) as live, httpx.Client(base_url=live.url, headers=auth, timeout=60) as c:
        mem = app_.state.server.memory_for("alice")
        mem.remember("My trip: I was in Rome.", created_at=APRIL)
        paris = mem.remember("My trip: I was in Paris.", created_at=MAY)[0].id
        ask = {"message": "Which trip was last week?", "prompt_set": "qa"}
        ok = c.post("/v1/chat", json={**ask, "asked_at": "2023-05-08"})
        assert ok.status_code == 200, ok.text
        assert ok.json()["memory_sources"][0]["id"] == paris
        assert "Asked on" not in seen[-1]  # the qa set: the date steers recall only
        for bad in ("yesterday", "2023-02-30"):
            problem = assert_problem(c.post("/v1/chat", json={**ask, "asked_at": bad}), 400)
            assert "bad as-of date" in problem["detail"]
        for bad in ("x" * 65, 20230508, ["2023-05-08"]):  # schema: too long, not text
            assert_problem(c.post("/v1/chat", json={**ask, "asked_at": bad}), 422)
        found = c.get(
            "/v1/memories/search", params={"q": "trip last week", "asked_at": "2023-05-08"}
        )
        assert found.status_code == 200, found.text
        assert found.json()["hits"][0]["id"] == paris
        rome = c.get(
            "/v1/memories/search", params={"q": "trip last week", "asked_at": "2023-04-09"}
        )
        assert rome.json()["hits"][0]["id"] != paris
        assert_problem(c.get("/v1/memories/search", params={"q": "trip", "asked_at": "soon"}), 400)


def test_how_long_ago_is_counted_from_the_date_asked(home: MemoryHome) -> None:
    """ "How many weeks ago…": each dated line says how long before the question it
    was said, computed here (a small model subtracts dates badly)."""
    store = ChunkStore(home, embeddings=False)
    store.create_many([ChunkDraft(content="I bought a red bike.", created_at=MAY)])
    store.close()
    seen: list[str] = []

    def fn(messages: list[Message], schema: dict[str, Any] | None) -> str:
        seen.append([m for m in messages if m.role == "user"][-1].content)
        return json.dumps({"reply": "4 weeks ago."})

    no_check = home.config.agent.model_copy(update={"verify_min": 0.0})
    with Agent(
        home, ScriptedLLM(fn=fn), config=no_check, prompt_set="qa", learn_profile=False
    ) as a:
        a.turn("How many weeks ago did I buy a bike?", as_of="2023-05-30")
        assert "[2 May 2023, 4 weeks before the question]" in seen[-1]
        a.turn("When did I buy a bike?", as_of="2023-05-30")
        assert "[2 May 2023] " in seen[-1] and "before the question" not in seen[-1]
