"""Relative dates in memory lines are resolved against the day they were said."""

from __future__ import annotations

from datetime import date

import pytest

from memagent.agent.dates import annotate, resolve

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
