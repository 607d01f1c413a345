"""Whether each line a statement would add is true of its writer, asked of the
model one line at a time (an option, off by default: `extract.Reading.keep_at`).

Made to list a fact in every plain sentence (`extract.DEFAULT_READING`), a 1.5B
model lists one in lines that hold none (a meal read as a like, a mood, a friend's
fact) and garbles some it reads ("Allergic to documented"). The statement-level
gate did not tell facts from non-facts; this asks about one concrete line instead:
*Message: "…" / Profile line: "Likes sushi" / Is this profile line true of the
person who wrote the message?*

1. **Lines** (Python): each append or update the plan would write that changes
   what the profile shows (`lines`: not an item already held, not an update that
   only moves an end date), rendered as the profile shows it ("Likes sushi", "Dog
   named Nova"), without its end date; at most `MAX_LINES` a statement.
2. **The question** (model): P(yes) from the first token's probabilities
   (`memagent.llm.yesno`), after placeholder examples (`prompts/factcheck.yaml`).
   A backend that gives no probability is asked for a grammar-constrained
   `{"holds": "yes"|"no"}`.
3. **The cut** (Python): a line under `KEEP_AT` is not written. A question that
   fails (an error, no yes/no among the likely tokens, a reply that fits no
   verdict) keeps the line: the check only takes away what the model said no to,
   so a broken judge learns as learning did without the check, and a failed call
   never costs a fact the user told.

Measured (docs/concepts/profile.md, `python -m bench.profile_factcheck`): with a
capable model (the bench's scripted stand-in) the check removes the junk left and
loses nothing; on the embedded 1.5B model its P(yes) ranks good lines above junk
only a little (AUC ~0.6 for every wording tried), so at any cut it drops about as
many good lines as junk: hence off by default.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import TypeVar

from memagent.llm import LLM, Message
from memagent.llm.yesno import ask_yes_no, verdict_schema
from memagent.memory.profile._prompts import PromptSpec, load_prompt, render
from memagent.memory.profile.item_keys import match_key
from memagent.memory.profile.models import Resource
from memagent.memory.profile.operations import AnyOp, AppendOp, UpdateOp

KEEP_AT = 0.2
"""A line whose P(yes) is under this is not written: the cut leave-one-set-out chose
on the spent sets (docs/concepts/profile.md), where it removes little either way."""
MAX_STATEMENT_CHARS = 600
MAX_LINES = 4
"""Lines asked about per statement: each is one short model call; more are kept unasked."""

HOLDS_SCHEMA = verdict_schema("holds")
"""The constrained reply a backend without token probabilities gives instead."""


@dataclass(frozen=True)
class Line:
    """One write the plan would make and the profile line it becomes."""

    index: int
    """The operation's place in the plan."""
    file: str
    path: str
    text: str


@dataclass
class FactCheck:
    """What checking the planned lines did: the writes kept, the calls, and each
    line's P(yes) (for the bench's log)."""

    operations: list[AnyOp] = field(default_factory=list)
    calls: int = 0
    asked: list[tuple[str, float]] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)


def _base(display: str) -> str:
    return display.split(" (until ")[0].strip()


def _live(resources: Mapping[str, Resource], today: date) -> dict[tuple[str, str, str], str]:
    """Each live item's place and key, and the line it shows without its end date."""
    return {
        (file, path, match_key(item.item)): _base(item.display)
        for file, resource in resources.items()
        for path, items in resource.iter_lists()
        for item in items
        if not item.expired(today)
    }


def lines(ops: Sequence[AnyOp], resources: Mapping[str, Resource], today: date) -> list[Line]:
    """The writes in `ops` that add a line the profile does not hold yet: an
    append of an item not live in its list, an update that changes an item's
    line (not one that only moves its end date)."""
    live = _live(resources, today)
    out: list[Line] = []
    for k, op in enumerate(ops):
        if not isinstance(op, AppendOp | UpdateOp):
            continue
        display = op.value.display or (op.value.item if isinstance(op, AppendOp) else None)
        if not display or not _base(display):
            continue
        key = (op.file or "", op.path or "", match_key(str(op.value.item)))
        if key in live and (isinstance(op, AppendOp) or live[key] == _base(display)):
            continue
        out.append(Line(k, op.file or "", op.path or "", _base(display)))
    return out


def question(statement: str, line: str, spec: PromptSpec | None = None) -> list[Message]:
    """The yes/no question about one line (`prompts/factcheck.yaml`, or `spec`),
    after its examples (placeholders only)."""
    spec = spec or load_prompt("factcheck")
    out = [Message(role="system", content=spec.system.strip())]
    for example in spec.examples:
        shown = example.assistant if isinstance(example.assistant, dict) else {}
        out.append(
            Message(
                role="user",
                content=render(spec.user, statement=example.user, line=str(shown["line"])),
            )
        )
        out.append(Message(role="assistant", content=str(shown["answer"])))
    out.append(
        Message(
            role="user",
            content=render(spec.user, statement=statement[:MAX_STATEMENT_CHARS], line=line),
        )
    )
    return out


def ask(llm: LLM, messages: Sequence[Message]) -> float | None:
    """P(yes) of a yes/no question; a backend without probabilities answers a
    grammar-constrained `{"holds": "yes"|"no"}`; None when no usable verdict."""
    return ask_yes_no(llm, messages, "holds")


def holds_p(llm: LLM, statement: str, line: str) -> float | None:
    """P(yes) that `statement` says `line` is true of its writer;
    None when the model gives no usable verdict (the line is kept)."""
    return ask(llm, question(statement, line))


def check(
    llm: LLM,
    sentences: Sequence[str],
    ops: Sequence[AnyOp],
    resources: Mapping[str, Resource],
    today: date,
    *,
    keep_at: float = KEEP_AT,
    known: dict[str, float | None] | None = None,
) -> FactCheck:
    """`ops` less the new lines the model says are not true of the writer
    (module doc). `known`: verdicts already asked (a re-plan asks nothing twice)."""
    statement = " ".join(" ".join(sentences).split())
    asked = lines(ops, resources, today)[:MAX_LINES] if statement else []
    return ask_about(
        ops,
        [(line, line.text, keep_at) for line in asked],
        lambda text: holds_p(llm, statement, text),
        known if known is not None else {},
    )


K = TypeVar("K", bound=Hashable)


def ask_about(
    ops: Sequence[AnyOp],
    asked: Sequence[tuple[Line, K, float]],
    verdict: Callable[[K], float | None],
    memo: dict[K, float | None],
) -> FactCheck:
    """`ops` less each asked line whose P(yes) (`verdict` of its question, kept in
    `memo` so nothing is asked twice) is under its cut; no verdict keeps the line.
    Shared by this check and `valuekind`'s."""
    out = FactCheck()
    drop: set[int] = set()
    for line, question_key, cut in asked:
        if question_key not in memo:
            memo[question_key] = verdict(question_key)
            out.calls += 1
        p = memo[question_key]
        if p is None:
            continue
        out.asked.append((line.text, p))
        if p < cut:
            drop.add(line.index)
            out.dropped.append(line.text)
    out.operations = [op for k, op in enumerate(ops) if k not in drop]
    return out
