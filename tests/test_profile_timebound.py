"""Expiry read from a statement's words, resolved from the day it was said."""

from __future__ import annotations

from datetime import date

import pytest

from memagent.memory.profile.timebound import event_day, time_bound

WED = date(2026, 3, 4)  # a Wednesday


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I'm in Berlin until Friday.", date(2026, 3, 6)),
        ("in Berlin till fri", date(2026, 3, 6)),
        ("until Wednesday", date(2026, 3, 11)),  # said on a Wednesday: the next one
        ("until next Friday", date(2026, 3, 13)),  # Friday of next week
        ("until next Tuesday", date(2026, 3, 10)),  # already in next week
        ("I'm staying in Lisbon this week.", date(2026, 3, 8)),
        ("away all weekend", date(2026, 3, 8)),
        ("I'll be in Madrid till the 12th", date(2026, 3, 12)),
        ("until the 2nd", date(2026, 4, 2)),  # passed this month: next month's
        ("travelling until March 20", date(2026, 3, 20)),
        ("until 3 March", date(2027, 3, 3)),  # passed this year: next year's
        ("until 2026-05-01", date(2026, 5, 1)),
        ("for the next 5 days", date(2026, 3, 9)),
        ("for two weeks", date(2026, 3, 18)),
        ("for a week", date(2026, 3, 11)),  # a week from Wednesday: next Wednesday
        ("going vegan for the rest of april", date(2026, 4, 30)),
        ("I'm doing keto this month", date(2026, 3, 31)),
        ("I'm in Rome today", WED),
        ("until tomorrow", date(2026, 3, 5)),
        ("until the end of the month", date(2026, 3, 31)),
        ("I'm down in Brighton for the weekend.", date(2026, 3, 8)),
        ("over the weekend", date(2026, 3, 8)),
        ("Working from my parents' place in Galway for a fortnight.", date(2026, 3, 18)),
        ("for two fortnights", date(2026, 4, 1)),
        ("at my in-laws' in Nice for the rest of the month", date(2026, 3, 31)),
        ("here for the rest of the week", date(2026, 3, 8)),
        ("spending all of July on a farm in Kerry", date(2026, 7, 31)),
        ("in Lyon for the whole of April", date(2026, 4, 30)),
        ("away throughout January", date(2027, 1, 31)),  # passed this year: next year's
        ("In Seoul on business, flying home Saturday", date(2026, 3, 7)),
        ("leaving on Monday", date(2026, 3, 9)),
        ("stuck in Fresno until Thursday the 12th", date(2026, 3, 12)),  # not the 5th
        ("until Friday, the 20th", date(2026, 3, 20)),
        ("here until march 18 for a thesis defense", date(2026, 3, 18)),
        ("working from Medellin until the end of January", date(2027, 1, 31)),
        ("in Oslo till the end of April", date(2026, 4, 30)),
        ("until the end of next month", date(2026, 4, 30)),
    ],
)
def test_time_bounds_resolve_from_the_statement_date(text: str, expected: date) -> None:
    assert time_bound(text, WED) == expected


@pytest.mark.parametrize(
    "text",
    [
        "I live in Porto.",
        "I go to the gym on Mondays.",
        "I'm going to Monaco",
        "until 2026-02-30",  # not a day
        "until 2026-01-01",  # already past
        "until February 30",
        "I love March in Paris",  # a month named, not a span
        "I got back Monday",  # a return in the past
        "",
    ],
)
def test_no_time_bound(text: str) -> None:
    assert time_bound(text, WED) is None


def test_until_a_weekday_said_on_that_weekday_is_the_next_one() -> None:
    fri = date(2026, 3, 6)
    assert time_bound("I'm in Lisbon until Friday", fri) == date(2026, 3, 13)
    assert time_bound("until Saturday", fri) == date(2026, 3, 7)


def test_year_end_and_leap_day() -> None:
    assert time_bound("this month", date(2026, 12, 30)) == date(2026, 12, 31)
    assert time_bound("until the 29th", date(2028, 2, 10)) == date(2028, 2, 29)
    assert time_bound("until the 31st", date(2026, 12, 31)) == date(2026, 12, 31)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("My sister's wedding is on 14 June 2025 in Bergen", date(2025, 6, 14)),  # passed
        ("the wedding is on June 14, 2027", date(2027, 6, 14)),
        ("dentist on the 3rd", date(2026, 4, 3)),
        ("party next Friday", date(2026, 3, 13)),
        ("concert on Saturday", date(2026, 3, 7)),
        ("flight tomorrow", date(2026, 3, 5)),
        ("review on 2026-03-20", date(2026, 3, 20)),
        ("interview on 2 December", date(2026, 12, 2)),
        ("a trip to Rome in spring", None),
        ("on 31 February 2026", None),
    ],
)
def test_a_plans_day(text: str, expected: date | None) -> None:
    assert event_day(text, WED) == expected


def test_until_a_month_holds_through_the_month_before() -> None:
    jul = date(2026, 7, 7)
    assert time_bound("no alcohol at all till august", jul) == date(2026, 7, 31)
    assert time_bound("until January", date(2026, 12, 7)) == date(2026, 12, 31)
    assert time_bound("until August 3", jul) == date(2026, 8, 3)  # a day said: that day


@pytest.mark.parametrize(
    ("text", "until"),
    [
        ("I am working from my parents house in Kerala till 20th", date(2026, 3, 20)),
        ("in Kerala until 2nd", date(2026, 4, 2)),
        ("till 5 pm", None),
        ("until 3", None),
    ],
)
def test_a_day_of_the_month_without_the(text: str, until: date | None) -> None:
    assert time_bound(text, date(2026, 3, 4)) == until
