"""Times named in a query become ranges (memagent.index.temporal)."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from memagent.core import InvalidInput
from memagent.index import Doc, Index, SearchParams, search
from memagent.index.temporal import day_words, parse_as_of, time_ranges

NOW = datetime(2023, 5, 30, 15, 16, tzinfo=UTC).timestamp()  # a Tuesday


def days(query: str, now: float = NOW) -> list[tuple[date, date]]:
    """Each range as (first day, day after the last)."""
    out = []
    for r in time_ranges(query, now):
        start = datetime.fromtimestamp(r.start, UTC).date()
        out.append((start, datetime.fromtimestamp(r.end, UTC).date()))
    return out


@pytest.mark.parametrize(
    ("query", "first", "after"),
    [
        ("What did John attend in March 2023?", date(2023, 3, 1), date(2023, 4, 1)),
        ("What movie did Joanna watch on 1 May, 2022?", date(2022, 5, 1), date(2022, 5, 2)),
        ("Who did Maria have dinner with on May 3, 2023?", date(2023, 5, 3), date(2023, 5, 4)),
        ("What did Tim read on 8th December, 2023?", date(2023, 12, 8), date(2023, 12, 9)),
        ("what happened on the 9th of November", date(2022, 11, 9), date(2022, 11, 10)),
        ("notes from 2023-05-01", date(2023, 5, 1), date(2023, 5, 2)),
        ("notes from 2023/04/02", date(2023, 4, 2), date(2023, 4, 3)),
        ("plans in early June", date(2022, 6, 1), date(2022, 6, 11)),
        ("the beginning of November 2022", date(2022, 11, 1), date(2022, 11, 11)),
        ("late February 2024", date(2024, 2, 21), date(2024, 3, 1)),
        ("In which games in 2023?", date(2023, 1, 1), date(2024, 1, 1)),
        ("what state in summer 2021", date(2021, 6, 1), date(2021, 9, 1)),
        ("what did we do last summer", date(2022, 6, 1), date(2022, 9, 1)),
        ("this winter", date(2022, 12, 1), date(2023, 3, 1)),
        ("yesterday", date(2023, 5, 29), date(2023, 5, 30)),
        ("the day before yesterday", date(2023, 5, 28), date(2023, 5, 29)),
        ("what did I say today", date(2023, 5, 30), date(2023, 5, 31)),
        ("last week", date(2023, 5, 22), date(2023, 5, 29)),
        ("this month", date(2023, 5, 1), date(2023, 6, 1)),
        ("last month", date(2023, 4, 1), date(2023, 5, 1)),
        ("Last Year", date(2022, 1, 1), date(2023, 1, 1)),
        ("last weekend", date(2023, 5, 27), date(2023, 5, 29)),
        ("events this weekend", date(2023, 6, 3), date(2023, 6, 5)),  # still ahead
        ("last Friday", date(2023, 5, 26), date(2023, 5, 27)),
        ("on Tuesday", date(2023, 5, 23), date(2023, 5, 24)),
        ("in December", date(2022, 12, 1), date(2023, 1, 1)),
        ("in May", date(2023, 5, 1), date(2023, 6, 1)),
    ],
)
def test_phrasings(query: str, first: date, after: date) -> None:
    assert days(query) == [(first, after)]


@pytest.mark.parametrize(
    ("query", "centre_days_back"),
    [
        ("What did I buy two weeks ago?", 14),
        ("3 days ago", 3),
        ("a couple of days ago", 2),
        ("a month ago", 30.44),
        ("one year ago", 365.25),
    ],
)
def test_ago_is_centred_on_the_offset(query: str, centre_days_back: float) -> None:
    (r,) = time_ranges(query, NOW)
    centre = (r.start + r.end) / 2
    assert abs((NOW - centre) / 86400 - centre_days_back) < 0.01
    assert r.end - r.start >= 2 * 86400


def test_past_n_runs_up_to_now() -> None:
    (r,) = time_ranges("anything in the past two weeks?", NOW)
    assert r.contains(NOW - 13 * 86400) and r.contains(NOW)
    assert not r.contains(NOW - 15 * 86400)


@pytest.mark.parametrize(
    "query",
    [
        "How many dinner parties have I attended in the past month?",
        "what did I buy in the last month",
        "over the past month, which events?",
        "The Past Month",
    ],
)
def test_the_past_month_runs_up_to_now_not_the_calendar_month(query: str) -> None:
    # Asked on 30 May: "the past month" holds 21 May; "last month" (April) does not.
    (r,) = time_ranges(query, NOW)
    assert r.contains(datetime(2023, 5, 21, 19, tzinfo=UTC).timestamp()) and r.contains(NOW)
    assert not r.contains(datetime(2023, 4, 20, tzinfo=UTC).timestamp())
    (april,) = time_ranges("what did I buy last month", NOW)
    assert not april.contains(datetime(2023, 5, 21, tzinfo=UTC).timestamp())


def test_past_week_and_year_are_rolling_previous_stays_calendar() -> None:
    assert days("in the past week") == [(date(2023, 5, 23), date(2023, 5, 31))]
    assert days("over the last year") == [(date(2022, 5, 30), date(2023, 5, 31))]
    assert days("the previous month") == [(date(2023, 4, 1), date(2023, 5, 1))]
    assert days("last week") == [(date(2023, 5, 22), date(2023, 5, 29))]
    # A weekend is a weekend: "the past weekend" is the latest one over.
    assert days("the past weekend") == [(date(2023, 5, 27), date(2023, 5, 29))]


def test_before_and_after_widen_a_week() -> None:
    (before,) = time_ranges("Where was Tim in the week before 16 November 2023?", NOW)
    assert datetime.fromtimestamp(before.start, UTC).date() == date(2023, 11, 9)
    assert datetime.fromtimestamp(before.end, UTC).date() == date(2023, 11, 17)
    (after,) = time_ranges("what did she do after 3 June 2023", NOW)
    assert datetime.fromtimestamp(after.end, UTC).date() == date(2023, 6, 11)


def test_two_dates_give_two_ranges_and_the_phrases() -> None:
    got = time_ranges("What did Joanna finish last Friday on 23 January, 2022?", NOW)
    assert [r.phrase for r in got] == ["23 January, 2022", "last Friday"]


@pytest.mark.parametrize(
    "query",
    [
        "May I ask what you recommended?",
        "you may want to check",
        "When did he fall off his bike?",
        "what did we spring on them",
        "Before the trip, what did I pack?",
        "how many cats do I have",
        "the 99th of Smarch",
        "",
    ],
)
def test_no_time_named(query: str) -> None:
    assert time_ranges(query, NOW) == []


def test_impossible_dates_are_skipped() -> None:
    # No 31 February: what is left is the month.
    assert days("on 31 February 2023") == [(date(2023, 2, 1), date(2023, 3, 1))]
    assert time_ranges("2023-13-45", NOW) == []


def test_hostile_and_oversized_queries_stay_bounded() -> None:
    huge = "in May 2023 " * 400 + "x" * 10_000
    got = time_ranges(huge, NOW)
    assert len(got) == 400 and all(r.phrase == "May 2023" for r in got)
    assert time_ranges("(" * 5000 + "[[]]\\\\", NOW) == []


def test_search_boosts_what_was_said_in_the_named_time(tmp_path: Path) -> None:
    may = datetime(2023, 5, 8, 12, tzinfo=UTC).timestamp()
    june = datetime(2023, 6, 20, 12, tzinfo=UTC).timestamp()
    idx = Index(tmp_path / "index.sqlite")
    idx.upsert(
        [
            Doc("a", "chunk", "chunks/a.json", "Went hiking with the dog", created=june),
            Doc("b", "chunk", "chunks/b.json", "Went hiking in the hills", created=may),
        ]
    )
    plain = SearchParams(temporal_boost=0.0)
    boosted = SearchParams(temporal_boost=1.0)
    q = "Where did I go hiking in May 2023?"
    assert search(idx, "Where did I go hiking with the dog?", params=boosted)[0].row.doc_id == "a"
    hits = search(idx, q, params=boosted, now=june)
    assert hits[0].row.doc_id == "b"
    assert hits[0].why["boosts"]["time"] == 1.0
    assert "time" not in hits[1].why.get("boosts", {})
    assert all("time" not in h.why.get("boosts", {}) for h in search(idx, q, params=plain))
    # Relative times count from `now`: "last month" seen from June is May.
    assert search(idx, "hiking last month", params=boosted, now=june)[0].row.doc_id == "b"


@pytest.mark.parametrize(
    ("text", "iso"),
    [
        ("2023-05-09", "2023-05-09T23:59:59+00:00"),
        (" 2023-05-09T10:00:00Z ", "2023-05-09T10:00:00+00:00"),
        ("2023-05-09T10:00", "2023-05-09T10:00:00+00:00"),
        ("2023-05-09T10:00:00+02:00", "2023-05-09T10:00:00+02:00"),
    ],
)
def test_parse_as_of(text: str, iso: str) -> None:
    assert parse_as_of(text).isoformat() == iso
    assert parse_as_of(date(2023, 5, 9)).isoformat() == "2023-05-09T23:59:59+00:00"
    assert parse_as_of(datetime(2023, 5, 9, 8)).tzinfo is not None


@pytest.mark.parametrize(
    "text",
    ["", "   ", "yesterday", "2023-02-30", "2023-13-01", "9 May 2023", "0001-01-01",
     "2023-05-09" * 10, "\x00", "2023-05-09T25:00", 20230509, None, ["2023-05-09"]],
)  # fmt: skip
def test_parse_as_of_refuses_anything_else_in_one_line(text: object) -> None:
    with pytest.raises(InvalidInput) as exc:
        parse_as_of(text)
    assert "\n" not in str(exc.value) and len(str(exc.value)) < 200
    assert "YYYY-MM-DD" in str(exc.value)


def test_day_words() -> None:
    assert day_words(datetime(2023, 5, 9, tzinfo=UTC)) == "9 May 2023"
