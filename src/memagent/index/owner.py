"""What a question asks about: "my W" (a person or a thing of the user's) and
the attribute asked of it ("my sister's name", "my dog's vet").

`focus_of(question)` reads it off the question's own words: the *owner* is "my
W" where W names a relation (sister, boss, neighbour), a pet, a vehicle or a
home (`ENTITIES`; modifiers such as "older" or "best" are skipped); the
*attribute* is the word after "my W's" ("name", "wedding"), or None. Requests
for advice or ideas ("Can you suggest a name for my dog?") have no focus.

It is read once per message into `QueryFacts.focus` (`memagent.index.query`);
the focus check (`memagent.agent.focus`) tests it against the recalled lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

RELATIONS = {
    "mom": "mother",
    "mum": "mother",
    "mommy": "mother",
    "mummy": "mother",
    "mama": "mother",
    "mother": "mother",
    "dad": "father",
    "daddy": "father",
    "papa": "father",
    "father": "father",
    "parent": "parent",
    "parents": "parent",
    "sister": "sister",
    "sis": "sister",
    "brother": "brother",
    "bro": "brother",
    "sibling": "sibling",
    "son": "son",
    "daughter": "daughter",
    "kid": "child",
    "kids": "child",
    "child": "child",
    "children": "child",
    "baby": "baby",
    "wife": "wife",
    "husband": "husband",
    "spouse": "spouse",
    "partner": "partner",
    "boyfriend": "boyfriend",
    "girlfriend": "girlfriend",
    "fiance": "fiance",
    "fiancee": "fiance",
    "mother-in-law": "mother-in-law",
    "father-in-law": "father-in-law",
    "sister-in-law": "sister-in-law",
    "brother-in-law": "brother-in-law",
    "stepmother": "stepmother",
    "stepfather": "stepfather",
    "grandma": "grandmother",
    "granny": "grandmother",
    "grandmother": "grandmother",
    "grandpa": "grandfather",
    "grandfather": "grandfather",
    "grandparent": "grandparent",
    "aunt": "aunt",
    "uncle": "uncle",
    "cousin": "cousin",
    "niece": "niece",
    "nephew": "nephew",
    "friend": "friend",
    "boss": "boss",
    "manager": "manager",
    "colleague": "colleague",
    "coworker": "colleague",
    "co-worker": "colleague",
    "neighbor": "neighbour",
    "neighbour": "neighbour",
    "roommate": "roommate",
    "flatmate": "roommate",
    "landlord": "landlord",
    "teacher": "teacher",
    "doctor": "doctor",
    "dentist": "dentist",
    "therapist": "therapist",
    "coach": "coach",
    "dog": "dog",
    "puppy": "dog",
    "cat": "cat",
    "kitten": "cat",
    "pet": "pet",
    "hamster": "hamster",
    "rabbit": "rabbit",
    "bunny": "rabbit",
    "parrot": "parrot",
    "bird": "bird",
    "fish": "fish",
    "horse": "horse",
    "turtle": "turtle",
    "tortoise": "tortoise",
    "snake": "snake",
    "car": "car",
    "bike": "bike",
    "bicycle": "bike",
    "motorbike": "motorbike",
    "motorcycle": "motorbike",
    "boat": "boat",
    "house": "house",
    "flat": "flat",
    "apartment": "flat",
    "garden": "garden",
}
BROADER = {
    **{
        pet: ("pet",)
        for pet in [
            "dog",
            "cat",
            "hamster",
            "rabbit",
            "fish",
            "horse",
            "turtle",
            "tortoise",
            "snake",
        ]
    },
    "parrot": ("bird", "pet"),
    "bird": ("pet",),
    "son": ("child",),
    "daughter": ("child",),
    "mother": ("parent",),
    "father": ("parent",),
    "sister": ("sibling",),
    "brother": ("sibling",),
    "grandmother": ("grandparent",),
    "grandfather": ("grandparent",),
    "wife": ("spouse", "partner"),
    "husband": ("spouse", "partner"),
    "motorbike": ("bike",),
}
"""A word that also names a broader kind: a line about "my parrot" is about a bird."""
ENTITIES = frozenset(RELATIONS)
"""The words that name a person or a thing of the user's (the owner of a question)."""

_MODIFIERS = frozenset(
    [
        "best",
        "old",
        "older",
        "oldest",
        "young",
        "younger",
        "youngest",
        "little",
        "big",
        "baby",
        "elder",
        "eldest",
        "new",
        "first",
        "second",
        "third",
        "late",
        "ex",
        "step",
        "half",
        "current",
        "former",
        "favorite",
        "favourite",
        "own",
    ]
)

_ADVICE = re.compile(
    r"\b(?:should|can you|could you|suggest\w*|recommend\w*|ideas?|advice|advise|help|"
    r"how (?:do|can|to|should)|tips?|what (?:is|are) (?:a |some )?good)\b",
    re.IGNORECASE,
)
_OWNED = re.compile(
    r"\bmy\s+((?:[a-z-]+\s+){0,2}?[a-z-]+)(?:'s|’s|'|’)(?:\s+([a-z-]+))?(?:\s+([a-z-]+))?",
    re.IGNORECASE,
)
_MY = re.compile(r"\bmy\s+([a-z-]+)(?:\s+([a-z-]+))?", re.IGNORECASE)

_NOT_ATTRIBUTES = frozenset(
    [
        "a",
        "an",
        "the",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "has",
        "have",
        "had",
        "do",
        "does",
        "did",
        "and",
        "or",
        "to",
        "of",
        "in",
        "on",
        "at",
        "for",
        "with",
        "from",
        "about",
        "by",
        "as",
    ]
)


@dataclass(frozen=True)
class Focus:
    """What a question is about: its owner (a relation or thing of the user's,
    as `RELATIONS` names it) and the attribute asked of it (None: none named)."""

    owner: str
    owner_word: str
    attribute: str | None = None


def _entity(words: list[str]) -> tuple[str, str] | None:
    """The owner named by the words after "my" (modifiers skipped)."""
    for word in words:
        w = word.lower().strip("'’")
        if w in _MODIFIERS:
            continue
        if w in RELATIONS:
            return RELATIONS[w], w
        if w.endswith("s") and w[:-1] in RELATIONS:
            return RELATIONS[w[:-1]], w[:-1]
        return None
    return None


def focus_of(question: str) -> Focus | None:
    """The owner and attribute `question` asks about; None when it names no
    owner of `ENTITIES`, or asks for advice or ideas rather than a told fact."""
    if not question or _ADVICE.search(question):
        return None
    for m in _OWNED.finditer(question):
        ent = _entity(m.group(1).split())
        if ent is None:
            continue
        attr = (m.group(2) or "").lower()
        if attr in _MODIFIERS:  # "my cat's favourite food": the food
            attr = (m.group(3) or "").lower()
        if attr in _NOT_ATTRIBUTES or attr in _MODIFIERS:
            attr = ""
        if attr in RELATIONS:  # "my sister's husband": a person of the owner's
            return Focus(ent[0], ent[1], attr)
        return Focus(ent[0], ent[1], attr or None)
    for m in _MY.finditer(question):
        ent = _entity([w for w in (m.group(1), m.group(2)) if w])
        if ent is not None:
            return Focus(ent[0], ent[1])
    return None
