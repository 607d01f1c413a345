"""Whether each value the model read is a thing of its list's kind, asked of the
model one value at a time (`extract.Reading.check_kinds`).

A 1.5B model that copies the right words often files them in the wrong list or
copies the wrong words: "I can't stand horror films" as a food it dislikes,
"promoted to shift manager" as a medicine, "here through Saturday" as a stay in
a place called Saturday, "a documented allergy to sulfa drugs" as an allergy to
"documented". Asking whether a line is true of the writer did not catch these
(`factcheck`: the writer did say something); asking what kind of thing the
value is does, and it is a question a small model answers from what it knows of
words, not from reading the user's life: *Message: "…" / In this message, is
"horror films" a food, dish or cuisine?*

1. **Values** (Python): each new line the plan would write (`factcheck.lines`)
   in a list the model often fills with the wrong kind of thing
   (`prompts/valuekind.yaml`: foods, medicines, things one enjoys; and for a
   routine or a plan, whether the message tells of a habit or of an appointment
   to come), holding a value the model read (not one a fixed phrasing read:
   `rules` are not second-guessed), at most `MAX_LINES` a statement.
2. **The question** (model): P(yes) from the first token's probabilities
   (`memagent.llm.yesno`), the message given so that a word with two senses
   ("Nice", "Reading") is read in the one it has there. A backend without
   probabilities answers a grammar-constrained `{"is": "yes"|"no"}`.
3. **The cut** (Python): a value whose P(yes) is under its question's `keep_at`
   is not written (each question has its own: a model is surer that "Lisbon" is
   a place than that "pilates" is exercise). A question that fails keeps the
   line, so a broken judge costs nothing the user told. A food dislike that is no
   food ("horror films") is written to the general dislikes instead (`refile`).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import date

from memagent.llm import LLM, Message
from memagent.llm.yesno import ask_yes_no
from memagent.memory.profile._prompts import load_prompt, render
from memagent.memory.profile.changes import GENERAL
from memagent.memory.profile.factcheck import FactCheck, Line, ask_about, lines
from memagent.memory.profile.item_keys import match_key, said_word, tokens
from memagent.memory.profile.models import Resource
from memagent.memory.profile.operations import AnyOp, AppendOp, NewItem, RemoveOp, UpdateOp

MAX_STATEMENT_CHARS = 600
MAX_LINES = 4


@dataclass(frozen=True)
class Typed:
    """A line whose list holds one kind of thing: the value, the question and its cut."""

    line: Line
    value: str
    question: str
    """A Jinja template over `value` (`prompts/valuekind.yaml`)."""
    keep_at: float


def typed(line: Line) -> Typed | None:
    """The value `line` shows and its list's question, or None when its list takes
    any kind of thing (a pet's name, a stay) or one the model rarely gets wrong
    (`prompts/valuekind.yaml`). A list's lines begin with its prefix ("Likes ",
    "Takes "); a routine's or plan's line is the sentence that says it."""
    for spec in load_prompt("valuekind").kinds:
        if spec.path != line.path or not line.text.startswith(spec.prefix):
            continue
        value = line.text[len(spec.prefix) :].strip()
        return Typed(line, value, spec.question, spec.keep_at) if value else None
    return None


def question(statement: str, value: str, template: str) -> list[Message]:
    """The yes/no question about one value, with the message it was read in."""
    spec = load_prompt("valuekind")
    asked = render(template, value=value)
    return [
        Message(role="system", content=spec.system.strip()),
        Message(
            role="user",
            content=render(spec.user, statement=excerpt(statement, value), question=asked),
        ),
    ]


def excerpt(statement: str, value: str) -> str:
    """The part of a long `statement` (at most `MAX_STATEMENT_CHARS`) around where it says
    `value`, so the model judges the value in the words it was read from, not in the
    message's opening, which may not hold it; a habit's or plan's line (a sentence) alone,
    so a habit told elsewhere in the message does not vouch for it."""
    if len(statement) <= MAX_STATEMENT_CHARS:
        return statement
    if len(value.split()) >= 6:
        return value  # a habit's or plan's line is its sentence: asked of it alone
    at = statement.lower().find(value.lower())
    start = max(0, min(at - MAX_STATEMENT_CHARS // 2, len(statement) - MAX_STATEMENT_CHARS))
    return (
        statement[start : start + MAX_STATEMENT_CHARS]
        if at >= 0
        else statement[:MAX_STATEMENT_CHARS]
    )


def is_kind_p(llm: LLM, statement: str, value: str, template: str) -> float | None:
    """P(yes) that `value`, as `statement` uses it, is the kind of thing the
    question names; None when the model gives no usable verdict."""
    return ask_yes_no(llm, question(statement, value, template), "is")


def check(
    llm: LLM,
    sentences: Sequence[str],
    ops: Sequence[AnyOp],
    resources: Mapping[str, Resource],
    today: date,
    *,
    read: Collection[str],
    known: dict[tuple[str, str], float | None] | None = None,
) -> FactCheck:
    """`ops` less the new lines whose value the model says is not a thing of its
    list's kind (module doc), each such line of a list with a `refile` list
    moved there. `read`: the match keys of the values the model read
    (only a line showing one of them is asked about); `known`: verdicts already asked."""
    statement = " ".join(" ".join(sentences).split())
    keys = {k for k in (match_key(v) for v in read) if k}
    typed_lines = [
        t
        for t in (typed(line) for line in lines(ops, resources, today))
        if t is not None
        and isinstance(ops[t.line.index], AppendOp)  # a held line moved is not new
        and any(k in match_key(t.value) for k in keys)
        and not replaces_held(t.line, ops)
    ]
    asked = typed_lines[:MAX_LINES] if statement else []
    out = ask_about(
        ops,
        [(t.line, (t.question, t.value), t.keep_at) for t in asked],
        lambda slot: is_kind_p(llm, statement, slot[1], slot[0]),
        known if known is not None else {},
    )
    moved = _refiled(ops, [t for t in asked if t.line.text in out.dropped], resources, statement)
    out.operations.extend(moved)
    out.dropped = [d for d in out.dropped if d not in {str(op.value.display) for op in moved}]
    return out


def replaces_held(line: Line, ops: Sequence[AnyOp]) -> bool:
    """Whether `line` takes the place of a held line of its own list that the same
    plan removes and that names the same thing ("choir's moved to Wednesdays" for
    "Choir on Tuesdays"): the held line's kind is the new one's, and asked whether
    a message about a change tells of a habit, the model says no."""
    said = {match_key(t) for t in tokens(line.text)}
    return any(
        isinstance(op, RemoveOp)
        and op.file == line.file
        and op.path == line.path
        and any(
            said_word(match_key(w), said)
            for w in tokens(op.value.item)
            if len(w) > 2 and not w.isdigit()
        )
        for op in ops
    )


_I_LIKE = (
    r"\b(?:I|I'm|im|we|we're)\s+(?:really\s+|just\s+|so\s+)?(?:love|like|into|obsessed with|"
    r"a (?:big |huge )?fan of|enjoy)\b\W+(?:\w+\W+){0,2}"
)
"""The writer's own liking before a value ("I love true crime"): a like refiled as a general
one must be said so, not a word the model misread ("love a whisky on a cold night")."""


def _refiled(
    ops: Sequence[AnyOp],
    dropped: Sequence[Typed],
    resources: Mapping[str, Resource],
    statement: str,
) -> list[AppendOp]:
    """A dropped line of a list with a `refile` list, as an append to that list
    when the general file has it: "I can't stand horror films" read as a food
    dislike is a dislike all the same; a like only when said as the writer's (`_I_LIKE`)."""
    by_path = {spec.path: spec.refile for spec in load_prompt("valuekind").kinds if spec.refile}
    general = resources.get(GENERAL)
    out: list[AppendOp] = []
    for t in dropped:
        to = by_path.get(t.line.path)
        op = ops[t.line.index]
        if to is None or general is None or to not in general.paths():
            continue
        if to == "preferences.likes" and not re.search(
            _I_LIKE + re.escape(t.value), statement, re.IGNORECASE
        ):
            continue
        if not isinstance(op, AppendOp | UpdateOp) or op.value.item is None:
            continue
        key = str(op.value.item)
        if any(match_key(i.item) == match_key(key) for i in general.items_at(to) or []):
            continue
        value = NewItem(item=key, display=t.line.text)
        out.append(AppendOp(operation="append", file=GENERAL, path=to, value=value))
    return out
