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
