"""Personas, sliders, the HUD and traces."""

from __future__ import annotations

import json

import pytest

from memagent.agent import Agent, Personas, hud_status, write_hud
from memagent.agent.personas import STARTER_PERSONAS
from memagent.core import CorruptFile, InvalidInput, MemoryHome, NotFound
from memagent.llm import ScriptedLLM


def test_init_creates_personas_and_sliders(home: MemoryHome) -> None:
    p = Personas(home)
    assert set(STARTER_PERSONAS) <= set(p.names())
    sliders = p.sliders()
    assert {"creativity", "technicality", "humor", "directness"} <= set(sliders)
    for s in sliders.values():
        assert set(s.anchors) == {0, 50, 100}
    assert p.active_name() == "BASE"


def test_render_uses_the_nearest_anchor(home: MemoryHome) -> None:
    p = Personas(home)
    p.set_slider("humor", 95)
    text = p.render()
    assert "Humor 95/100: Playful and witty" in text
    p.set_slider("HUMOR", 0)
    assert "Humor 0/100: Entirely serious." in p.render()
    assert p.load("BASE").sliders["humor"] == 0


def test_use_changes_the_system_prompt(home: MemoryHome) -> None:
    Personas(home).use("TECHNICAL_COPILOT")
    reloaded = MemoryHome.open(home.root)
    assert reloaded.config.agent.persona == "TECHNICAL_COPILOT"
    llm = ScriptedLLM(['{"reply": "ok"}'])
    with Agent(reloaded, llm, learn_profile=False, embeddings=False) as a:
        a.turn("hi")
    system = llm.calls[0].messages[0].content
    assert system.startswith("You are a technical copilot.")
    assert "Technicality 90/100" in system
    llm2 = ScriptedLLM(['{"reply": "ok"}'])
    with Agent(
        reloaded, llm2, persona="CREATIVE_DIRECTOR", learn_profile=False, embeddings=False
    ) as a:
        a.turn("hi")
    assert "creative director" in llm2.calls[0].messages[0].content


def test_bad_persona_requests(home: MemoryHome) -> None:
    p = Personas(home)
    ops = home.layout.ops_log.read_bytes()
    for bad in ("../etc", "", "a" * 65, "x y"):
        with pytest.raises(InvalidInput):
            p.use(bad)
    with pytest.raises(NotFound):
        p.use("NOPE")
    with pytest.raises(NotFound, match="no slider"):
        p.set_slider("charm", 10)
    for value in (-1, 101, True, 5.5):
        with pytest.raises(InvalidInput):
            p.set_slider("humor", value)  # type: ignore[arg-type]
    with pytest.raises(NotFound):
        Agent(home, ScriptedLLM([]), persona="NOPE", embeddings=False)
    assert home.layout.ops_log.read_bytes() == ops


def test_corrupt_persona_files_are_reported(home: MemoryHome) -> None:
    path = home.layout.personalities / "BASE.md"
    cases = [
        "no front matter",
        "---\nname: [unclosed\n---\nbody",
        "---\nname: BASE\nsliders: {humor: 300}\n---\n",
        "---\nname: BASE\nsliders: [1, 2]\n---\n",
        "---\n- a list\n---\n",
    ]
    for text in cases:
        path.write_text(text, encoding="utf-8")
        with pytest.raises(CorruptFile, match=r"personalities/BASE\.md"):
            Personas(home).load("BASE")
    path.write_bytes(b"\xff\xfe")
    with pytest.raises(CorruptFile):
        Personas(home).load("BASE")
    # a broken active persona does not stop the agent: it falls back to a plain one
    llm = ScriptedLLM(['{"reply": "ok"}'])
    with Agent(home, llm, learn_profile=False, embeddings=False) as a:
        assert a.turn("hi").ok
    (home.layout.sliders / "humor.md").write_text("---\nname: humor\n---\n- 0: only zero\n")
    with pytest.raises(CorruptFile, match="missing"):
        Personas(home).sliders()


def test_hud_counts_and_last_writes(home: MemoryHome) -> None:
    with Agent(home, ScriptedLLM(['{"reply": "ok"}']), learn_profile=False, embeddings=False) as a:
        a.turn("My bike is red.")
    path, status = write_hud(home)
    text = path.read_text(encoding="utf-8")
    assert path == home.layout.gauges / "LIVEHUD.md"
    assert status["memory"]["chunks"] == 1 and status["memory"]["conversations"] == 1
    assert status["memory"]["traces"] == 1 and status["index"]["status"] == "ok"
    assert "| episodic chunks | 1 |" in text and "## Last writes" in text
    assert any(w["actor"] == "agent" for w in hud_status(home)["last_writes"])
    assert home.ops(limit=1)[-1].op == "hud.update"


def test_trace_records_every_step(home: MemoryHome) -> None:
    from memagent.agent import Traces

    llm = ScriptedLLM(["garbage", '{"actions": [{"action": "list_files"}]}', '{"reply": "done"}'])
    with Agent(home, llm, learn_profile=False, embeddings=False) as a:
        a.turn("list")
    doc = Traces(home).last()
    assert [s["step"] for s in doc["steps"]] == [1, 2, 3]
    assert "not a JSON object" in doc["steps"][0]["error"]
    assert doc["steps"][1]["result"]["ok"] is True
    assert doc["reply"] == "done" and doc["ok"] is True
    assert json.dumps(doc)
