"""Which questions need several memories (memagent.index.breadth)."""

from __future__ import annotations

import pytest

from memagent.index.breadth import wants_many


@pytest.mark.parametrize(
    "query",
    [
        "How many fun runs did I miss in March?",
        "how much did I spend on coffee mugs",
        "How often do I see my therapist?",
        "What is the total number of episodes I listened to?",
        "How much money did I raise in total?",
        "How many fish are there in both of my aquariums?",
        "What did I pay for each mug?",
        "Which device did I set up first, the thermostat or the router?",
        "How many years older is my grandma than me?",
        "What is the order of the museums I visited, from earliest to latest?",
        "What gadget did I buy before the air fryer?",
        "How many stories have I written since I started?",
        "Did I increase or decrease the limit?",
        "Has my gym time changed?",
        "Do I still play volleyball?",
        "What is the difference between the two quotes?",
        "Which cities have I visited altogether?",
        "What are all the books Caroline read?",
        "What percentage of the team are women?",
    ],
)
def test_counting_comparing_ordering_and_change_want_many(query: str) -> None:
    assert wants_many(query)


@pytest.mark.parametrize(
    "query",
    [
        "What did I name my cat?",
        "Where did I complete my Bachelor's degree?",
        "Who gave me a stand mixer as a birthday gift?",
        "What type of cocktail did I try last weekend?",
        "Can you remind me of the venue you recommended?",
        "When did Melanie paint a sunrise?",
        "",
        "  ",
        "thanks",  # "than" inside a word is not a comparison
        "Everybody knows the beforehand plan",  # nor "every"/"before" inside words
    ],
)
def test_single_fact_questions_do_not(query: str) -> None:
    assert not wants_many(query)


def test_hostile_and_oversized_input_is_handled_quickly() -> None:
    assert not wants_many("a" * 100_000)
    assert wants_many("x " * 50_000 + "in total")
    assert not wants_many("\x00\ud800 how\nmanyfold")
