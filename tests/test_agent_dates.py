"""Relative dates in memory lines are resolved against the day they were said."""

from __future__ import annotations

from datetime import date

import pytest

from memagent.agent.dates import ago_unit, annotate, elapsed, resolve

SAID = date(2023, 5, 8)  # a Monday


@pytest.mark.parametrize(
    ("phrase", "meaning"),
    [
        ("yesterday", "7 May 2023"),
        ("Last night", "7 May 2023"),
        ("today", "8 May 2023"),
        ("tomorrow", "9 May 2023"),
        ("last week", "the week before 8 May 2023"),
        ("last weekend", "the weekend before 8 May 2023"),
        ("last month", "April 2023"),
        ("next month", "June 2023"),
        ("last year", "2022"),
        ("last Friday", "5 May 2023"),
        ("last Monday", "1 May 2023"),  # the one before, not the day itself
        ("3 days ago", "5 May 2023"),
        ("two weeks ago", "the week of 24 April 2023"),
        ("a year ago", "2022"),
    ],
)
def test_resolve(phrase: str, meaning: str) -> None:
    assert resolve(phrase, SAID) == meaning


def test_month_arithmetic_crosses_years() -> None:
    assert resolve("last month", date(2023, 1, 15)) == "December 2022"
    assert resolve("next month", date(2023, 12, 1)) == "January 2024"


def test_annotate_keeps_text_and_adds_dates() -> None:
    text = "I went to the support group yesterday, and last week I painted."
    assert annotate(text, SAID) == (
        "I went to the support group yesterday [7 May 2023], and last week "
        "[the week before 8 May 2023] I painted."
    )
    assert annotate("Nothing relative here; yesterdays are gone.", SAID) == (
        "Nothing relative here; yesterdays are gone."
    )
    assert annotate("9999 days ago", SAID) == "9999 days ago"  # out of range: left alone
    huge = "yesterday " * 10_000
    assert annotate(huge, SAID).count("[7 May 2023]") == 10_000


@pytest.mark.parametrize(
    ("question", "unit"),
    [
        ("How many weeks ago did I buy the bike?", "week"),
        ("how long ago was the trip?", "auto"),
        ("How many days ago did we meet?", "day"),
        ("How many months ago did she move?", "month"),
        ("When did I buy it?", None),
        ("How long did the trip last?", None),
        ("how many " * 2000 + "ago", None),
    ],
)
def test_ago_unit(question: str, unit: str | None) -> None:
    assert ago_unit(question) == unit


@pytest.mark.parametrize(
    ("said", "asked", "unit", "words"),
    [
        (date(2023, 5, 8), date(2023, 5, 29), "week", "3 weeks before the question"),
        (date(2023, 5, 8), date(2023, 5, 9), "day", "1 day before the question"),
        (date(2023, 5, 8), date(2023, 5, 18), "auto", "10 days before the question"),
        (date(2023, 1, 31), date(2023, 5, 29), "auto", "3 months before the question"),
        (date(2021, 1, 31), date(2023, 5, 29), "auto", "2 years before the question"),
        (date(2023, 5, 8), date(2023, 5, 7), "day", None),
    ],
)
def test_elapsed(said: date, asked: date, unit: str, words: str | None) -> None:
    assert elapsed(said, asked, unit) == words
