"""A held habit the plan moves to another day or time, written as one short line.

`changes.routine_moved` reads a move ("choir's moved to Wednesday nights this term,
the church hall got double booked" with "I sing in a choir on Tuesdays" held) and
the plan removes the held line and writes the new one as the whole clause. A profile
should read one short line per habit, so the new line is the held one with only its
day or time changed ("I sing in a choir on Wednesday nights"):

1. **Said plainly** (Python, `moved_line`): the held line's day, part of the day or
   clock time, put in place by the one new one the statement says.
2. **Else asked** (model): the held line as it is now (`revise.rewritten`, checked
   word by word as every rewrite is).

Either line takes the place of the plan's clause; when neither passes, the clause
stays, as before.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import date

from memagent.llm import LLM
from memagent.memory.profile.item_keys import said_word
from memagent.memory.profile.models import Item, Resource
from memagent.memory.profile.operations import AnyOp, AppendOp, RemoveOp, UpdateOp
from memagent.memory.profile.revise import (
    Candidate,
    Revision,
    checked_rewrite,
    in_place,
    line_words,
    rewritten,
)

TIMED = ("routine.daily", "routine.weekly", "schedule.upcoming")
"""Where the plan writes a habit's or plan's new line."""
_MOVABLE = (*TIMED, "fitness.activities")
"""Where the held habit may be (an activity held with its day too)."""

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
    if said_part is not None:  # "Wednesday nights": the part as said
        day = f"{said.group('day').capitalize()}day {said_part.group('part').lower()}"
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


def _moves(
    resources: Mapping[str, Resource], ops: Sequence[AnyOp]
) -> list[tuple[Candidate, AppendOp | UpdateOp]]:
    """(held habit, the plan's new line for it) for each held habit or plan the plan
    removes while appending exactly one new timed line that names the same thing, or
    says anew under its own key (`changes.routine_moved`'s update)."""
    appends = [o for o in ops if isinstance(o, AppendOp) and o.path in TIMED]
    out: list[tuple[Candidate, AppendOp | UpdateOp]] = []
    for op in ops:
        if not isinstance(op, RemoveOp | UpdateOp) or op.path not in _MOVABLE:
            continue
        held = _held(resources, op)
        if held is None:
            continue
        if isinstance(op, UpdateOp):
            if op.value.display and op.value.display != held.display:
                out.append((Candidate(op.file or "", op.path or "", held), op))
            continue
        words = line_words(held.item, held.display)
        named = [
            a
            for a in appends
            if any(said_word(w, words) for w in line_words(a.value.item, a.value.display or ""))
        ]
        if len(named) == 1:
            out.append((Candidate(op.file or "", op.path or "", held), named[0]))
    return out


def _held(resources: Mapping[str, Resource], op: RemoveOp | UpdateOp) -> Item | None:
    res = resources.get(op.file or "")
    if res is None:
        return None
    for path, items in res.iter_lists():
        if path == op.path:
            return next((i for i in items if i.item == op.value.item), None)
    return None


def moved(
    llm: LLM,
    sentences: Sequence[str],
    resources: Mapping[str, Resource],
    ops: Sequence[AnyOp],
    today: date,
    *,
    known: dict[tuple[str, str, str], str | None] | None = None,
) -> Revision:
    """The lines written in place of the plan's clauses for the habits it moves (module
    doc), as a `Revision` for `revise.merged`: the new lines, the clauses they replace,
    and the calls it took. `known`: lines already had (a re-plan asks nothing twice)."""
    out = Revision()
    statement = " ".join(" ".join(sentences).split())
    lines = known if known is not None else {}
    for held, new in _moves(resources, ops):
        key = (held.file, held.path, held.item.item)
        if key not in lines:
            plain = moved_line(held.item.display, statement)
            if plain is not None:
                lines[key] = checked_rewrite(statement, held.item, plain)
            else:
                lines[key] = rewritten(llm, statement, held.item)
                out.calls += 1
        line = lines[key]
        if not line or any(r is new for r in out.replaced):
            continue
        if isinstance(new, UpdateOp):  # said anew under its own key: the line, kept there
            display = line[:1].upper() + line[1:]
            value = {"item": held.item.item, "display": display}
            op: AppendOp | UpdateOp = UpdateOp(
                operation="update", file=new.file, path=new.path, value=value
            )
        else:
            target = Candidate(new.file or "", new.path or "", held.item)
            appended = in_place(target, line, statement, today)
            if appended is None:
                continue
            op, display = appended, str(appended.value.display)
        out.replaced.append(new)
        out.operations.append(op)
        out.rewrites.append((held.item.display, display))
    return out
