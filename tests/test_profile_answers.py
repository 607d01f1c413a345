"""The profile serves answers: the facts a question is about, with their dates;
and when the profile and what the user said disagree, the later one holds, or,
with no clear latest, the answer says so (`memory.profile.answers`)."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from memagent.agent import Agent
from memagent.cli.app import app
from memagent.core import MemoryHome
from memagent.llm import Message, ScriptedLLM
from memagent.memory.chunks import ChunkDraft, ChunkStore
from memagent.memory.profile import ProfileStore, apply_operations, parse_operation
from memagent.memory.profile.answers import Said, disagreements, for_question, topics_of

GENERAL = "resource_user_general_prefs.json"
HEALTH = "resource_user_health.json"
ROUTINE = "resource_user_routine.json"
TODAY = date(2026, 3, 4)
NOTED = "2026-03-02T10:00:00.123456+00:00"
runner = CliRunner()


def seed(
    home: MemoryHome, *items: tuple[str, str, str, str, str | None], noted: str = NOTED
) -> None:
    """Items `(file, path, key, display, expiry)`, all noted at `noted`."""
    store = ProfileStore(home, today=lambda: TODAY)
    ops = [
        parse_operation(
            {
                "operation": "append",
                "file": f,
                "path": p,
                "value": {"item": k, "display": d},
                "expiry": e,
            }
        )
        for f, p, k, d, e in items
    ]
    assert apply_operations(store, ops).ok
    for path in home.layout.profile.glob("resource_*.json"):  # a fixed day, by hand
        doc = json.loads(path.read_text(encoding="utf-8"))
        text = json.dumps(doc).replace('"added": "20', '"added": "X20')
        doc = json.loads(text)

        def fix(node: Any) -> None:
            if isinstance(node, dict):
                if str(node.get("added", "")).startswith("X"):
                    node["added"] = noted
                for v in node.values():
                    fix(v)
            elif isinstance(node, list):
                for v in node:
                    fix(v)

        fix(doc)
        path.write_text(json.dumps(doc, indent=2), encoding="utf-8")


def said_lines(home: MemoryHome, *lines: tuple[str, str]) -> None:
    """Lines the user said, `(text, created_at)`, as an import stores them."""
    store = ChunkStore(home, embeddings=False)
    store.create_many(
        [
            ChunkDraft(content=t, created_at=at, source={"kind": "import", "role": "user"})
            for t, at in lines
        ]
    )
    store.close()


def resources(home: MemoryHome) -> Any:
    return ProfileStore(home, today=lambda: TODAY).load_all()


def test_topics_of_questions() -> None:
    assert [t.words for t in topics_of("What can't I eat?")] == ["what you eat"]
    assert [t.words for t in topics_of("Where am I this week?")] == ["where you are"]
    assert [t.words for t in topics_of("Where do I live?")] == ["where you live"]
    assert topics_of("How am I?") == []


def test_the_questions_facts_come_first_with_their_dates(home: MemoryHome) -> None:
    seed(
        home,
        (GENERAL, "personal.facts", "home", "Lives in Porto", None),
        (HEALTH, "health.allergies", "peanuts", "Allergic to peanuts", None),
        (ROUTINE, "whereabouts.current", "whereabouts", "In Berlin", "2026-03-06"),
    )
    eat = for_question(resources(home), TODAY, "What can't I eat?")
    assert eat.lines[0] == "Allergic to peanuts (noted 2026-03-02)"
    where = for_question(resources(home), TODAY, "Where am I this week?")
    assert where.lines[0] == "In Berlin (until 2026-03-06) (noted 2026-03-02)"
    gone = for_question(resources(home), date(2026, 3, 7), "Where am I this week?")
    assert not [x for x in gone.lines if "Berlin" in x]  # expired: never served


def test_the_later_of_profile_and_said_holds(home: MemoryHome) -> None:
    seed(home, (GENERAL, "personal.facts", "home", "Lives in Porto", None))
    res = resources(home)
    older = Said.of("I live in Lisbon.", "2026-02-20T09:00:00.5+00:00")
    newer = Said.of("I live in Lisbon.", "2026-03-03T09:00:00.5+00:00")
    same_day = Said.of("I live in Lisbon.", "2026-03-02")  # only a day is known
    assert [d.latest for d in disagreements(res, [older], TODAY)] == ["profile"]
    assert [d.latest for d in disagreements(res, [newer], TODAY)] == ["said"]
    assert [d.latest for d in disagreements(res, [same_day], TODAY)] == [None]
    agree = Said.of("I live in Porto.", "2026-03-03T09:00:00.5+00:00")
    other = Said.of("My sister lives in Lisbon.", "2026-03-03T09:00:00.5+00:00")
    question = Said.of("Do I live in Lisbon?", "2026-03-03T09:00:00.5+00:00")
    assert disagreements(res, [agree, other, question], TODAY) == []

    view = for_question(res, TODAY, "Where do I live?", [newer])
    assert view.unsure is None
    assert view.lines[0].startswith("Lives in Porto (noted 2026-03-02; out of date: later, on 3 ")
    view = for_question(res, TODAY, "Where do I live?", [same_day])
    assert view.unsure is not None and "can't tell which is the latest" in view.unsure
    assert '"Lives in Porto" (noted 2 March 2026)' in view.unsure
    assert '"I live in Lisbon."' in view.unsure
    assert for_question(res, TODAY, "What can't I eat?", [same_day]).unsure is None


def test_an_unlearned_correction_of_an_allergy_is_a_disagreement(home: MemoryHome) -> None:
    seed(home, (HEALTH, "health.allergies", "kiwi", "Allergic to kiwi", None))
    later = Said.of("Turns out I'm not allergic to kiwi.", "2026-03-03T09:00:00.5+00:00")
    found = disagreements(resources(home), [later], TODAY)
    assert [(d.item, d.latest) for d in found] == [("kiwi", "said")]


def answerer(seen: list[list[Message]], reply: str = "Porto.") -> ScriptedLLM:
    def fn(messages: list[Message], schema: dict[str, Any] | None) -> str:
        seen.append(messages)
        return json.dumps({"reply": reply})

    return ScriptedLLM(fn=fn)


def test_the_agent_says_so_when_memory_disagrees_with_no_latest(home: MemoryHome) -> None:
    seed(home, (GENERAL, "personal.facts", "home", "Lives in Porto", None))
    said_lines(home, ("I live in Lisbon.", "2026-03-02"))
    seen: list[list[Message]] = []
    with Agent(
        home, answerer(seen), prompt_set="instruct", embeddings=False, learn_profile=False
    ) as a:
        turn = a.turn("Where do I live?")
    assert turn.refused_by == "profile" and not seen  # no model call
    assert "can't tell which is the latest" in turn.reply and "Porto" in turn.reply
    # the sets that act with tools read memory themselves: their context says so
    with Agent(home, answerer(seen), embeddings=False, learn_profile=False) as a:
        ctx = a.memory.context("Where do I live?", budget_tokens=1000, k=5)
    assert "Lives in Porto (noted 2026-03-02; unclear which is latest: on 2 March" in ctx.text


def test_the_agent_answers_from_the_latest_with_dates(home: MemoryHome) -> None:
    seed(
        home,
        (GENERAL, "personal.facts", "home", "Lives in Porto", None),
        (ROUTINE, "whereabouts.current", "whereabouts", "In Berlin", "2099-03-06"),
    )
    said_lines(home, ("I live in Lisbon.", "2026-02-01T10:00:00.5+00:00"))
    seen: list[list[Message]] = []
    with Agent(
        home, answerer(seen), prompt_set="instruct", embeddings=False, learn_profile=False
    ) as a:
        assert a.turn("Where do I live?").reply == "Porto."
        a.turn("Where am I this week?")
    asked = "\n".join(m.content for m in seen[0])
    assert (
        "Profile: Lives in Porto (noted 2026-03-02; replaces what you said on 1 February" in asked
    )
    assert "Profile: In Berlin (until 2099-03-06) (noted 2026-03-02)" in "\n".join(
        m.content for m in seen[-1]
    )


def test_ask_from_the_command_line_uses_the_profile(home: MemoryHome, tmp_path: Path) -> None:
    cfg = home.layout.config
    text = cfg.read_text().replace("[embeddings]\nenabled = true", "[embeddings]\nenabled = false")
    cfg.write_text(text, encoding="utf-8")
    seed(home, (HEALTH, "health.allergies", "peanuts", "Allergic to peanuts", None))
    script = tmp_path / "s.json"
    script.write_text(json.dumps(['{"reply": "Peanuts: you are allergic to them."}']))
    args = ["ask", "What can't I eat?", "--home", str(home.root), "--model", f"scripted:{script}"]
    res = runner.invoke(app, [*args, "--no-learn", "--json", "--prompt-set", "instruct"])
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["reply"] == "Peanuts: you are allergic to them."
    assert {"kind": "fact"} in doc["memory_sources"]
