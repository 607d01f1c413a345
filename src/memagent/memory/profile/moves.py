"""A held habit the plan moves to another day or time, written as one short line.

`reschedules.routine_moved` reads a move ("choir's moved to Wednesday nights this term,
the church hall got double booked" with "I sing in a choir on Tuesdays" held) and
the plan removes the held line and writes the new one as the whole clause. A profile
should read one short line per habit, so the new line is the held one with only its
day or time changed ("I sing in a choir on Wednesday nights"):

1. **Said plainly** (Python, `retime.moved_line`): the held line's day, part of the
   day or clock time, put in place by the one new one the statement says.
2. **Else asked** (model): the held line as it is now (`revise.rewritten`, checked
   word by word as every rewrite is).

Either line takes the place of the plan's clause; when neither passes, the clause
stays, as before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date

from memagent.llm import LLM
from memagent.memory.profile.item_keys import said_word
from memagent.memory.profile.models import Item, Resource
from memagent.memory.profile.operations import AnyOp, AppendOp, RemoveOp, UpdateOp
from memagent.memory.profile.retime import moved_line
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


def _moves(
    resources: Mapping[str, Resource], ops: Sequence[AnyOp]
) -> list[tuple[Candidate, AppendOp | UpdateOp]]:
    """(held habit, the plan's new line for it) for each held habit or plan the plan
    removes while appending exactly one new timed line that names the same thing, or
    says anew under its own key (`reschedules.routine_moved`'s update)."""
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
            if appended is None or appended.value.display == new.value.display:
                continue  # none, or the line `revise` wrote already
            op, display = appended, str(appended.value.display)
        out.replaced.append(new)
        out.operations.append(op)
        out.rewrites.append((held.item.display, display))
    return out
