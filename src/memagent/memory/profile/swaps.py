"""One thing put in another's place, read by rule: "raspberries, not strawberries", "it
isn't latex I react to, it's nickel", "switched from oat milk to soy milk", "gave up
squash for padel", "switched to cetirizine, the loratadine wasn't touching it".

The new thing goes in the list the old one is held in (`substitutes`), and the old one
is taken back (`taken_back`) only when it is a held item word for word, so a looser
mention ("easy being vegan") changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from memagent.memory.profile.changes import items
from memagent.memory.profile.item_keys import match_key, tokens
from memagent.memory.profile.models import Resource
from memagent.memory.profile.negation import contrasts

_INSTEAD = re.compile(
    r"(?:^|[,.;:!]\s*|\b(?:sorry|oops|actually|I meant|it'?s|it is)\s*,?\s*)"
    r"((?!(?:I|I'm|we|you|it|that|this)\b)[a-z][\w-]*(?: [a-z][\w-]*){0,2}),?\s+not\s+"
    r"([a-z][\w -]{1,30}?)(?=[,.;!]|$)",
    re.IGNORECASE,
)


_SWITCHED = re.compile(
    r"\b(?:switched|changed|moved|gone|went|swapped|converted)\s+(?:over\s+)?from\s+"
    r"(?:the\s+|my\s+)?([a-z][\w'-]*(?: [a-z][\w'-]*){0,2}?)\s+to\s+(?:the\s+|my\s+)?"
    r"([a-z][\w'-]*(?: [a-z][\w'-]*){0,2}?)(?=[,.;!]|\s+(?:in|for|with|now|because|since|as)\b|$)",
    re.IGNORECASE,
)
""""Switched from oat milk to soy milk in my lattes": the second in the first's place."""
_TRADED = re.compile(
    r"\b(?:gave up|given up|giving up|swapped|swapping|traded|ditched|dropped|replaced)\s+"
    r"(?:the\s+|my\s+)?([a-z][\w'-]*(?: [a-z][\w'-]*){0,2}?)\s+(?:for|with)\s+(?:the\s+|my\s+)?"
    r"([a-z][\w'-]*(?: [a-z][\w'-]*){0,2}?)(?=[,.;!]|\s+(?:in|because|since|as|now)\b|$)",
    re.IGNORECASE,
)
""""Gave up squash for padel": the second in the first's place."""
_SWITCHED_TO = re.compile(
    r"\b(?:switched|swapped|changed)\s+(?:over\s+)?to\s+(?:the\s+|my\s+)?"
    r"(?!(?:mon|tues|wednes|thurs|fri|satur|sun)day|morning|evening|night|afternoon|\d)"
    r"([a-z][\w'-]*(?: [a-z][\w'-]*){0,2}?)(?=[,.;!]|\s+(?:in|because|since|as|now|instead)\b|$)",
    re.IGNORECASE,
)
""""Switched to cetirizine, the loratadine wasn't touching it": the old one is the held
item the same sentence names."""


def _held_as(
    thing: str, resources: Mapping[str, Resource], lists: Sequence[tuple[str, str]]
) -> list[tuple[str, str, str]]:
    """`(file, path, item)` of the items of `lists` that are `thing` or begin with it
    ("oat milk" is "oat milk latte"), word for word."""
    said = [match_key(t) for t in tokens(thing)]
    return [
        (file, path, i.item)
        for file, path in lists
        for i in items(resources, file, path)
        if said and [match_key(t) for t in tokens(i.item)][: len(said)] == said
    ]


def _named_held(
    sentence: str, new: str, resources: Mapping[str, Resource], lists: Sequence[tuple[str, str]]
) -> list[str]:
    """The held items of `lists` the sentence names word for word, other than `new`."""
    said = {match_key(t) for t in tokens(sentence)} - {match_key(t) for t in tokens(new)}
    return [
        i.item
        for file, path in lists
        for i in items(resources, file, path)
        if (keys := {match_key(t) for t in tokens(i.item)}) and keys <= said
    ]


def _replaced(
    sentence: str, resources: Mapping[str, Resource], lists: Sequence[tuple[str, str]]
) -> list[tuple[str, str]]:
    """(new, old) where the sentence says the old one is wrong or over: "it isn't Y, it's
    X", "switched from Y to X", "gave up Y for X", and "switched to X" said with a held Y."""
    pairs = [(right, wrong) for wrong, right in contrasts(sentence)]
    pairs += [(m.group(2), m.group(1)) for m in _SWITCHED.finditer(sentence)]
    pairs += [(m.group(2), m.group(1)) for m in _TRADED.finditer(sentence)]
    if not _SWITCHED.search(sentence):
        for m in _SWITCHED_TO.finditer(sentence):
            held = _named_held(sentence, m.group(1), resources, lists)
            pairs += [(m.group(1), old) for old in held]
    return [(new.strip(), old.strip()) for new, old in pairs]


def _swaps(
    sentence: str, resources: Mapping[str, Resource], lists: Sequence[tuple[str, str]]
) -> list[tuple[str, str]]:
    """(new, old) for "X, not Y" and every shape `_replaced` reads."""
    pairs = [(m.group(1).strip(), m.group(2).strip()) for m in _INSTEAD.finditer(sentence)]
    return pairs + _replaced(sentence, resources, lists)


def substitutes(
    sentences: Sequence[str], resources: Mapping[str, Resource], lists: Sequence[tuple[str, str]]
) -> list[tuple[str, str, str]]:
    """`(file, path, new thing)` for "X, not Y", "it isn't Y, it's X" or "switched
    from Y to X" where Y is held in one of `lists` ("sorry, raspberries, not
    strawberries" after an allergy to strawberries): X goes in Y's list (Y's removal
    is the negation's, or `taken_back`'s)."""
    return [
        (file, path, new)
        for s in sentences
        for new, old in _swaps(s, resources, lists)
        for file, path in dict.fromkeys((f, p) for f, p, _ in _held_as(old, resources, lists))
    ]


def taken_back(
    sentences: Sequence[str], resources: Mapping[str, Resource], lists: Sequence[tuple[str, str]]
) -> list[str]:
    """The held items "it isn't Y, it's X" or "switched from Y to X" says are wrong or
    over (`_held_as`: a looser Y, "easy being vegan", takes nothing back). "X, not Y"
    leaves Y to the negation."""
    return [
        item
        for s in sentences
        for _new, old in _replaced(s, resources, lists)
        for _f, _p, item in _held_as(old, resources, lists)
    ]


def in_place_of(value: str, statement: str) -> bool:
    """`statement` puts `value` in place of another thing ("X, not Y", "not Y but X")."""
    v = re.escape(value)
    said = [m.group(2) for p in (_SWITCHED, _TRADED) for m in p.finditer(statement)]
    said += [m.group(1) for m in _SWITCHED_TO.finditer(statement)]
    if any(match_key(value) == match_key(s.strip()) for s in said):
        return True  # "gave up squash for padel": padel is the new one
    return bool(
        re.search(rf"\b{v},?\s+not\s+\w", statement, re.I)
        or re.search(
            rf"(?:\bnot|n't)\s+[\w' -]{{1,30}}?,?\s+(?:but|it'?s|it is)\s+(?:the |my )?{v}\b",
            statement,
            re.I,
        )
    )


_DOSE = r"\d+(?:\.\d+)?\s*(?:mg|mcg|µg|ml|iu|units?)"
_DOSE_SAID = re.compile(rf"(?i:\b({_DOSE})\s+(?:of\s+)?)$")
_MEDS = ("resource_user_health.json", "health.medications")


def with_dose(value: str, clause: str) -> str:
    """A medicine read without the dose said beside it ("I'm on 20mg of lisinopril now"
    read as "lisinopril") with that dose: "lisinopril 20mg"."""
    if re.search(_DOSE, value, re.IGNORECASE):
        return value
    m = re.search(
        rf"\b{re.escape(value)}\b\s+(?:(?:up |down )?to |at |on )?({_DOSE})\b", clause, re.I
    )
    if m is None:
        at = re.search(rf"\b{re.escape(value)}\b", clause, re.IGNORECASE)
        before = _DOSE_SAID.search(clause[: at.start()]) if at is not None else None
        return f"{value} {before.group(1)}" if before is not None else value
    return f"{value} {m.group(1)}"


_DOSE_WORD = re.compile(
    r"^(?:\d+(?:\.\d+)?(?:mg|mcg|µg|ml|iu|units?)?|mg|mcg|µg|ml|iu|units?)$", re.I
)


def undosed(key: str) -> str:
    """A medicine's item key without its dose ("sertraline_100_mg" → "sertraline"):
    what "off the sertraline" names."""
    return "_".join(t for t in tokens(key) if not _DOSE_WORD.match(t)) or key


_HOW_OFTEN_WORDS = (
    "daily a day once twice three times every morning night nightly weekly in the evening"
)
_HOW_OFTEN = frozenset(_HOW_OFTEN_WORDS.split())
_NOT_MEDICINE_WORDS = "i take taking on of my the a an to up down at now"
_NOT_A_MEDICINE = frozenset(_NOT_MEDICINE_WORDS.split())


def names_a_medicine(value: str) -> bool:
    """`value` says more than a dose and how often ("daily", "50mg twice a day" do not)."""
    return any(not _DOSE_WORD.match(w) and w not in _HOW_OFTEN for w in tokens(value.lower()))


def named_dose(value: str, clause: str) -> str:
    """A medicine read as its dose alone ("daily 50mg" from "i take sertraline 50mg
    daily") with the word said before that dose: "sertraline 50mg"."""
    words = tokens(value.lower())
    if not words or not all(_DOSE_WORD.match(w) or w in _HOW_OFTEN for w in words):
        return value
    dose = re.search(_DOSE, value, re.IGNORECASE)
    if dose is None:
        return value
    at = re.search(rf"\b([A-Za-z][\w-]{{2,}})\s+{re.escape(dose.group(0))}", clause, re.I)
    if at is None or at.group(1).lower() in _NOT_A_MEDICINE:
        return value
    return f"{at.group(1)} {dose.group(0)}"


def other_doses(value: str, resources: Mapping[str, Resource]) -> list[str]:
    """The held items of the same medicine at another dose ("lisinopril 10mg" when
    "lisinopril 20mg" is said): the new dose is in their place."""
    said = tokens(value)
    if not said or not re.search(_DOSE, value, re.IGNORECASE):
        return []
    return [
        i.item
        for i in items(resources, *_MEDS)
        if tokens(i.item)[:1] == said[:1] and match_key(i.item) != match_key(value)
    ]
