"""Which stored items a statement ends, asked of the model one item at a time.

The rules in `changes` and `negation` read a change from its wording ("no
longer", "broke up", "renamed him"), and each new set of statements words a change
another way ("finished my course of omeprazole", "gone off mushrooms", "it's just
me and Fig now"). What generalizes is the question itself, which a small model
answers well when it is put plainly and about one thing: *the profile says "Takes
omeprazole"; the user now says "…"; does it say that line is no longer true?*

The work is split so the model only answers that yes/no:

1. **Candidates** (Python): live items the statement is about: an item whose
   words (or pet's or person's name) the statement says, or, for the lists that
   hold one thing of a kind at a time (a diet, a way of answering, where the
   user is), an item of the list a fact read in this statement lands in. Items
   the plan already writes or removes are left to it; at most `MAX_CANDIDATES`.
2. **A change cue** (Python): the model is asked only when the statement says a
   change at all: a negation, "now", "again", "any more", "instead", "switched",
   "gave up", "gone", "finished", "moved", "broke up", "actually", "I meant"…
   (`CHANGE`): words of change in general, not one set's idioms. A statement
   without one ends nothing ("I love mushrooms on pizza" leaves "Likes mushrooms").
3. **The question** (model): P(yes) that the statement says the item's line is
   no longer true, from the first token's probabilities (`memagent.llm.yesno`),
   after four examples with placeholders. At `END_AT` or over, the item is
   removed; a backend that gives no probability is asked for a constrained
   `{"ended": "yes"|"no"}` instead; an error keeps the item (a failed question
   never deletes).
4. **What it says now** (model, then Python): a line the statement names whose
   P(ended) is at least `REWRITE_AT` (under `END_AT` too) may have changed a detail
   rather than ended ("upped my sertraline to 100mg", which the yes/no calls only
   half ended). A habit's or plan's line with the one new day or time the statement
   says is written in Python (`retime.moved_line`: "swimming lessons have moved to
   Sunday mornings"); otherwise the model is asked to write the line as it is now
   (`rewritten`, prompts/rewrite.yaml), and the new line is written in its place only if it
   names the same thing (a word of the old line), takes every new word from the
   statement, says no end, and no operation already writes it. Anything else
   leaves what the yes/no decided.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from memagent.llm import LLM, LLMError, Message
from memagent.llm.yesno import ask_yes_no, verdict_schema
from memagent.memory.profile._prompts import load_prompt, render
from memagent.memory.profile.changes import RELATION_OVER, who
from memagent.memory.profile.item_keys import match_key, said_word, slug, tokens
from memagent.memory.profile.models import Item, Resource
from memagent.memory.profile.negation import parts
from memagent.memory.profile.operations import AnyOp, AppendOp, RemoveOp, UpdateOp
from memagent.memory.profile.retime import moved_line
from memagent.memory.profile.subjects import their_subject
from memagent.memory.profile.timebound import time_bound

MAX_CANDIDATES = 3
"""Items asked about per statement: each is one short model call."""
END_AT = 0.6
"""An item whose P(ended) is at least this is removed: on 110 pairs from the spent
sets, 54 of 82 ended lines and 2 of 28 held ones (docs/concepts/profile.md)."""
MAX_STATEMENT_CHARS = 600
ONE_AT_A_TIME = frozenset({"diet.restrictions", "communication.style", "whereabouts.current"})
"""Lists where a new fact of the kind may replace the one held without sharing a
word with it ("I eat meat again now" ends "Vegetarian")."""

CHANGE = re.compile(
    r"n'?t\b|\b(?:not|no|never|nope|nor|none)\b|"
    r"\b(?:any ?more|no longer|now|nowadays|these days|again|instead|anymore|lately|"
    r"used to|since|recently|finally|"
    r"swap\w*|switch\w*|chang\w*|mov(?:e|ed|ing)|quit\w*|stopp?\w*|gave up|give up|giving up|"
    r"given up|done|finish\w*|over|gone|off|left|end\w*|split|broke|divorc\w*|sold|lost|"
    r"died|passed|cancel\w*|postpon\w*|called off|cut out|dropped|replac\w*|rather|"
    r"actually|wrong|meant|mix\w* up|scratch|correct\w*|sorry|oops|wait|turns out|"
    r"went|became|become|got rid|without|outgrown|grew out|recovered|cured|healed|"
    r"better|cleared|back|returned|home|"
    r"upped|increas\w*|decreas\w*|lower\w*|rais\w*|reduc\w*|doubl\w*|halv\w*|bump\w*|"
    r"shift\w*|push\w* back|brought forward|rebook\w*|reschedul\w*|extend\w*|tipped|"
    r"upgrad\w*|downgrad\w*|turned into)\b",
    re.IGNORECASE,
)
"""Words that say something changed (module doc, step 2)."""

_LABEL_WORDS = frozenset(
    {
        "likes",
        "dislikes",
        "takes",
        "allergic",
        "to",
        "lives",
        "in",
        "works",
        "as",
        "named",
        "name",
        "speaks",
        "pet",
        "family",
        "whereabouts",
        "home",
        "work",
        "until",
        "no",
        "the",
        "a",
        "an",
        "of",
        "and",
        "or",
        "at",
        "for",
        "with",
        "on",
        "my",
        "i",
    }
)
_WEEKDAYS = frozenset(["mon", "tue", "wed", "thu", "fri", "sat", "sun"])
_DATED = frozenset({"routine.daily", "routine.weekly", "schedule.upcoming", "fitness.activities"})
"""Lists whose lines may hold a day or time a statement moves (`retime.moved_line`)."""


@dataclass(frozen=True)
class Candidate:
    file: str
    path: str
    item: Item


REWRITE_AT = 0.35
"""A held line the statement names is asked what it says now when its P(ended) is at
least this, under `END_AT` too: a line whose detail changed ("upped my sertraline
to 100mg") is only half ended to the yes/no question, and what the model writes
is checked word by word (`checked_rewrite`) before it takes the old line's place."""
REWRITE_MAX_CHARS = 60
"""A line as it is now is at most this long (the grammar's bound on the reply)."""
REWRITE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"now": {"type": "string", "minLength": 1, "maxLength": REWRITE_MAX_CHARS}},
    "required": ["now"],
    "additionalProperties": False,
}
"""The line as it is now (`rewritten`): one bounded string, which llama.cpp's grammar
builds in full."""
_ENDED = re.compile(
    r"n'?t\b|\b(?:not|no|never|none|longer|any ?more|stopp?\w*|quit\w*|ended|over|gone|"
    r"cancel\w*|off|without|ex|former\w*|used to)\b",
    re.IGNORECASE,
)
"""A line that says an end is no line as it is now: the removal stands."""


@dataclass
class Revision:
    """What asking about the stored items did: the removals (and the lines written
    in place of those a statement changed), the calls, each candidate's P(ended),
    and each changed line (for the bench's log)."""

    operations: list[RemoveOp | AppendOp | UpdateOp] = field(default_factory=list)
    calls: int = 0
    asked: list[tuple[str, float]] = field(default_factory=list)
    rewrites: list[tuple[str, str]] = field(default_factory=list)
    """(old line, line as it is now) for each line written in place of an ended one."""
    replaced: list[AppendOp | UpdateOp] = field(default_factory=list)
    """The plan's appends a line as it is now takes the place of (`moves.moved`)."""


def _item_words(item: Item) -> set[str]:
    return line_words(item.item, item.display)


def line_words(key: str, display: str) -> set[str]:
    """A line's words that say what it is: not its label, a weekday or a number."""
    words = {*tokens(key), *tokens(display)}
    return {
        match_key(w)
        for w in words
        if w not in _LABEL_WORDS and w not in _WEEKDAYS and not w.isdigit() and len(w) > 1
    }


_SOMEONE_NEW = re.compile(
    r"\bnot (?:with )?\w+ any ?more\b|\bseeing (?:someone|somebody|a (?:guy|girl|man|woman|lad))\b|"
    r"\bnew (?:boyfriend|girlfriend|partner|bf|gf)\b|\brenamed\b|\bcalled \w+ now\b",
    re.IGNORECASE,
)
"""Words that may end a pet's or person's line besides `changes.RELATION_OVER`."""
_CANCELS = re.compile(
    r"\b(?:cancell?ed|cancel|called off|scrapped|closing down|closed down|shut down)\b", re.I
)
_NO_CHANGE = re.compile(
    r"\blost it\b|\b(?:seems?|looks?|feels?|felt|am|is|was|get|got|getting|a bit)\s+lost"
    r"(?:\s+without)?\b|"
    r"\blost without\b|\blost track\b|\blost for words\b",
    re.IGNORECASE,
)
"""'I've lost it', 'Clover seems lost without him': "lost" that ends nothing."""


def change_near(
    item: Item, sentences: Sequence[str], others: Sequence[Item] = (), said: Sequence[str] = ()
) -> bool:
    """A word of change is said in a sentence that names `item`, or in one beside it that
    names none of `others` (the other held lines the statement names: "Fudge passed away.
    Clover seems lost without him" ends Fudge, not Clover); an item no sentence names (a
    new fact of a kind held one at a time) goes by the statement's change words. `said`:
    the values the plan already writes or ends, which name other things too."""
    plain = [_NO_CHANGE.sub(" ", s) for s in sentences]
    words = _item_words(item)
    other = {w for o in others if o.item != item.item for w in _item_words(o)}
    other = (other | {match_key(t) for v in said for t in tokens(v)}) - words

    def names(i: int, these: set[str]) -> bool:
        return any(said_word(w, _said([sentences[i]])) for w in these)

    naming = [i for i in range(len(sentences)) if names(i, words)]
    if not naming:
        return any(CHANGE.search(s) for s in plain)
    beside = {j for i in naming for j in (i - 1, i + 1) if 0 <= j < len(sentences)}
    near = set(naming) | {j for j in beside if not names(j, other)}
    return any(CHANGE.search(plain[j]) for j in near)


def _said(sentences: Sequence[str]) -> set[str]:
    """The words the writer says of themselves: not in a part said of someone else
    ("my girlfriend's not vegan though" names no line of the writer's)."""
    return {
        match_key(t)
        for s in sentences
        for p in parts(s)
        if not their_subject(p)
        for t in tokens(p)
        if t not in _LABEL_WORDS
    }


def _touched(ops: Sequence[AnyOp]) -> dict[tuple[str, str], set[str]]:
    out: dict[tuple[str, str], set[str]] = {}
    for op in ops:
        if isinstance(op, UpdateOp | RemoveOp | AppendOp):
            out.setdefault((op.file or "", op.path or ""), set()).add(match_key(op.value.item))
    return out


def candidates(
    sentences: Sequence[str],
    resources: Mapping[str, Resource],
    ops: Sequence[AnyOp],
    today: date,
) -> list[Candidate]:
    """Stored items `sentences` may end (module doc, step 1), most words shared first.
    An item the plan updates, removes or moves to another list is the plan's; one
    it appends again to its own list (the handler's no_change) is still asked
    about: a small model reads "X" in "I don't need X any more" as X again."""
    said = _said(sentences)
    written = _touched([o for o in ops if not isinstance(o, AppendOp)])
    moved = {k for ks in _touched(ops).values() for k in ks}  # appended to another list
    landing = {(o.file or "", o.path or "") for o in ops if isinstance(o, AppendOp | UpdateOp)}
    appended = _touched([o for o in ops if isinstance(o, AppendOp)])
    scored: list[tuple[int, Candidate]] = []
    for file, resource in sorted(resources.items()):
        for path, items in resource.iter_lists():
            for item in items:
                key = match_key(item.item)
                if item.expired(today) or key in written.get((file, path), ()):
                    continue
                if key in moved and key not in appended.get((file, path), set()):
                    continue  # "I actually love sushi now": the plan moves it across
                new_here = (file, path) in landing and match_key(item.item) not in appended.get(
                    (file, path), set()
                )
                shared = sum(1 for w in _item_words(item) if said_word(w, said))
                if shared or (new_here and path in ONE_AT_A_TIME):
                    scored.append((shared, Candidate(file, path, item)))
    scored.sort(key=lambda sc: -sc[0])
    return [c for _, c in scored[:MAX_CANDIDATES]]


def question(statement: str, item: Item) -> list[Message]:
    """The yes/no question about one stored line (prompts/revise.yaml), after its
    examples (placeholders only)."""
    spec = load_prompt("revise")
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
    line = item.display.split(" (until ")[0]
    out.append(
        Message(
            role="user",
            content=render(spec.user, statement=statement[:MAX_STATEMENT_CHARS], line=line),
        )
    )
    return out


STILL_SCHEMA = verdict_schema("ended")
"""The constrained reply a backend without token probabilities gives instead."""


def ended_p(llm: LLM, statement: str, item: Item) -> float | None:
    """P(yes) that `statement` ends `item` (the line is no longer true); None when
    the model gives no usable verdict (the item is kept)."""
    return ask_yes_no(llm, question(statement, item), "ended")


def rewrite_question(statement: str, item: Item) -> list[Message]:
    """The question that asks for `item`'s line as it is now (prompts/rewrite.yaml),
    after its examples (placeholders only)."""
    spec = load_prompt("rewrite")
    out = [Message(role="system", content=spec.system.strip())]
    for example in spec.examples:
        shown = example.assistant if isinstance(example.assistant, dict) else {}
        line = str(shown["line"])
        out.append(
            Message(role="user", content=render(spec.user, statement=example.user, line=line))
        )
        out.append(Message(role="assistant", content=json.dumps({"now": shown["now"]})))
    line = item.display.split(" (until ")[0]
    asked = render(spec.user, statement=statement[:MAX_STATEMENT_CHARS], line=line)
    out.append(Message(role="user", content=asked))
    return out


def _content_words(text: str) -> list[str]:
    return [
        match_key(w) for w in tokens(text) if w not in _LABEL_WORDS and (len(w) > 1 or w.isdigit())
    ]


def checked_rewrite(statement: str, item: Item, now: str, *, same_thing: bool = True) -> str | None:
    """`now` (the model's line for `item` as it is after `statement`) when it is one
    to write, else None: it names the same thing (shares a word with the old line;
    `same_thing=False` for a list that holds one thing at a time, where "paragraphs"
    replaces "bullet points"), every new word is said in the statement, at least one
    word is new, and it says no end ("No longer likes X" is the removal's, not a line)."""
    now = " ".join(now.split()).strip(" \"'.")[:REWRITE_MAX_CHARS]
    if not now or _ENDED.search(now):
        return None
    old = set(_content_words(f"{item.item} {item.display.split(' (until ')[0]}"))
    said = {match_key(t) for t in tokens(statement)}
    words = _content_words(now)
    fresh = [w for w in words if not said_word(w, old)]
    if not fresh or (same_thing and not any(said_word(w, old) for w in words)):
        return None
    return now if all(said_word(w, said) for w in fresh) else None


def rewritten(llm: LLM, statement: str, item: Item, *, same_thing: bool = True) -> str | None:
    """The line `item` holds as it is now, when `statement` changes a detail of it
    (`checked_rewrite`); None when the model gives no such line or fails."""
    try:
        reply = llm.chat(
            rewrite_question(statement, item),
            response_schema=REWRITE_SCHEMA,
            max_tokens=48,
            temperature=0.0,
        )
        data = json.loads(reply.text.strip().removeprefix("```json").removesuffix("```"))
    except (LLMError, ValueError):
        return None
    now = data.get("now") if isinstance(data, dict) else None
    if not isinstance(now, str):
        return None
    return checked_rewrite(statement, item, now, same_thing=same_thing)


def in_place(cand: Candidate, line: str, statement: str, today: date) -> AppendOp | None:
    """The append that writes `line` in `cand`'s list in place of its ended item,
    keeping the item's label ("Takes") out of the new key; a held line with an end
    day gets the statement's end day, or keeps its own."""
    label = set(tokens(cand.item.display)) - set(tokens(cand.item.item))
    key = slug(" ".join(w for w in tokens(line) if w not in label)) or slug(line)
    if not key or match_key(key) == match_key(cand.item.item):
        return None
    expiry = None
    if cand.item.expiry is not None:
        expiry = time_bound(statement, today) or cand.item.expiry
    display = line[:1].upper() + line[1:]
    if expiry is not None:
        display = f"{display} (until {expiry.strftime('%a')} {expiry.isoformat()})"
    return AppendOp(
        operation="append",
        file=cand.file,
        path=cand.path,
        value={"item": key, "display": display},
        expiry=expiry.isoformat() if expiry is not None else None,
    )


def revise(
    llm: LLM,
    sentences: Sequence[str],
    resources: Mapping[str, Resource],
    ops: Sequence[AnyOp],
    today: date,
    *,
    end_at: float = END_AT,
    known: dict[tuple[str, str, str], float | None] | None = None,
    rewrite_at: float | None = REWRITE_AT,
    rewrites_known: dict[tuple[str, str, str], str | None] | None = None,
) -> Revision:
    """The stored items `sentences` end (module doc), as removals, with the calls
    it took; a line the statement names whose P(ended) is at least `rewrite_at`
    (None: never) is asked what it says now, and a line that passes the checks
    takes its place (step 4). `known`, `rewrites_known`: answers already had (a
    re-plan asks nothing twice)."""
    out = Revision()
    statement = " ".join(" ".join(sentences).split())
    if not statement or not CHANGE.search(statement):
        return out
    memo = known if known is not None else {}
    lines = rewrites_known if rewrites_known is not None else {}
    written = {k for ks in _touched(ops).values() for k in ks}
    said = _said(sentences)
    asked = candidates(sentences, resources, ops, today)
    planned = [str(o.value.item) for o in ops if isinstance(o, AppendOp | UpdateOp | RemoveOp)]
    someone_over = bool(RELATION_OVER.search(statement) or _SOMEONE_NEW.search(statement))
    more_than_cancelled = bool(CHANGE.search(_CANCELS.sub(" ", statement)))
    for cand in asked:
        if not change_near(cand.item, sentences, [c.item for c in asked], planned):
            continue  # "the scaffolding lads think i've lost it": named, said of no change
        if who(cand.item) is not None and not someone_over:
            continue  # "nkechi is going to kill me": a pet or person ends only as one does
        if cand.path not in _DATED and not more_than_cancelled:
            continue  # "pottery class is cancelled": the class, not the liking
        key = (cand.file, cand.path, cand.item.item)
        if key not in memo:
            memo[key] = ended_p(llm, statement, cand.item)
            out.calls += 1
        p = memo[key]
        if p is None:
            continue
        out.asked.append((cand.item.display, p))
        op = None
        named = any(said_word(w, said) for w in _item_words(cand.item))
        if rewrite_at is not None and named and p >= min(rewrite_at, end_at):
            if key not in lines:  # only a line the statement names: what it says now
                one = cand.path in ONE_AT_A_TIME
                plain = moved_line(cand.item.display, statement) if cand.path in _DATED else None
                lines[key] = plain and checked_rewrite(statement, cand.item, plain)
                if not lines[key]:  # no new day or time said plainly: the model's line
                    lines[key] = rewritten(llm, statement, cand.item, same_thing=not one)
                    out.calls += 1
            line = lines[key]
            op = in_place(cand, line, statement, today) if line else None
            if op is not None and match_key(op.value.item) in written:
                op = None  # the plan writes it already
        if p < end_at and op is None:
            continue
        out.operations.append(
            RemoveOp(
                operation="remove", file=cand.file, path=cand.path, value={"item": cand.item.item}
            )
        )
        if op is not None:
            out.operations.append(op)
            out.rewrites.append((cand.item.display, str(op.value.display)))
            written.add(match_key(op.value.item))
    return out


def merged(ops: Sequence[AnyOp], revision: Revision) -> list[AnyOp]:
    """`ops` with the revision's removals: an append of an item the statement ends
    (the model's "X" read in "I don't need X any more") gives way to its removal, and
    an append the revision wrote a line in place of (`Revision.replaced`) to that line."""
    if not revision.operations and not revision.replaced:
        return list(ops)
    ended = {
        (o.file, o.path, match_key(o.value.item))
        for o in revision.operations
        if isinstance(o, RemoveOp)
    }
    kept = [
        o
        for o in ops
        if not (
            isinstance(o, AppendOp | UpdateOp)
            and (o.file, o.path, match_key(o.value.item)) in ended
        )
        and not any(o is r for r in revision.replaced)
    ]
    return [*kept, *revision.operations]
