"""Times named in a query, as ranges to boost memories said within them.

A memory line knows when it was said; a question that names a time ("in May
2023", "on 9 November, 2022", "last summer", "two weeks ago", "last Saturday")
is usually about what was said then. `time_ranges` turns those phrases into
half-open UTC ranges `[start, end)` of epoch seconds, relative to `now` (when
the question is asked). Search uses them as a soft boost, never as a filter:
a wrong parse costs a little ranking, never a missing answer.

Recognised (case-insensitive): ISO and slashed dates; "9 November 2022",
"November 9th, 2022", "the 9th of November" (a year left out means the latest
such day not after `now`); "May 2023", "in May", "early/mid/late May 2023";
"in 2023", "summer 2022", "last/this summer"; "yesterday", "today", "last
night"; "N days/weeks/months/years ago" (digits or words, "a couple of");
"last/this/past week|month|year|weekend" ("past week" and "the last month" end
now; "last month" is the calendar month before this one); "in the past N days";
"last Friday",
"on Saturday". "before DATE" and "the week before DATE" widen the range a week
back, "after DATE" a week forward. Event-relative phrases ("before the trip")
name no date and yield nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

MONTHS = {
    name: i
    for i, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        1,
    )
    for name in names
}
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a couple of": 2,
    "a couple": 2,
    "couple of": 2,
    "a few": 3,
    "few": 3,
    "several": 3,
}
SEASONS = {"spring": (3, 3), "summer": (6, 3), "fall": (9, 3), "autumn": (9, 3), "winter": (12, 3)}
DAY = 86400.0

_MON = r"(?P<mon>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_NUM = r"(?P<n>\d{1,3}|" + "|".join(sorted(NUMBERS, key=len, reverse=True)) + r")"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_ORD = r"(?:st|nd|rd|th)?"
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (
        "iso",
        re.compile(r"\b(?P<year>(?:19|20)\d\d)[-/](?P<m>\d{1,2})[-/](?P<d>\d{1,2})\b"),
    ),
    (
        "day_month",
        re.compile(
            r"\b(?:the\s+)?(?P<d>\d{1,2})"
            + _ORD
            + r"\s+(?:of\s+)?"
            + _MON
            + r"(?:,?\s*"
            + _YEAR
            + r")?\b"
        ),
    ),
    (
        "month_day",
        re.compile(
            r"\b" + _MON + r"\s+(?P<d>\d{1,2})" + _ORD + r"(?!\d)(?:,?\s*" + _YEAR + r")?\b"
        ),
    ),
    (
        "month",
        re.compile(
            r"\b(?P<part>early|beginning of|start of|mid|middle of|late|end of|first half of"
            r"|second half of)?[\s-]*" + _MON + r"(?:,?\s*(?:of\s+)?" + _YEAR + r")?\b"
        ),
    ),
    (
        "season",
        re.compile(
            r"\b(?P<rel>last|this|past|previous)?\s*(?P<season>spring|summer|fall|autumn|winter)"
            r"(?:\s+(?:of\s+)?" + _YEAR + r")?\b"
        ),
    ),
    ("year", re.compile(r"\b(?:in|during|of|since|from|by|year|until)\s+" + _YEAR + r"\b")),
    ("yesterday", re.compile(r"\b(?:the\s+day\s+before\s+)?yesterday\b")),
    ("today", re.compile(r"\b(?:today|tonight|this\s+morning|this\s+afternoon|this\s+evening)\b")),
    ("last_night", re.compile(r"\blast\s+night\b")),
    (
        "ago",
        re.compile(_NUM + r"\s+(?P<unit>day|week|month|year)s?\s+(?:ago|before)\b"),
    ),
    (
        "past_n",
        re.compile(
            r"\b(?:in\s+)?the\s+(?:past|last)\s+" + _NUM + r"\s+(?P<unit>day|week|month|year)s?\b"
        ),
    ),
    (
        "calendar",
        re.compile(r"\b(?P<rel>last|this|past|previous)\s+(?P<unit>week|month|year|weekend)\b"),
    ),
    (
        "weekday",
        re.compile(
            r"\b(?P<rel>last|this|on|past|previous)\s+(?P<wd>" + "|".join(WEEKDAYS) + r")\b"
        ),
    ),
]
_BEFORE = re.compile(r"\b(?:the\s+)?(?:week\s+|days?\s+)?(?P<dir>before|prior\s+to|after)\s*$")
_SEASON_CONTEXT = re.compile(r"\b(?:in|during|over)(?:\s+the)?\s*$")
_MAY_CONTEXT = re.compile(r"(?:\b(?:in|during|of|since|until|by|early|mid|late|last|this)\s*)$")


_CONTEXT = {"month": _MAY_CONTEXT, "season": _SEASON_CONTEXT}


def _needs_context(kind: str, m: re.Match[str]) -> bool:
    """ "may"/"mar" are mostly verbs and a bare season ("did he fall?") mostly not a
    time: without a year (or a qualifier) they need a preposition before them."""
    if kind == "month":
        return m.group("mon") in ("may", "mar") and not (m.group("year") or m.group("part"))
    if kind == "season":
        return not (m.group("rel") or m.group("year"))
    return False


@dataclass(frozen=True)
class TimeRange:
    """`[start, end)` in epoch seconds, and the phrase it came from."""

    start: float
    end: float
    phrase: str

    def contains(self, t: float, slack: float = 0.0) -> bool:
        return self.start - slack <= t < self.end + slack


def _ts(d: date) -> float:
    return datetime(d.year, d.month, d.day, tzinfo=UTC).timestamp()


def _month_start(year: int, month: int) -> date:
    while month > 12:
        year, month = year + 1, month - 12
    while month < 1:
        year, month = year - 1, month + 12
    return date(year, month, 1)


def _latest_year(month: int, day: int, today: date) -> int:
    """The year of the latest `month`/`day` not after `today`."""
    try:
        return today.year if date(today.year, month, day) <= today else today.year - 1
    except ValueError:
        return today.year - 1


def _number(raw: str) -> int | None:
    if raw.isdigit():
        return int(raw)
    return NUMBERS.get(re.sub(r"\s+", " ", raw))


_THE = re.compile(r"\bthe\s+$")


def _rolling(rel: str, m: re.Match[str]) -> bool:
    """True for a span that ends now: "past week", "the last month" — but not
    "last month" or "previous week", which name the calendar one before this."""
    return rel == "past" or (rel == "last" and _THE.search(m.string[: m.start()]) is not None)


def _unit_days(unit: str) -> float:
    return {"day": 1.0, "week": 7.0, "month": 30.44, "year": 365.25}[unit]


def _span(start: date, end: date) -> tuple[float, float]:
    return _ts(start), _ts(end)


def _match_range(kind: str, m: re.Match[str], now: datetime) -> tuple[float, float] | None:
    g = m.groupdict()
    today = now.date()
    nowts = now.timestamp()
    try:
        if kind == "iso":
            d = date(int(g["year"]), int(g["m"]), int(g["d"]))
            return _span(d, d + timedelta(days=1))
        if kind in ("day_month", "month_day"):
            month, day = MONTHS[g["mon"]], int(g["d"])
            year = int(g["year"]) if g.get("year") else _latest_year(month, day, today)
            d = date(year, month, day)
            return _span(d, d + timedelta(days=1))
        if kind == "month":
            month = MONTHS[g["mon"]]
            year = int(g["year"]) if g.get("year") else _latest_year(month, 1, today)
            first, nxt = _month_start(year, month), _month_start(year, month + 1)
            part = re.sub(r"\s+", " ", g.get("part") or "")
            length = (nxt - first).days
            lo, hi = {
                "early": (0, 10),
                "beginning of": (0, 10),
                "start of": (0, 10),
                "first half of": (0, 15),
                "mid": (10, 20),
                "middle of": (10, 20),
                "late": (20, length),
                "end of": (20, length),
                "second half of": (15, length),
            }.get(part, (0, length))
            return _span(first + timedelta(days=lo), first + timedelta(days=hi))
        if kind == "season":
            month, months = SEASONS[g["season"]]
            if g.get("year"):
                year = int(g["year"])
            else:
                # The latest such season begun by now; "last" wants one already over.
                year = today.year if _month_start(today.year, month) <= today else today.year - 1
                over = _month_start(year, month + months) <= today
                if g.get("rel") in ("last", "past", "previous") and not over:
                    year -= 1
            return _span(_month_start(year, month), _month_start(year, month + months))
        if kind == "year":
            year = int(g["year"])
            return _span(date(year, 1, 1), date(year + 1, 1, 1))
        if kind == "yesterday":
            back = 2 if m.group(0).startswith("the") else 1
            d = today - timedelta(days=back)
            return _span(d, d + timedelta(days=1))
        if kind == "today":
            return _span(today, today + timedelta(days=1))
        if kind == "last_night":
            return nowts - 1.5 * DAY, nowts
        if kind == "ago":
            n = _number(g["n"])
            if n is None:
                return None
            days = _unit_days(g["unit"])
            centre = nowts - n * days * DAY
            half = max(1.0, days / 2) * DAY
            return centre - half, centre + half
        if kind == "past_n":
            n = _number(g["n"])
            if n is None:
                return None
            return nowts - n * _unit_days(g["unit"]) * DAY, nowts + DAY
        if kind == "calendar":
            this, unit = g["rel"] == "this", g["unit"]
            if unit != "weekend" and _rolling(g["rel"], m):
                # "the past month", "in the last week": the span up to now, not
                # the calendar one before it ("last month" is April in May).
                return nowts - _unit_days(unit) * DAY, nowts + DAY
            if unit == "week":
                monday = today - timedelta(days=today.weekday())
                start = monday if this else monday - timedelta(days=7)
                return _span(start, start + timedelta(days=7))
            if unit == "weekend":
                # "this weekend": the one of this Monday-to-Sunday week (often still
                # ahead); "last weekend": the latest one already over.
                saturday = today - timedelta(days=today.weekday()) + timedelta(days=5)
                if not this:
                    saturday -= timedelta(days=7)
                return _span(saturday, saturday + timedelta(days=2))
            if unit == "month":
                first = _month_start(today.year, today.month)
                start = first if this else _month_start(today.year, today.month - 1)
                return _span(start, _month_start(start.year, start.month + 1))
            year = today.year if this else today.year - 1
            return _span(date(year, 1, 1), date(year + 1, 1, 1))
        if kind == "weekday":
            wd = WEEKDAYS.index(g["wd"])
            back = (today.weekday() - wd) % 7 or 7
            d = today - timedelta(days=back)
            return _span(d, d + timedelta(days=1))
    except (ValueError, OverflowError):
        return None
    return None


def time_ranges(query: str, now: float) -> list[TimeRange]:
    """The time ranges `query` names, relative to `now` (epoch seconds)."""
    text = query.lower()
    when = datetime.fromtimestamp(now, UTC)
    taken = [False] * len(text)
    out: list[TimeRange] = []
    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(text):
            start, end = m.span()
            if any(taken[start:end]):
                continue
            if _needs_context(kind, m) and not _CONTEXT[kind].search(text[:start]):
                continue
            span = _match_range(kind, m, when)
            if span is None:
                continue
            lo, hi = span
            before = _BEFORE.search(text[max(0, start - 24) : start])
            if before is not None and kind not in ("ago", "past_n", "calendar"):
                if before.group("dir") == "after":
                    lo, hi = lo, hi + 7 * DAY
                else:
                    lo, hi = lo - 7 * DAY, hi
            for i in range(start, end):
                taken[i] = True
            out.append(TimeRange(lo, hi, query[start:end].strip()))
    return out


MAX_AS_OF_CHARS = 64
_DAY_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def parse_as_of(text: object) -> datetime:
    """When a question is asked ("as of"): an ISO 8601 date (`2023-05-09`: the
    end of that day, UTC) or time (`2023-05-09T14:00:00+02:00`; no offset: UTC).
    It is "now" for relative times in the question and for recall's time
    signals. `InvalidInput` (one line) for anything else."""
    from memagent.core import InvalidInput

    if isinstance(text, datetime):
        return text if text.tzinfo is not None else text.replace(tzinfo=UTC)
    if isinstance(text, date):
        return datetime(text.year, text.month, text.day, 23, 59, 59, tzinfo=UTC)
    if not isinstance(text, str):
        raise InvalidInput("the as-of date must be text (YYYY-MM-DD or an ISO 8601 time)")
    raw = text.strip()
    shown = raw[:40] + ("…" if len(raw) > 40 else "")
    if not raw or len(raw) > MAX_AS_OF_CHARS:
        raise InvalidInput(f"bad as-of date {shown!r}: use YYYY-MM-DD or an ISO 8601 time")
    try:
        if _DAY_ONLY.match(raw):
            d = date.fromisoformat(raw)
            when = datetime(d.year, d.month, d.day, 23, 59, 59, tzinfo=UTC)
        else:
            when = datetime.fromisoformat(raw.replace("Z", "+00:00").replace("z", "+00:00"))
            when = when if when.tzinfo is not None else when.replace(tzinfo=UTC)
        when.timestamp()  # out of the platform's range: an error here, not later
        if not 1000 <= when.year <= 9000:  # date arithmetic around it must not overflow
            raise ValueError("year out of range")
    except (ValueError, OverflowError, OSError) as exc:
        raise InvalidInput(f"bad as-of date {shown!r}: use YYYY-MM-DD or an ISO 8601 time") from exc
    return when


def day_words(when: datetime) -> str:
    """`9 May 2023`: the date as the memory lines write it."""
    return f"{when.day} {when:%B %Y}"
