"""What names a drink: by kind, by brand, by the words after it, or by being drunk."""

from __future__ import annotations

import pytest

from memagent.memory.profile.drinks import DRINKS, drink_named
from memagent.memory.profile.kinds import fix_kind


@pytest.mark.parametrize(
    "value", ["irn bru", "Irn-Bru", "red bull", "monster", "lucozade", "a cuppa", "vimto"]
)
def test_drinks_by_brand_and_chat_word_are_drinks(value: str) -> None:
    assert DRINKS.search(value)


@pytest.mark.parametrize("value", ["monster munch", "licorice", "brewery tour", "teacakes"])
def test_foods_and_other_things_are_not_drinks(value: str) -> None:
    assert not DRINKS.search(value)


def test_a_drink_named_by_the_words_after_it() -> None:
    assert drink_named("hibiscus", "I love an iced hibiscus tea")
    assert not drink_named("licorice", "I love licorice")


@pytest.mark.parametrize(
    ("value", "clause"),
    [
        ("irn bru", "irn bru is life 🧡"),
        ("monster", "love a monster on nights, 2 a shift easy"),
    ],
)
def test_a_branded_drink_the_model_read_stays_a_drink(value: str, clause: str) -> None:
    assert fix_kind("drink_like", value, clause) == "drink_like"
    assert fix_kind("food_like", value, clause) == "drink_like"
