"""A held habit or plan moved to another day or time, read mechanically: "Choir practice
has moved to Wednesday nights" (a new habit said with a word of change, sharing a word with
a held one, takes its place), "my swim's moved to 7" (a new time), "it's not Tuesday, it's
Thursday" and "sorry thursday not tuesday" (a day corrected in the held line). The line
itself is rewritten by `moves`; this module decides what is moved."""

from __future__ import annotations

import re
from calendar import monthrange
from collections.abc import Mapping, Sequence
from datetime import date, timedelta

from memagent.memory.profile.changes import HEALTH, ROUTINE, items, remove
from memagent.memory.profile.item_keys import match_key, tokens
from memagent.memory.profile.models import Resource
from memagent.memory.profile.operations import AnyOp, AppendOp, UpdateOp

_MOVED = re.compile(
    r"\b(?:moved|switched|changed|shifted|now|instead|rescheduled|no longer)\b", re.IGNORECASE
)
_WHEN_WORDS = re.compile(
    r"^(?:mon|tues?|wed(?:nes)?|thu(?:rs?)?|fri|sat(?:ur)?|sun)(?:day)?s?$|"
    r"^(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)$|"
    r"^(?:morning|evening|night|afternoon|weekend|"
    r"week|day|daily|weekly|every|each|now|am|pm)s?$|^\d",
    re.IGNORECASE,
)


def routine_moved(
    sentences: Sequence[str], resources: Mapping[str, Resource], ops: Sequence[AnyOp]
) -> list[AnyOp]:
    """The removal of a held habit or plan a new one moves ("Choir practice has moved
    to Wednesday nights" with "choir on Tuesdays" held; "Tennis is on Sundays now" with
    "tennis saturday" held as an activity): a habit or plan written now, said with a
    word of change, that shares a word other than a day or time with it."""
    out: list[AnyOp] = _day_swaps(sentences, resources)
    out += _time_moves(sentences, resources, ops)
    if not out:
        out += _days_changed(sentences, resources, ops)
    if not any(_MOVED.search(s) for s in sentences):
        return out
    for op in ops:
        if not isinstance(op, AppendOp) or op.path not in _TIMED:
            continue
        new = _what(f"{op.value.item} {op.value.display or ''}")
        for file, path in _HELD_TIMED:
            for held in items(resources, file, path):
                said = f"{held.item} {held.display or ''}"
                if path == "fitness.activities" and not any(
                    _WHEN_WORDS.match(t) for t in tokens(said)
                ):
                    continue  # an activity held without a day is not moved by one
                if held.item == op.value.item and path == op.path:
                    if held.display != op.value.display:  # the same habit, said anew
                        value = {"item": held.item, "display": op.value.display}
                        out.append(
                            UpdateOp(operation="update", file=ROUTINE, path=path, value=value)
                        )
                elif new & _what(said):
                    out.append(remove(file, path, held.item))
    return out


_MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_MOVED_TO = re.compile(
    r"\b(?:moved|pushed(?: back)?|postponed|rescheduled|delayed|put off|bumped|rebooked)\s+"
    r"(?:it\s+|them\s+)?"
    rf"(?:back\s+)?(?:to|till|until|for)\s+(?:next\s+)?(?:the\s+)?(?P<new>(?:mon|tues|wednes|thurs|fri|"
    rf"satur|sun)day|{'|'.join(_MONTHS)}|\d{{1,2}}(?:st|nd|rd|th))\b",
    re.IGNORECASE,
)


def _time_moves(
    sentences: Sequence[str], resources: Mapping[str, Resource], ops: Sequence[AnyOp]
) -> list[AnyOp]:
    """A held plan said to be moved to another day or month ("the wedding's been moved to
    September", "The interview got moved to Friday"), its line and end said anew: the one
    sharing a word with the sentence and holding a day or month, or the only plan held
    with one ("airline cancelled, we've been rebooked for the 18th"), when no new line for
    it is written (then `routine_moved` ends the old one)."""
    new_lines = _new_lines(ops)
    out: list[AnyOp] = []
    for sentence in sentences:
        for m in _MOVED_TO.finditer(sentence):
            new = m.group("new").lower()
            month = new in _MONTHS
            when = re.compile(
                rf"\b({'|'.join(_MONTHS)})\b"
                if month
                else r"\b\d{1,2}(?:st|nd|rd|th)\b"
                if new[:1].isdigit()
                else r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)day",
                re.IGNORECASE,
            )
            dated = [
                (item, old)
                for item in items(resources, ROUTINE, "schedule.upcoming")
                if (old := when.search(item.display or item.item) or when.search(item.item))
                and not any(_what(f"{item.item} {item.display}") & n for n in new_lines)
            ]
            named = [(i, o) for i, o in dated if _what(f"{i.item} {i.display}") & _what(sentence)]
            unnamed = not _what(_CLAUSE_START.split(sentence[: m.start()])[-1]) - _GENERIC
            for item, old in named or (dated if len(dated) == 1 and unnamed else []):
                line = item.display or item.item
                spec: dict[str, object] = {"operation": "update", "file": ROUTINE}
                spec |= {
                    "path": "schedule.upcoming",
                    "value": {
                        "item": item.item,
                        "display": when.sub(
                            new if new[:1].isdigit() else new.capitalize(), line, count=1
                        ),
                    },
                }
                if item.expiry is not None:
                    spec["expiry"] = _moved_end(item.expiry, old.group(0).lower(), new).isoformat()
                out.append(UpdateOp.model_validate(spec))
    return out


def _moved_end(end: date, old: str, new: str) -> date:
    """A plan's end moved from one day or month to a later one (or to the Nth: of its
    month, or of the next when the Nth has passed)."""
    if new[:1].isdigit():
        day = int(re.sub(r"\D", "", new))
        month, year = (
            (end.month, end.year)
            if day >= end.day
            else (end.month % 12 + 1, end.year + (end.month == 12))
        )
        try:
            return date(year, month, day)
        except ValueError:
            return end
    if new in _MONTHS:
        month = _MONTHS.index(new) + 1
        year = end.year + (month < _MONTHS.index(old) + 1 if old in _MONTHS else 0)
        return date(year, month, monthrange(year, month)[1])
    return end + timedelta(days=(_WEEK.index(new[:3]) - _WEEK.index(old[:3])) % 7)


_TIMED = ("routine.daily", "routine.weekly", "schedule.upcoming")
_HELD_TIMED = (*((ROUTINE, p) for p in _TIMED), (HEALTH, "fitness.activities"))
"""Where a habit or plan a new one moves may be held: an activity held with its day too."""


_DAYS = r"(?:mon|tues|wednes|thurs|fri|satur|sun)days?"
_WEEK = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_DAY_SWAP = re.compile(
    rf"\bit(?:'s| is| was)? not (?:on )?(?P<old>{_DAYS})\b,?\s*(?:it'?s |it is |but )?(?:on )?"
    rf"(?P<new>{_DAYS})\b|"
    rf"\bit(?:'s| is) (?:on )?(?P<new2>{_DAYS}),?\s*not (?:on )?(?P<old2>{_DAYS})\b|"
    rf"^\W*(?:(?:sorry|oops|whoops|no|actually|correction|my bad|argh)\W+)+(?:on )?"
    rf"(?P<new3>{_DAYS}),?\s*not (?:on )?(?P<old3>{_DAYS})\b",
    re.IGNORECASE,
)


def _day_swaps(sentences: Sequence[str], resources: Mapping[str, Resource]) -> list[AnyOp]:
    """The held habit or plan a day correction moves ("it's not Tuesday, it's Thursday for
    my pilates", "Oops, it's Friday, not Thursday"), its line said with the new day:
    the ones holding the old day that share a word with the sentence, else the only one."""
    out: list[AnyOp] = []
    for sentence in sentences:
        for m in _DAY_SWAP.finditer(sentence):
            old = (m.group("old") or m.group("old2") or m.group("old3")).lower()
            new = (m.group("new") or m.group("new2") or m.group("new3")).capitalize()
            new = new.removesuffix("s")
            day = re.compile(rf"\b{old[:3]}\w*day(s?)\b", re.IGNORECASE)
            held = [
                (file, path, i)
                for file, path in _HELD_TIMED
                for i in items(resources, file, path)
                if day.search(i.display or i.item)
            ]
            said = _what(sentence)
            named = [h for h in held if said & _what(f"{h[2].item} {h[2].display or ''}")]
            timed = [h for h in held if h[1] in _TIMED]  # the habit's line, not the sport's
            only = timed if len(timed) == 1 else held if len(held) == 1 else []
            for file, path, item in named or only:
                line = day.sub(new + r"\1", item.display or item.item, count=1)
                spec: dict[str, object] = {"operation": "update", "file": file, "path": path}
                spec["value"] = {"item": item.item, "display": line}
                if item.expiry is not None:  # a plan's day moves with it, to the nearer one
                    shift = (_WEEK.index(new[:3].lower()) - _WEEK.index(old[:3])) % 7
                    moved = item.expiry + timedelta(days=shift - 7 * (shift > 3))
                    spec["expiry"] = moved.isoformat()
                out.append(UpdateOp.model_validate(spec))
    return out


_CLAUSE_START = re.compile(r"[,;:.!?]\s|[\u2600-\u27bf\U0001f300-\U0001faff]")
_GENERIC = {match_key(w) for w in ("move", "trip", "plan", "plans", "thing", "date", "big")}
"""Words that name a plan without saying which ("the big move's pushed back to june")."""


def _new_lines(ops: Sequence[AnyOp]) -> list[set[str]]:
    """What each habit or plan the statement writes is (its words other than when)."""
    return [
        _what(f"{o.value.item} {o.value.display or ''}")
        for o in ops
        if isinstance(o, AppendOp) and o.path in _TIMED
    ]


def _what(text: str) -> set[str]:
    """The words of a habit that say what it is, not when."""
    return {
        match_key(t) for t in tokens(text) if len(t) >= 3 and not _WHEN_WORDS.match(t)
    } - _HABIT_FILLER


_HABIT_FILLER = {
    match_key(w)
    for w in (
        *("have", "been", "with", "from", "moved", "every", "practice", "the", "and", "for"),
        *("now", "our", "was", "are", "has", "had", "but", "not", "get", "got", "too", "off"),
        *("out", "day", "its", "his", "her", "you", "she", "him", "all", "any", "can", "new"),
        *("one", "two", "per", "yet", "session", "sessions", "class", "classes", "time"),
    )
}
"""Words that say nothing of what a habit is ("gym" does: three letters are enough)."""


_ONE_DAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)days?"
_SOME_DAYS = rf"{_ONE_DAY}(?:\s*(?:,|and|&)\s*{_ONE_DAY})*"
_NEW_DAYS = re.compile(
    r"\b(?:moving|moved|shifted|switched|changed|changing|putting|put)\s+"
    r"(?:it|them|my slot|(?:the|my|our) [\w-]+)\s+(?:over\s+)?to\s+"
    rf"(?P<days>{_SOME_DAYS})|"
    rf"\bit(?:'s| is)\s+(?:now\s+)?(?:on\s+)?(?P<days2>{_SOME_DAYS})\s+now\b",
    re.IGNORECASE,
)
_HELD_DAYS = re.compile(rf"\b(?P<lead>every|on)?\s*{_SOME_DAYS}", re.IGNORECASE)


def _days_changed(
    sentences: Sequence[str], resources: Mapping[str, Resource], ops: Sequence[AnyOp]
) -> list[AnyOp]:
    """A weekly habit said to move to other days without its name ("they're moving it to
    thursdays from next week", "they changed the lane times so it's tuesdays and thursdays
    now"): the held weekly line sharing a word with the sentence, else the only one held
    with a day, said with the new days, unless a new habit written names it."""
    new_lines = _new_lines(ops)
    held = [  # each weekly line with its days, unless a new habit written names it
        (item, was)
        for item in items(resources, ROUTINE, "routine.weekly")
        if (was := _HELD_DAYS.search(item.display or item.item))
        and not any(_what(f"{item.item} {item.display}") & n for n in new_lines)
    ]
    out: list[AnyOp] = []
    for sentence in sentences:
        m = _NEW_DAYS.search(sentence)
        if m is None:
            continue
        days = (m.group("days") or m.group("days2")).lower()
        named = [(i, w) for i, w in held if _what(sentence) & _what(f"{i.item} {i.display or ''}")]
        for item, was in named or (held if len(held) == 1 else []):
            line = item.display or item.item
            lead = (was.group("lead") or "on").lower()
            said = re.sub(r"(day)s\b", r"\1", days) if lead == "every" else days
            line = f"{line[: was.start()]}{lead} {said}{line[was.end() :]}".replace("  ", " ")
            value = {"item": item.item, "display": line}
            out.append(
                UpdateOp(operation="update", file=ROUTINE, path="routine.weekly", value=value)
            )
    return out
