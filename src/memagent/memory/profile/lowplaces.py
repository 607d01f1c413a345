"""Places typed all in lower case, as chat often is ("i'm in tokyo till the 20th!!", "i live
in leeds"). A capitalised word is a place's mark in `rules`; in a sentence with none (the
writer's "I" aside) the word after "in" is read as the place when the sentence says a stay
or a home in a fixed shape, and it is not a thing one is in rather than a place."""

from __future__ import annotations

import re

_LOWER_STAY = re.compile(
    r"(?:^\W*|\b[iI]'?m\s+|\bim\s+|\b[iI] am\s+|,\s*)(?:(?:staying|working|crashing|stopping|"
    r"stuck|based|holed up)(?: remotely)?\s+)?(?:at (?:a|my) [a-z]+'s\s+)?(?:in|from) "
    r"([a-z]{3,}(?: [a-z]{3,})?) (?:(?:for work|for a \w+|on business|with work|visiting \w+) )?"
    r"(?:till|until|thru|through|for the next|tonight|this week|"
    r"for (?:a|one|two|three|four|five|six|seven|a few|\d+) (?:nights?|days?|weeks?))\b"
)
"""A stay typed in lower case ("i'm in tokyo till the 20th!!", "working from lisbon for the
next two weeks", "crashing at a friend's in munich tonight"): the place is the word after
"in" or "from" in a sentence with no capitalised word, when it is not a thing one is in
rather than a place (`NOT_PLACES`)."""
NOT_PLACES = frozenset(
    {
        *("bed", "work", "school", "class", "town", "hospital", "meetings", "meeting"),
        *("office", "quarantine", "isolation", "lockdown", "training", "recovery", "rehab"),
        *("trouble", "pain", "love", "charge", "hiding", "court", "session", "home", "traffic"),
        *("queue", "limbo", "the"),
    }
)
_NOT_HOMES = frozenset({"hope", "fear", "denial", "peace", "comfort", "luxury", "sin", "shared"})
_LOWER_HOME = re.compile(
    r"\b(?:I|we)(?: now| still| currently)? (?:live|'ve lived|have lived|'m based|am based|"
    r"'re based|are based) in ([a-z]{3,}(?: (?!(?:now|since|and|with|for|but|so)\b)[a-z]{3,})?)"
    r"(?=\W*$|\s*[,.;!]| (?:now|since|and|with|for|but|so)\b)",
    re.IGNORECASE,
)


def _lower_case(sentence: str) -> bool:
    return not re.search(r"\b(?!I\b)[A-Z][a-z]", sentence)


def _place(pattern: re.Pattern[str], sentence: str, not_places: frozenset[str]) -> str | None:
    """The place `pattern` reads in `sentence` typed in lower case, unless it is one of
    `not_places`."""
    m = pattern.search(sentence) if _lower_case(sentence) else None
    return m.group(1) if m and not set(m.group(1).lower().split()) & not_places else None


def lower_stay(sentence: str) -> str | None:
    """The place of a stay typed in lower case, or None ("i'm in bed till noon")."""
    return _place(_LOWER_STAY, sentence, NOT_PLACES)


def lower_home(sentence: str) -> str | None:
    """The home typed in lower case ("I'm a year 6 teacher and I live in leeds"), or None
    ("I live in hope", "we live in a flat")."""
    return _place(_LOWER_HOME, sentence, NOT_PLACES | _NOT_HOMES)


def lower_place_after(words: str, sentence: str) -> str | None:
    """The place typed in lower case after `words` and "in" ("staying at my sister's in
    cork"), or None ("at my mum's in bed")."""
    return _place(re.compile(rf"\b{re.escape(words)}\s+in\s+([a-z]{{3,}})\b"), sentence, NOT_PLACES)
