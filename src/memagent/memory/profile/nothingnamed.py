"""Values that name no thing: "allergic to everything", "hates all food", a pronoun or a
degree alone ("them", "chronic"), a word of how much or how well alone ("not eating enough",
"a good crowd"), a phrase cut before its thing ("allergic to got my"),
how much of a thing ("three cups a day minimum"),
or a piece of a sentence with its verb ("son has a milk").

Why: a 1.5B model fills a value with whatever words sit where a thing should be; none of
these is an item a person could read back. `facts.plan` drops a fact whose value names
nothing before any other rule looks at it.
"""

from __future__ import annotations

import re

from memagent.memory.profile.item_keys import tokens

_FRAGMENT = re.compile(r" (?:has|have|had|is|are|was|were) ", re.IGNORECASE)
_SAID_WHOLE = ("routine", "plan", "communication")
_NO_THING = frozenset(
    {
        "everything",
        "anything",
        "nothing",
        "something",
        "all",
        "stuff",
        "things",
        "food",
        "none",
        "n/a",
        "na",
        "whatever",
        "nil",
        "always",
        "never",
        "sometimes",
        "usually",
        "often",
        "recipes",
        "meals",
        "dishes",
        "enough",
        "more",
        "less",
        "properly",
        "good",
        "great",
        "fine",
        "ok",
        "okay",
        "nice",
        "better",
        "well",
        "not",
        "no",
    }
)
_PRONOUN = frozenset({"it", "them", "they", "that", "this", "those", "these", "one", "ones"})
"""A pronoun alone ("I don't eat them") names nothing by itself; "they/them" is a value."""
_CUT_OFF = frozenset(
    {"my", "your", "his", "her", "our", "their", "the", "a", "an", "of", "to", "with", "and"}
)
"""A word no value ends on: what follows it is the thing ("got my")."""
_DEGREE = frozenset({"chronic", "severe", "mild", "acute", "bad", "serious", "terrible", "awful"})
"""How bad a condition is, said apart from it ("migraines. chronic."): no condition itself."""


_NO_STYLE = frozenset(
    {
        "reply",
        "replies",
        "respond",
        "answer",
        "answers",
        "response",
        "responses",
        "pls",
        "plz",
        "please",
        "me",
        "to",
        "this",
        "it",
        "the",
        "can",
        "you",
        "u",
        "sent",
        "customer",
        "a",
        "them",
        "him",
        "her",
        "back",
        "asap",
        "thanks",
        "thx",
    }
)
"""Words of a request to answer, none of which says how ("reply pls", "answer this asap")."""
_HOW_MUCH = re.compile(
    r"\W*(?:\d+|one|two|three|four|five|six|seven|eight|ten|a few|a couple(?: of)?|several)\s+"
    r"(?:cups?|mugs?|glasses|pints?|bottles?|cans?|slices?|portions?|servings?|times|litres?|"
    r"liters?|shots?)\s+(?:a|per|each|every)\s+(?:day|week|night|month|morning)\b",
    re.IGNORECASE,
)


_HOW_FAR = re.compile(r"\W*\d+(?:\.\d+)?\s*(?:k|km|kms|miles?|mi|m|metres?|meters?)\W*", re.I)
"""A distance alone ("5k" read from "walking 5k every morning"): how far, not what."""


def names_nothing(value: str, kind: str = "") -> bool:
    """Whether `value` names no thing: "allergic to everything", "hates all food", or a
    piece of a sentence with its verb ("son has a milk") where the line is not the
    sentence itself (a habit, plan or way of answering)."""
    said = tokens(value)
    if set(said) <= _NO_THING or (len(said) == 1 and said[0] in _PRONOUN):
        return True
    last = value.split()[-1] if value.split() else ""
    if said and said[-1] in _CUT_OFF and last.islower():
        return True  # "allergic to got my": a phrase cut before its thing
    if kind == "condition" and set(said) <= _DEGREE:
        return True
    if kind == "communication" and set(said) <= _NO_STYLE:
        return True  # "customer sent this, reply pls": a request, no way of answering
    if kind in _SAID_WHOLE:  # a habit, plan or way of answering is said as a whole line
        return False
    # "tea, three cups a day minimum": how much, the tea is the thing; "son has a milk"
    return bool(
        _HOW_MUCH.match(value) or _FRAGMENT.search(f" {value} ") or _HOW_FAR.fullmatch(value)
    )
