"""Where the user is: a stay moved, ended by going home or back in the home town, and
a plan that is only the stay read again. Fixed dates, no model."""

from __future__ import annotations

from datetime import date

import pytest

from memagent.core import MemoryHome
from memagent.memory.profile import ProfileStore
from memagent.memory.profile.fact_schema import Extracted
from memagent.memory.profile.facts import plan
from memagent.memory.profile.stays import as_stay
from profile_support import said_on as said

WED = date(2026, 3, 4)
THU = date(2026, 5, 14)


def test_staying_on_moves_the_stays_end(home: MemoryHome) -> None:
    said(home, "I'm in Lisbon until Sunday.", ("whereabouts", "Lisbon", ""), today=THU)
    got = said(home, "change of plans, we're staying on till Wednesday 😎", today=THU)
    assert got == ["whereabouts.current: In Lisbon (until Wed 2026-05-20) @2026-05-20"]


def test_back_in_the_home_town_ends_the_stay(home: MemoryHome) -> None:
    said(home, "I live in Dublin.", ("home", "Dublin", ""))
    said(home, "I'm in Madrid this week.", ("whereabouts", "Madrid", ""))
    got = said(home, "back in Dublin now, the Madrid trip was great", ("whereabouts", "Madrid", ""))
    assert got == ["personal.facts: Lives in Dublin"]


def test_back_in_another_town_is_a_stay_not_home(home: MemoryHome) -> None:
    said(home, "I live in Dublin.", ("home", "Dublin", ""))
    got = said(home, "I'm back in Paris for a week", ("whereabouts", "Paris", ""))
    assert "whereabouts.current: In Paris (until Wed 2026-03-11) @2026-03-11" in got


@pytest.mark.parametrize(
    "text",
    ["I'm no longer in Oslo, the conference got cancelled", "I'm not in Oslo any more"],
)
def test_a_stay_said_to_be_over_is_removed(home: MemoryHome, text: str) -> None:
    said(home, "I'm in Oslo this week.", ("whereabouts", "Oslo", ""))
    assert said(home, text, ("whereabouts", "Oslo", "")) == []


def test_a_plan_read_in_the_clause_of_a_stay_is_the_stay(home: MemoryHome) -> None:
    got = said(
        home,
        "in Tokyo for work till the 20th, jetlag is brutal",
        ("whereabouts", "Tokyo", ""),
        ("routine", "work till the 20th", ""),
    )
    assert got == ["whereabouts.current: In Tokyo (until Fri 2026-03-20) @2026-03-20"]


def test_what_a_stay_is_for_is_the_stay(home: MemoryHome) -> None:
    got = said(
        home,
        "in Tokyo till the 20th for a conference",
        ("whereabouts", "Tokyo", ""),
        ("plan", "conference", ""),
    )
    assert got == ["whereabouts.current: In Tokyo (until Fri 2026-03-20) @2026-03-20"]


def test_an_event_with_a_day_of_its_own_beside_a_stay_is_kept(home: MemoryHome) -> None:
    got = said(
        home,
        "in Tokyo till the 20th for a conference on the 18th",
        ("whereabouts", "Tokyo", ""),
        ("plan", "conference", ""),
    )
    assert len(got) == 2


def test_here_until_after_a_stay_is_not_a_plan(home: MemoryHome) -> None:
    planned = plan(
        [Extracted(kind="whereabouts", value="Lima"), Extracted(kind="routine", value="March 18")],
        ["landed in Lima!!", "here until march 18 for my friend's thesis defense"],
        ProfileStore(home, today=lambda: WED).load_all(),
        WED,
    )
    assert [o.path for o in planned.operations] == ["whereabouts.current"]


def test_an_end_said_of_a_stay_is_not_the_end_of_a_taste_beside_it(home: MemoryHome) -> None:
    got = said(
        home,
        "stuck in Doha on a layover until tomorrow morning, I love airport sushi",
        ("whereabouts", "Doha", ""),
        ("food_like", "airport sushi", ""),
    )
    assert "food.likes: Likes airport sushi" in got  # no end day


@pytest.mark.parametrize(
    "text",
    [
        "back home from Cape Town, trip got cut short because of a work emergency",
        "discharged this morning, finally home in my own bed",
        "we're back home now",
        "Well we've come home early, the weather turned awful and the caravan leaks",
        "I've made it home",
    ],
)
def test_home_again_ends_the_stay(home: MemoryHome, text: str) -> None:
    said(home, "I'm in Cape Town until Sunday.", ("whereabouts", "Cape Town", ""))
    assert said(home, text) == []


@pytest.mark.parametrize(
    "text",
    [
        "My sister flew back home yesterday.",
        "can't wait to be back home",
        "back home tomorrow",
        "we might come home early if the weather turns",
    ],
)
def test_someone_else_or_a_wish_to_be_home_leaves_the_stay(home: MemoryHome, text: str) -> None:
    said(home, "I'm in Rome until Sunday.", ("whereabouts", "Rome", ""))
    assert said(home, text) == ["whereabouts.current: In Rome (until Sun 2026-03-08) @2026-03-08"]


def test_going_home_sooner_shortens_the_stay(home: MemoryHome) -> None:
    said(home, "in Rome till sunday", ("whereabouts", "Rome", ""))
    got = said(home, "ugh change of plans, work needs me back, flying home tomorrow morning")
    assert got == ["whereabouts.current: In Rome (until Thu 2026-03-05) @2026-03-05"]
    assert said(home, "flying home next month") == got  # not sooner: no change


def test_a_stay_at_a_relatives_reads_as_said(home: MemoryHome) -> None:
    got = said(home, "staying at my mum's till the 20th", ("whereabouts", "my mum's", ""))
    assert got == ["whereabouts.current: At my mum's (until Fri 2026-03-20) @2026-03-20"]


def test_the_stays_sentence_copied_as_a_plan_is_the_stay(home: MemoryHome) -> None:
    """The model lists the clause as a plan before the stay: the plan is the stay read
    again, though it names an event, and the stay is kept."""
    text = "in Nairobi till Sunday for a conference"
    got = said(home, text, ("plan", text, ""), ("whereabouts", "Nairobi", ""))
    assert [line.split(" (")[0] for line in got] == ["whereabouts.current: In Nairobi"]


def test_a_stay_at_someones_is_in_the_place_the_clause_names(home: MemoryHome) -> None:
    got = said(
        home,
        "on annual leave and staying at my cousin's in Kerry for the next 6 days",
        ("whereabouts", "my cousin's", ""),
        today=date(2026, 7, 31),
    )
    assert got == ["whereabouts.current: In Kerry (until Thu 2026-08-06) @2026-08-06"]


def test_a_stay_read_as_a_plan_is_the_stay(home: MemoryHome) -> None:
    got = said(
        home,
        "at my parents' in Cork for the next 5 days, mam's cooking is unreal",
        ("routine", "at my parents' in Cork for the next 5 days", ""),
    )
    assert got == ["whereabouts.current: In Cork (until Mon 2026-03-09) @2026-03-09"]


@pytest.mark.parametrize("value", ["at Dishoom till 9", "at work till 6", "at the gym for an hour"])
def test_an_evening_out_or_work_is_no_stay(value: str) -> None:
    assert as_stay(Extracted(kind="plan", value=value)).kind == "plan"
