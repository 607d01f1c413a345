"""One thing put in another's place: "X, not Y", "it isn't Y, it's X", "switched from Y
to X", "gave up Y for X", "switched to X, the Y wasn't working". X goes in Y's list; Y
is taken back only where the sentence says it is wrong or over."""

from __future__ import annotations

import pytest

from memagent.core import MemoryHome
from memagent.memory.profile.models import Resource
from memagent.memory.profile.swaps import (
    in_place_of,
    named_dose,
    names_a_medicine,
    other_doses,
    substitutes,
    taken_back,
    with_dose,
)
from profile_support import seed, store_of

HEALTH = "resource_user_health.json"
LISTS = [(HEALTH, "health.allergies"), (HEALTH, "health.medications")]


def held(home: MemoryHome) -> dict[str, Resource]:
    return store_of(home).load_all()


def test_x_not_y_puts_x_in_ys_list_and_leaves_y_to_the_negation(home: MemoryHome) -> None:
    seed(home, "I'm allergic to strawberries.", ("allergy", "strawberries", ""))
    said = ["sorry, raspberries, not strawberries"]
    assert substitutes(said, held(home), LISTS) == [(HEALTH, "health.allergies", "raspberries")]
    assert taken_back(said, held(home), LISTS) == []


@pytest.mark.parametrize(
    "said",
    [
        "It's not latex, it's nickel.",
        "Correction: it isn't latex I react to, it's nickel.",
    ],
)
def test_it_isnt_y_its_x_takes_y_back(home: MemoryHome, said: str) -> None:
    seed(home, "I'm allergic to latex.", ("allergy", "latex", ""))
    assert substitutes([said], held(home), LISTS) == [(HEALTH, "health.allergies", "nickel")]
    assert taken_back([said], held(home), LISTS) == ["latex"]


def test_switched_to_x_with_the_held_one_named_replaces_it(home: MemoryHome) -> None:
    seed(home, "I take loratadine.", ("medication", "loratadine", ""))
    said = ["switched to cetirizine, the loratadine wasn't touching it"]
    assert substitutes(said, held(home), LISTS) == [(HEALTH, "health.medications", "cetirizine")]
    assert taken_back(said, held(home), LISTS) == ["loratadine"]


def test_a_contrast_about_nothing_held_swaps_nothing(home: MemoryHome) -> None:
    seed(home, "I'm allergic to latex.", ("allergy", "latex", ""))
    said = ["It wasn't the coffee that kept me up, it was the tea."]
    assert substitutes(said, held(home), LISTS) == []
    assert taken_back(said, held(home), LISTS) == []


@pytest.mark.parametrize(
    ("value", "statement", "new"),
    [
        ("padel", "gave up squash for padel", True),
        ("squash", "gave up squash for padel", False),
        ("raspberries", "raspberries, not strawberries", True),
        ("nickel", "it's not latex but nickel", True),
        ("cetirizine", "switched to cetirizine, the loratadine wasn't touching it", True),
        ("tea", "I drink tea every morning", False),
    ],
)
def test_in_place_of(value: str, statement: str, new: bool) -> None:
    assert in_place_of(value, statement) is new


@pytest.mark.parametrize(
    ("value", "clause", "dosed"),
    [
        ("lisinopril", "dose went up, I'm on 20mg of lisinopril now", "lisinopril 20mg"),
        ("metformin", "metformin 500mg twice a day", "metformin 500mg"),
        ("ibuprofen", "ibuprofen when needed", "ibuprofen"),
        ("sertraline 50mg", "sertraline 50mg since June", "sertraline 50mg"),
    ],
)
def test_a_medicine_is_read_with_the_dose_said_beside_it(
    value: str, clause: str, dosed: str
) -> None:
    assert with_dose(value, clause) == dosed


def test_a_new_dose_is_in_the_old_ones_place(home: MemoryHome) -> None:
    seed(home, "I take lisinopril 10mg.", ("medication", "lisinopril 10mg", ""))
    seed(home, "I take metformin.", ("medication", "metformin", ""))
    resources = store_of(home).load_all()
    assert other_doses("lisinopril 20mg", resources) == ["lisinopril_10mg"]
    assert other_doses("lisinopril", resources) == []  # no dose said: nothing replaced


@pytest.mark.parametrize(
    ("value", "clause", "named"),
    [
        ("daily 50mg", "i take sertraline 50mg daily, mentioning it", "sertraline 50mg"),
        ("50mg", "I take 50mg of it", "50mg"),  # no medicine said before the dose
        ("sertraline", "i take sertraline 50mg", "sertraline"),  # named already
        ("20mg", "my dose went up to 20mg", "20mg"),
    ],
)
def test_a_dose_read_alone_takes_the_medicine_said_with_it(
    value: str, clause: str, named: str
) -> None:
    assert named_dose(value, clause) == named


@pytest.mark.parametrize(
    ("value", "named"),
    [("daily", False), ("50mg twice a day", False), ("sertraline", True), ("vitamin D", True)],
)
def test_a_medicine_is_more_than_its_dose_and_how_often(value: str, named: bool) -> None:
    assert names_a_medicine(value) is named
