"""Relative dates in a memory line, resolved against the day it was said.

"I went to the group yesterday", said on 8 May 2023, reaches the model as
"I went to the group yesterday [7 May 2023]": a small model copies a date well
but subtracts days badly, and "when" questions are answered with the date.
Only unambiguous phrases are resolved; everything else is left as it was.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_PHRASE = re.compile(
    r"\b(?P<p>yesterday|today|tonight|tomorrow|last night|this morning"
    r"|last (?:week|weekend|month|year)|next (?:week|month|year)"
    r"|(?:last|this past) (?:" + "|".join(_WEEKDAYS) + r")"
    r"|(?P<n>\d+|a|an|one|two|three|four|five|six) (?P<unit>day|week|month|year)s? ago)\b",
    re.IGNORECASE,
)
RELATIVE_PHRASE = _PHRASE
"""A relative date that `annotate` resolves ("last week", "two days ago")."""


def _fmt(d: date) -> str:
    return f"{d.day} {d:%B %Y}"


def _month_shift(d: date, months: int) -> date:
    m = d.month - 1 + months
    return date(d.year + m // 12, m % 12 + 1, 1)


def resolve(phrase: str, said: date) -> str | None:
    """What `phrase` means when said on `said` (None when it is not resolvable)."""
    p = " ".join(phrase.lower().split())
    if p in ("yesterday", "last night"):
        return _fmt(said - timedelta(days=1))
    if p in ("today", "tonight", "this morning"):
        return _fmt(said)
    if p == "tomorrow":
        return _fmt(said + timedelta(days=1))
    if p == "last week":
        return f"the week before {_fmt(said)}"
    if p == "last weekend":
        return f"the weekend before {_fmt(said)}"
    if p == "next week":
        return f"the week after {_fmt(said)}"
    if p in ("last month", "next month"):
        d = _month_shift(said, -1 if p.startswith("last") else 1)
        return f"{d:%B %Y}"
    if p == "last year":
        return str(said.year - 1)
    if p == "next year":
        return str(said.year + 1)
    words = p.split()
    if words[-1] in _WEEKDAYS and words[0] in ("last", "this"):
        back = (said.weekday() - _WEEKDAYS.index(words[-1])) % 7 or 7
        return _fmt(said - timedelta(days=back))
    if words[-1] == "ago":
        n = int(words[0]) if words[0].isdigit() else _NUMBERS.get(words[0], 0)
        unit = words[1].rstrip("s")
        if n <= 0 or n > 1000:
            return None
        if unit == "day":
            return _fmt(said - timedelta(days=n))
        if unit == "week":
            return f"the week of {_fmt(said - timedelta(weeks=n))}"
        if unit == "month":
            return f"{_month_shift(said, -n):%B %Y}"
        if unit == "year":
            return str(said.year - n)
    return None


def annotate(text: str, said: date) -> str:
    """`text` with each resolvable relative date followed by `[its date]`."""

    def sub(m: re.Match[str]) -> str:
        meaning = resolve(m.group(0), said)
        return f"{m.group(0)} [{meaning}]" if meaning else m.group(0)

    return _PHRASE.sub(sub, text)


_AGO = re.compile(r"\bhow\s+(?:long|many\s+(?P<unit>day|week|month|year)s?)\s+ago\b", re.IGNORECASE)


def ago_unit(question: str) -> str | None:
    """The unit a "how long ago" / "how many weeks ago" question asks in (`auto`
    for "how long"); None when it asks no such thing."""
    m = _AGO.search(question[:4000])
    if m is None:
        return None
    return (m.group("unit") or "auto").lower()


def elapsed(said: date, asked: date, unit: str) -> str | None:
    """`3 weeks before the question`: the time from `said` to `asked` in `unit`
    (`auto`: days under two weeks, weeks under two months, months under two
    years, else years). A small model subtracts dates badly; given the count, it
    copies it. None when `said` is after `asked`."""
    days = (asked - said).days
    if days < 0:
        return None
    months = (asked.year - said.year) * 12 + asked.month - said.month - (asked.day < said.day)
    if unit == "auto":
        unit = "day" if days < 14 else "week" if days < 60 else "month" if days < 730 else "year"
    n = {"day": days, "week": round(days / 7), "month": months, "year": months // 12}[unit]
    return f"{n} {unit}{'' if n == 1 else 's'} before the question"
