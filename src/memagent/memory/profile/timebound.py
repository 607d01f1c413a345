"""How long a fact holds, read from the words of the statement and its date.

Mechanical, no model: "until Friday", "till the 12th", "through March 3",
"this week", "this weekend", "for the weekend", "today", "tonight", "for the next 3 days",
"for two weeks", "for a fortnight", "this month", "for the rest of the month", "all of
July", "until the end of January", "until Thursday the 12th", "flying home Saturday" each
resolve to the last day the fact holds, counted from the day the statement was made (not
the day it is learned). A
weekday names its next occurrence after that day ("until Friday" said on a Friday is
the Friday to come, as people mean it); a day of the month or a
month-and-day that has already passed this year means the next one.

A plan's day (`event_day`: "on 14 June 2025", "June 14", "on the 3rd", "on
Friday", "tomorrow") is its last day too; with a year it may lie in the past,
and then the plan is not coming up at all.
"""

from __future__ import annotations

import re
from calendar import monthrange
from datetime import date, timedelta

from memagent.index.temporal import MONTHS, NUMBERS, WEEKDAYS

_DAY = r"(mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)(day|sday|nesday|rsday|urday)?"
_MONTH = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*"
UNTIL_WORDS = r"until|till|til|through|thru"
"""The words that say the day a thing lasts until, and nothing else ("to" also moves a
thing: "moved to Tuesday")."""
_UNTIL = (
    rf"(?:{UNTIL_WORDS}|up to|up until|(?<!moved )(?<!moving )(?<!switched )"
    r"(?<!changed )(?<!shifted )(?<!pushed )(?<!postponed )(?<!rescheduled )(?<!it )to)"
)
""""to" ends a span ("Monday to Friday"), not a move ("choir's moved to Tuesday nights")."""
_UNTIL_EVENT = rf"{_UNTIL}(?:\s+(?:my|the|our)\s+[\w'-]+(?:\s+[\w'-]+)?\s+on)?"
"""An end said by an event and its day: "until my holiday on the 28th" ends on the 28th."""
_ORD = r"(\d{1,2})(?:st|nd|rd|th)?"
_COUNT = r"(\d{1,3}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|couple of|few)"
_FULL_MONTH = (
    r"(january|february|march|april|may|june|july|august|september|october|november|december)"
)
_RETURN = (
    r"(?:flying|fly|flies|heading|going|coming|driving|getting|travell?ing|leaving|"
    r"leave|returning|return|checking out|check out)"
)

_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(rf"\b{_UNTIL}\s+(\d{{4}}-\d{{2}}-\d{{2}})\b", re.I), "iso"),
    (re.compile(rf"\b{_UNTIL_EVENT}\s+{_DAY},?\s+(?:the\s+)?{_ORD}\b", re.I), "weekday_day"),
    (re.compile(rf"\b{_UNTIL_EVENT}\s+(?:next\s+)?{_DAY}\b", re.I), "weekday"),
    (re.compile(rf"\b{_UNTIL_EVENT}\s+{_MONTH}\.?\s+{_ORD}\b", re.I), "month_day"),
    (
        re.compile(rf"\b{_UNTIL_EVENT}\s+(?:the\s+)?{_ORD}(?:\s+of)?\s+{_MONTH}\b", re.I),
        "day_month",
    ),
    (re.compile(rf"\b{_UNTIL_EVENT}\s+the\s+{_ORD}\b", re.I), "day"),
    (re.compile(rf"\b{_UNTIL}\s+(\d{{1,2}})(?:st|nd|rd|th)\b", re.I), "day"),  # "till 20th"
    (re.compile(rf"\b{_UNTIL}\s+tomorrow\b", re.I), "tomorrow"),
    (
        re.compile(
            rf"\b{_UNTIL}\s+(?:the\s+)?end of (?:the|this) week\b|\b{_UNTIL}\s+the weekend\b", re.I
        ),
        "week",
    ),
    (re.compile(rf"\b{_UNTIL}\s+(?:the\s+)?end of (?:the|this) month\b", re.I), "month"),
    (re.compile(rf"\b{_UNTIL}\s+(?:the\s+)?end of\s+{_FULL_MONTH}\b", re.I), "whole_month"),
    (re.compile(rf"\b{_UNTIL}\s+(?:the\s+)?end of next month\b", re.I), "next_month"),
    (re.compile(rf"\b{_UNTIL}\s+next week\b", re.I), "next_week"),
    (
        re.compile(
            rf"\b(?:until|till|til)\s+(?:the\s+start of\s+)?{_FULL_MONTH}\b(?![\s,]*\d)", re.I
        ),
        "before_month",
    ),
    (re.compile(rf"\bfor\s+(?:the\s+)?(?:next\s+)?{_COUNT}\s+(day|night|week)s?\b", re.I), "span"),
    (re.compile(rf"\bfor\s+(?:the\s+)?(?:next\s+)?{_COUNT}?\s*(fortnight)s?\b", re.I), "span"),
    (re.compile(r"\b(?:for |over )?the rest of (?:the|this) week\b", re.I), "week"),
    (re.compile(r"\b(?:for |over )?the rest of (?:the|this) month\b", re.I), "month"),
    (re.compile(rf"\b(?:for |over )?the rest of {_FULL_MONTH}\b", re.I), "whole_month"),
    (
        re.compile(
            rf"\b(?:all|the whole|the entire)\s+(?:of\s+)?{_FULL_MONTH}\b|"
            rf"\b(?:for|throughout|through)\s+(?:the month of\s+)?{_FULL_MONTH}\b(?!\s+\d)",
            re.I,
        ),
        "whole_month",
    ),
    (re.compile(rf"\b{_RETURN}\s+(?:back\s+|home\s+)?(?:on\s+)?{_DAY}\b", re.I), "weekday"),
    (re.compile(rf"\b{_RETURN}\s+(?:back|home)\s+tomorrow\b", re.I), "tomorrow"),
    (re.compile(r"\b(this|the whole|all)\s+week(end)?\b", re.I), "this_week"),
    (re.compile(r"\b(for|over)\s+the\s+weekend\b", re.I), "this_week"),
    (re.compile(r"\bthis\s+month\b", re.I), "month"),
    (re.compile(r"\b(today|tonight|for the day|for now today)\b", re.I), "today"),
]


def _next_weekday(today: date, name: str) -> date:
    target = next(i for i, d in enumerate(WEEKDAYS) if d.startswith(name[:3].lower()))
    return today + timedelta(days=(target - today.weekday()) % 7)


def _month_number(name: str) -> int:
    return MONTHS[name[:3].lower()]


def _month_day(today: date, month: int, day: int) -> date | None:
    for year in (today.year, today.year + 1):
        if day > monthrange(year, month)[1]:
            return None
        when = date(year, month, day)
        if when >= today:
            return when
    return None


def _day_of_month(today: date, day: int) -> date | None:
    year, month = today.year, today.month
    for _ in range(2):
        if day <= monthrange(year, month)[1] and date(year, month, day) >= today:
            return date(year, month, day)
        month, year = (1, year + 1) if month == 12 else (month + 1, year)
    return None


def _resolve(kind: str, m: re.Match[str], today: date) -> date | None:
    if kind == "iso":
        try:
            return date.fromisoformat(m.group(1))
        except ValueError:
            return None
    if kind == "weekday_day":  # "until Thursday the 12th": the date says which Thursday
        return _day_of_month(today, int(m.group(3)))
    if kind == "whole_month":
        name = m.group(1) or m.group(2)
        month = _month_number(name)
        year = today.year + (1 if month < today.month else 0)
        return date(year, month, monthrange(year, month)[1])
    if kind == "weekday":
        when = _next_weekday(today, m.group(1))
        if when == today:  # "until Friday" said on a Friday: the Friday to come
            when += timedelta(days=7)
        same_week = when.isocalendar()[:2] == today.isocalendar()[:2]
        return when + timedelta(days=7) if "next" in m.group(0).lower() and same_week else when
    if kind == "before_month":  # "no alcohol till August": through the end of July
        month = _month_number(m.group(1))
        year = today.year + (1 if month <= today.month else 0)
        return date(year, month, 1) - timedelta(days=1)
    if kind == "month_day":
        return _month_day(today, _month_number(m.group(1)), int(m.group(2)))
    if kind == "day_month":
        return _month_day(today, _month_number(m.group(2)), int(m.group(1)))
    if kind == "day":
        return _day_of_month(today, int(m.group(1)))
    if kind == "tomorrow":
        return today + timedelta(days=1)
    if kind in ("week", "this_week"):
        return today + timedelta(days=6 - today.weekday())
    if kind == "next_week":
        return today + timedelta(days=13 - today.weekday())
    if kind == "month":
        return date(today.year, today.month, monthrange(today.year, today.month)[1])
    if kind == "next_month":
        year, month = (today.year + 1, 1) if today.month == 12 else (today.year, today.month + 1)
        return date(year, month, monthrange(year, month)[1])
    if kind == "span":
        raw = (m.group(1) or "one").lower()
        n = int(raw) if raw.isdigit() else NUMBERS[raw]
        per = {"week": 7, "fortnight": 14}.get(m.group(2).lower(), 1)
        return today + timedelta(days=n * per)  # "for a week" from Wednesday: to next Wednesday
    if kind == "today":
        return today
    return None


def time_bound(text: str, today: date) -> date | None:
    """The last day the fact in `text` holds, or None for a lasting fact."""
    for pattern, kind in _RULES:
        m = pattern.search(text)
        if m is not None:
            when = _resolve(kind, m, today)
            if when is not None and when >= today:
                return when
    return None


_YEAR = r"(\d{4})"
_EVENT_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\b(\d{4}-\d{2}-\d{2})\b"), "iso"),
    (re.compile(rf"\b{_ORD}(?:\s+of)?\s+{_MONTH},?\s+{_YEAR}\b", re.I), "day_month_year"),
    (re.compile(rf"\b{_MONTH}\.?\s+{_ORD},?\s+{_YEAR}\b", re.I), "month_day_year"),
    (re.compile(rf"\b(?:on\s+)?(?:the\s+)?{_ORD}(?:\s+of)?\s+{_MONTH}\b", re.I), "day_month"),
    (re.compile(rf"\b{_MONTH}\.?\s+{_ORD}\b", re.I), "month_day"),
    (re.compile(rf"\b(?:on\s+(?:next\s+)?|next\s+){_DAY}\b", re.I), "weekday"),
    (re.compile(rf"\bon\s+the\s+{_ORD}\b", re.I), "day"),
    (re.compile(r"\btomorrow\b", re.I), "tomorrow"),
]


def _dated(day: int, month_name: str, year: int) -> date | None:
    try:
        return date(year, _month_number(month_name), day)
    except (ValueError, KeyError):
        return None


def event_day(text: str, today: date) -> date | None:
    """The day a plan in `text` happens, or None when no day is said. A date with
    its year is returned even when it has passed (the caller drops such a plan);
    without a year, the next such day on or after `today`."""
    for pattern, kind in _EVENT_RULES:
        m = pattern.search(text)
        if m is None:
            continue
        if kind == "day_month_year":
            return _dated(int(m.group(1)), m.group(2), int(m.group(3)))
        if kind == "month_day_year":
            return _dated(int(m.group(2)), m.group(1), int(m.group(3)))
        resolved = _resolve(kind, m, today)
        if resolved is not None:
            return resolved
    return None
