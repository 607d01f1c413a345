"""Medicines and conditions read by fixed phrasings, without the model."""

from __future__ import annotations

import pytest

from memagent.memory.profile.healthsaid import conditions_said, medicines_said


@pytest.mark.parametrize(
    ("sentence", "medicines"),
    [
        ("i take levothyroxine every morning before breakfast", ["levothyroxine"]),
        ("I'm on 20mg of citalopram", ["citalopram"]),
        ("im on metformin and ramipril", ["metformin"]),
        ("I'm on routine duty this week", []),
        ("I take the train to work", []),
        ("my mum takes warfarin", []),
    ],
)
def test_a_medicine_the_writer_takes(sentence: str, medicines: list[str]) -> None:
    assert medicines_said(sentence) == medicines


@pytest.mark.parametrize(
    ("sentence", "conditions"),
    [
        ("i have ADHD so a wall of text won't work", ["ADHD"]),
        ("I was diagnosed with coeliac disease in May", ["coeliac disease"]),
        ("I have a bad back", ["a bad back"]),
        ("my son has asthma", []),
        ("I have a meeting at 3", []),
    ],
)
def test_a_condition_the_writer_has(sentence: str, conditions: list[str]) -> None:
    assert conditions_said(sentence) == conditions


def test_oversized_input_is_read_in_bounded_time() -> None:
    said = "I take " + "a" * 20_000 + "pril"
    assert medicines_said(said) == ["a" * 20_000 + "pril"]
    assert conditions_said("I have " * 5_000) == []
