"""Places typed in lower case: read only in a sentence with no capitalised word, in a fixed
shape, and never a thing one is in rather than a place."""

from __future__ import annotations

import pytest

from memagent.memory.profile.lowplaces import lower_home, lower_stay


@pytest.mark.parametrize(
    ("sentence", "home"),
    [
        ("I'm a year 6 teacher and I live in leeds, so evenings are marking", "leeds"),
        ("hello, I am from brazil but I live in porto now since 3 years", "porto"),
        ("we live in milton keynes with the kids", "milton keynes"),
        ("I live in hope tbh", None),  # no place
        ("we live in a flat in leeds", None),  # a dwelling first: left to the model
        ("I live in the city", None),
        ("I live in London and love it", None),  # capitalised: the rules' own shape reads it
        ("I live in leeds", "leeds"),
    ],
)
def test_a_home_typed_in_lower_case(sentence: str, home: str | None) -> None:
    assert lower_home(sentence) == home


@pytest.mark.parametrize(
    ("sentence", "place"),
    [
        ("i'm in tokyo till the 20th!!", "tokyo"),
        ("working from lisbon for the next two weeks", "lisbon"),
        ("I'm in bed till noon", None),
        ("I'm in Tokyo till the 20th", None),  # capitalised: not this reading's
    ],
)
def test_a_stay_typed_in_lower_case(sentence: str, place: str | None) -> None:
    assert lower_stay(sentence) == place


@pytest.mark.parametrize(
    ("sentence", "place"),
    [
        ("in lisbon for work till friday, send me pastel de nata recs lol", "lisbon"),
        ("staying at my sister's in cork for 3 nights, she's just had twins", "cork"),
        ("in bed for 3 days with flu", None),
    ],
)
def test_a_stay_with_its_reason_or_its_nights(sentence: str, place: str | None) -> None:
    assert lower_stay(sentence) == place
