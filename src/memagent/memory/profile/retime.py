"""A held line's day or time put in place by the one a statement says ("I sing in a choir on
Tuesdays" after "choir's moved to wednesday nights": "I sing in a choir on Wednesday
nights"). Pure text, no model: `moves` and `revise` write a moved habit's line with it
before they ask the model what the line says now."""

from __future__ import annotations

import re

_DAY = re.compile(
    r"\b(?P<day>mon|tues|wednes|thurs|fri|satur|sun)days?"
    r"(?:\s+(?P<part>(?:morning|afternoon|evening|night)s?))?\b",
    re.IGNORECASE,
)
_PART = re.compile(r"\b(?P<part>morning|afternoon|evening|night)(?P<s>s?)\b", re.IGNORECASE)
_CLOCK = re.compile(
    r"\b(?:at\s+)?(?P<t>\d{1,2}(?:[:.]\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)|\d{1,2}[:.]\d{2})|"
    r"\bat\s+(?P<n>\d{1,2})\b(?!\s*(?:%|kg|km|mg|miles?|mins?|minutes?|hours?))",
    re.IGNORECASE,
)


def _days(text: str) -> set[str]:
    return {m.group("day").lower() for m in _DAY.finditer(text)}


def _new_day(line: str, statement: str) -> str | None:
    """The line with its day put in place by the one other day the statement says
    ("moved to wednesday nights": "on Tuesdays" → "on Wednesday nights"; "sundays now"
    with "every Saturday morning" → "every Sunday morning"); None when the line says
    no day or more than one, or the statement not exactly one other."""
    old = _DAY.search(line)
    held = _days(line)
    if old is None or len(held) != 1:
        return None
    new = [m for m in _DAY.finditer(statement) if m.group("day").lower() not in held]
    if len({m.group("day").lower() for m in new}) != 1:
        return None
    said = new[0]
    said_part = next((m for m in new if m.group("part")), None)
    if said_part is not None:  # the part as said, in the line's number: "every Sunday morning"
        plural = old.group(0).lower().endswith("s")
        part = said_part.group("part").lower().removesuffix("s") + ("s" if plural else "")
        day = f"{said.group('day').capitalize()}day {part}"
    else:  # the line's number and part of the day, the new day
        held_day = old.group(0)[len(old.group("day")) :]
        day = f"{said.group('day').capitalize()}{held_day}"
    return line[: old.start()] + day + line[old.end() :]


def _new_part(line: str, statement: str) -> str | None:
    """The line with its part of the day put in place by the one other the statement
    says ("swim every morning" → "swim every evening"), in the line's number."""
    old = _PART.search(line)
    if old is None or _DAY.search(statement):
        return None
    new = {m.group("part").lower() for m in _PART.finditer(statement)} - {
        m.group("part").lower() for m in _PART.finditer(line)
    }
    if len(new) != 1:
        return None
    return line[: old.start()] + new.pop() + old.group("s") + line[old.end() :]


def _clock(m: re.Match[str]) -> str:
    return re.sub(r"\s+", "", (m.group("t") or m.group("n")).lower()).replace(".", ":")


def _new_clock(line: str, statement: str) -> str | None:
    """The line with its clock time put in place by the one other the statement says
    ("swim at 7am" → "swim at 6am")."""
    old = _CLOCK.search(line)
    if old is None:
        return None
    held = {_clock(m) for m in _CLOCK.finditer(line)}
    new = {_clock(m): m for m in _CLOCK.finditer(statement) if _clock(m) not in held}
    if len(new) != 1:
        return None
    said = next(iter(new.values()))
    text = said.group("t") or said.group("n")
    at = "at " if old.group(0).lower().startswith("at") else ""
    return line[: old.start()] + at + text + line[old.end() :]


def moved_line(line: str, statement: str) -> str | None:
    """`line` (a held habit's) with its day, part of the day or clock time changed to
    the one new one `statement` says, when it says exactly one; else None."""
    line = line.split(" (until ")[0]
    for change in (_new_day, _new_clock, _new_part):
        now = change(line, statement)
        if now is not None and now != line:
            return now
    return None
