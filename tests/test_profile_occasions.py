"""Whether a clause says one day, a day besides its end, a habit, or a day ahead: what
tells a plan from a routine and a stay from a plan."""

from __future__ import annotations

import pytest

from memagent.memory.profile.occasions import (
    AHEAD,
    a_day_besides_its_end,
    day_said,
    habitual,
    one_day,
    when_only,
)


@pytest.mark.parametrize(
    ("clause", "one"),
    [
        ("dentist on friday at 3, remind me, I always forget", True),  # habit word elsewhere
        ("thursday 6pm physio", True),
        ("flying out tomorrow", True),
        ("yoga every Friday", False),
        ("choir on Tuesdays", False),
        ("every other Wednesday I see my therapist", False),
        ("I swim in the mornings", False),  # no day at all
    ],
)
def test_one_day(clause: str, one: bool) -> None:
    assert one_day(clause) is one


@pytest.mark.parametrize(
    ("clause", "besides"),
    [
        ("from Friday till Sunday at the lake house", True),
        ("conference on the 3rd, in Lisbon till the 5th", True),
        ("in Berlin till Friday", False),
        ("on crutches until the end of the month", False),
        ("no alcohol through next Sunday", False),
    ],
)
def test_a_day_besides_its_end(clause: str, besides: bool) -> None:
    assert a_day_besides_its_end(clause) is besides


@pytest.mark.parametrize(
    ("clause", "regular"),
    [
        ("I take the train to work", True),  # the present simple
        ("gym at 6am before work", True),
        ("I walk the dog every morning", True),
        ("I took the train to work yesterday", False),  # the past
        ("Feeling a bit under the weather", False),  # a passing state
        ("it's 3am and I'm wide awake eating konbini onigiri", False),  # the time it is now
        ("his sofa is tiny, staying for 4 nights", False),  # a stay's length
        ("swim most mornings", True),
        ("working nights this month, pub quiz on thursdays", True),
    ],
)
def test_habitual(clause: str, regular: bool) -> None:
    assert habitual(clause) is regular


@pytest.mark.parametrize(
    ("clause", "said"),
    [
        ("dentist on the 3rd", True),
        ("wedding next week", True),
        ("moving in June", True),
        ("flying out tomorrow", True),
        ("a check-up in two weeks", True),
        ("a call at three", False),  # only a clock time
        ("the dentist", False),
    ],
)
def test_day_said(clause: str, said: bool) -> None:
    assert day_said(clause) is said


@pytest.mark.parametrize(
    "clause",
    [
        "Okay, news: the hospital just rang and my laparoscopy is booked for 9 March",
        "Finally got a physio appointment for my shoulder, Tuesday 3 November at 4:15",
    ],
)
def test_a_booking_with_its_date_is_ahead(clause: str) -> None:
    assert AHEAD.search(clause)


def test_a_date_without_a_booking_is_not_ahead() -> None:
    assert not AHEAD.search("Tuesday 3 November was awful, I hurt my shoulder")


def test_a_meal_time_alone_is_only_a_when() -> None:
    assert when_only("before breakfast")
    assert not when_only("walk before breakfast")
