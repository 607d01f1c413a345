"""Fixed phrasings read by rule, ahead of the model (`memory.profile.rules`)."""

from __future__ import annotations

import pytest

from memagent.memory.profile.facts import Extracted
from memagent.memory.profile.fallback import fallback_facts
from memagent.memory.profile.rules import merge, rule_facts


def read(sentence: str) -> list[tuple[str, str, str]]:
    return [(f.kind, f.value, f.name) for f in rule_facts([sentence])]


@pytest.mark.parametrize(
    ("sentence", "facts"),
    [
        ("I'm allergic to cats and dogs.", [("allergy", "cats", ""), ("allergy", "dogs", "")]),
        ("I have a severe allergy to cashews.", [("allergy", "cashews", "")]),
        ("I have a nut allergy.", [("allergy", "nut", "")]),
        ("I'm allergic to almonds too.", [("allergy", "almonds", "")]),
        ("I'm allergic to it.", []),  # what "it" is needs the sentence before
        (
            "I have two daughters, Ana and Bea.",
            [("family", "daughter", "Ana"), ("family", "daughter", "Bea")],
        ),
        (
            "I speak Portuguese and English.",
            [("language", "Portuguese", ""), ("language", "English", "")],
        ),
        ("I collect vintage stamps.", [("like", "vintage stamps", "")]),
        ("I'm flying to Tokyo next month for a conference.", [("plan", "Tokyo", "")]),
        ("I'm flying to Tokyo.", []),  # no time: not a plan by rule
        ("I'm a teacher and I run every morning.", [("work", "teacher", "")]),
        ("I am a student nurse.", [("work", "student nurse", "")]),
        ("I'm a big fan of jazz.", []),  # not a job
        ("I'm a night owl.", []),
        ("I retired in January, no more spreadsheets for me", [("work", "retired", "")]),
        ("I'm retired now.", [("work", "retired", "")]),
        ("My dad retired from the navy.", []),  # someone else
    ],
)
def test_rules(sentence: str, facts: list[tuple[str, str, str]]) -> None:
    assert read(sentence) == facts


def test_habits_are_read_only_with_a_time_or_a_day() -> None:
    assert [f.kind for f in fallback_facts(["I rarely sleep before 2am."])] == ["routine"]
    assert [f.kind for f in fallback_facts(["I stay at my partner's place on weekends."])] == [
        "routine"
    ]
    assert fallback_facts(["I always forget my keys."]) == []
    assert fallback_facts(["My brother usually calls at 9pm."]) == []


def test_the_rules_reading_wins_over_the_models() -> None:
    rules = [Extracted(kind="plan", value="Tokyo")]
    model = [Extracted(kind="whereabouts", value="Tokyo"), Extracted(kind="exercise", value="yoga")]
    assert [f.kind for f in merge(rules, model)] == ["plan", "exercise"]


@pytest.mark.parametrize(
    ("sentence", "facts"),
    [
        ("I love a good flat white.", [("like", "flat white")]),
        ("My sister's wedding is in June.", [("plan", "sister's wedding")]),
        ("I have a dentist appointment on March 10th.", [("plan", "dentist appointment")]),
        ("I like it.", []),
        ("My brother's party was great.", []),  # not ahead: no date
    ],
)
def test_loose_patterns_read_only_as_a_fallback(
    sentence: str, facts: list[tuple[str, str]]
) -> None:
    assert [(f.kind, f.value) for f in fallback_facts([sentence])] == facts


@pytest.mark.parametrize(
    ("sentence", "facts"),
    [
        ("Latex allergy here.", [("allergy", "Latex", "")]),
        ("I have a nut allergy.", [("allergy", "nut", "")]),
        (
            "My mother-in-law, Ruth, is moving in with us next month.",
            [("family", "mother-in-law", "Ruth")],
        ),
        ("I've got two cats, Salt and Pepper.", [("pet", "cat", "Salt"), ("pet", "cat", "Pepper")]),
        ("Correction: I relocated to Cork in January.", [("home", "Cork", "")]),
        ("I'm at the Singapore office through Saturday.", [("whereabouts", "Singapore", "")]),
        (
            "Camping in the Highlands until the end of the month.",
            [("whereabouts", "Highlands", "")],
        ),
        ("Working remotely from Lisbon for the next ten days.", [("whereabouts", "Lisbon", "")]),
        ("So I'm stuck in Nairobi till Monday.", [("whereabouts", "Nairobi", "")]),
        ("I'm down in Brighton for the weekend.", [("whereabouts", "Brighton", "")]),
        ("I'm stuck in traffic.", []),  # no place, no end
        ("I work in Leeds.", []),  # no end: not a stay
    ],
)
def test_rules_read_general_shapes(sentence: str, facts: list[tuple[str, str, str]]) -> None:
    assert read(sentence) == facts


def test_an_event_ahead_needs_a_time_ahead_not_any_in() -> None:
    assert fallback_facts(["My flight got delayed in Nairobi."]) == []
    assert [f.value for f in fallback_facts(["We've got a big family reunion in August."])] == [
        "big family reunion"
    ]


@pytest.mark.parametrize(
    ("said", "name"),
    [
        ("My name is Ilse Varga.", "Ilse Varga"),
        ("my name is Jean-Luc Picard, hi", "Jean-Luc Picard"),
        ("Call me Bo.", "Bo"),
        ("My name is Ilse and I live in Oslo.", "Ilse"),
    ],
)
def test_the_own_name_is_the_whole_name_said(said: str, name: str) -> None:
    assert [f.value for f in rule_facts([said]) if f.kind == "name"] == [name]
