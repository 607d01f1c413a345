"""Facts read by rule, where the phrasing is fixed enough for a pattern.

A small model often lists nothing for "My dog is called Rex." or copies a
value from its instructions for "I don't eat red meat.", while the words say
plainly what they mean. So a few patterns run on every kept sentence, before
the model: a pet's or relative's name, the user's own name, where they live,
their job ("I work as …"), "I don't eat/drink X" (a diet restriction), and how
they want to be answered. What the rules read comes first; the model's facts
fill in the rest (and the planner keeps one value per single-valued fact).
Every value is copied from the sentence, so it is grounded by construction.
"""

from __future__ import annotations

import re
from datetime import date

from memagent.memory.profile.facts import MAX_VALUE_CHARS, Extracted
from memagent.memory.profile.timebound import time_bound

_ANIMALS = (
    "dog|cat|puppy|kitten|parrot|rabbit|bunny|hamster|horse|fish|turtle|tortoise|snake|"
    "lizard|ferret|guinea pig|budgie|pony"
)
_RELATIVES = (
    "wife|husband|partner|boyfriend|girlfriend|fiancée?|son|daughter|mom|mum|mother|dad|"
    "father|sister|brother|grandma|grandmother|grandpa|grandfather|aunt|uncle|cousin|"
    "niece|nephew|baby|kid|child"
)
_NAME = r"([A-Z][a-zA-Z'-]+)"
_CALLED = r"(?:is called|is named|'s name is|name is|called|named)"

_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(rf"\b[Mm]y ({_ANIMALS})(?:'s)? {_CALLED} {_NAME}"), "pet"),
    (re.compile(rf"\b(?:[Mm]y|a|an|our) ({_ANIMALS})(?:,? an? \w+)?,? {_CALLED} {_NAME}"), "pet"),
    (re.compile(rf"\b[Mm]y ({_ANIMALS}) {_NAME}\b"), "pet"),
    (re.compile(rf"\b[Mm]y ({_RELATIVES})(?:'s)? {_CALLED} {_NAME}"), "family"),
    (re.compile(rf"\b[Mm]y ({_RELATIVES}),? {_NAME}\b"), "family"),
]
_OWN_NAME = re.compile(rf"\b(?:[Mm]y name is|[Cc]all me|I'm called|I am called) {_NAME}")
_HOME = re.compile(
    r"\bI (?:live|am living|'m living|'ve moved|have moved|moved|just moved) (?:in|to) "
    r"([A-Z][\w'-]*(?: [A-Z][\w'-]*)*)|\b[Ww]e (?:just )?moved to ([A-Z][\w'-]*(?: [A-Z][\w'-]*)*)"
)
_WORK = re.compile(r"\bI work as an? ([a-z][\w -]{1,40}?)(?= at | for |[,.;!]|$| now\b)")
_NO_EAT = re.compile(
    r"\bI (?:don'?t|do not|never) (?:eat|drink) "
    r"([a-z][a-z -]{1,30}?)(?=[,.;!]|$| anymore| any more)"
)
_COMMUNICATION = re.compile(
    r"\b(answers?|replies|reply|responses?|emojis?|bullet points?|explanations?)\b", re.IGNORECASE
)
_WANTS = re.compile(
    r"\b(keep|make|use|prefer|like|love|want|give me|always|never|don'?t|avoid|stop)\b",
    re.IGNORECASE,
)
_STAY = re.compile(
    r"\bI'?m (?:in|at|staying in|staying at|on holiday in|on vacation in|visiting|"
    r"travell?ing (?:in|around|through)|working (?:out of|from) the) "
    r"([A-Z][\w'-]*(?: [A-Z][\w'-]*)*)"
)
_NAME_STOP = frozenset({"I", "The", "A", "An", "And", "But", "Now", "Is", "It"})


def _clip(text: str) -> str:
    return " ".join(text.split())[:MAX_VALUE_CHARS].strip(" ,.;!")


def rule_facts(sentences: list[str]) -> list[Extracted]:
    """The facts fixed patterns read in `sentences` (see the module doc)."""
    out: list[Extracted] = []
    for s in sentences:
        for pattern, kind in _RULES:
            for m in pattern.finditer(s):
                name = m.group(2)
                if name not in _NAME_STOP:
                    out.append(Extracted(kind=kind, value=m.group(1).lower(), name=name))
        own = _OWN_NAME.search(s)
        if own is not None and own.group(1) not in _NAME_STOP:
            out.append(Extracted(kind="name", value=own.group(1)))
        home = _HOME.search(s)
        if home is not None:
            out.append(Extracted(kind="home", value=_clip(home.group(1) or home.group(2))))
        work = _WORK.search(s)
        if work is not None:
            out.append(Extracted(kind="work", value=_clip(work.group(1))))
        stay = _STAY.search(s)
        if stay is not None and time_bound(s, date.today()) is not None:
            out.append(Extracted(kind="whereabouts", value=_clip(stay.group(1))))
        if not re.search(r"any ?more|no longer", s, re.IGNORECASE):
            for no in _NO_EAT.finditer(s):
                out.append(Extracted(kind="diet", value=_clip(no.group(1))))
        if _COMMUNICATION.search(s) and _WANTS.search(s):
            said = re.sub(r"^(please|pls|also|and|oh)\b,?\s*", "", s.strip(), flags=re.I)
            out.append(Extracted(kind="communication", value=_clip(said)))
    return out


def merge(rules: list[Extracted], model: list[Extracted]) -> list[Extracted]:
    """The rules' facts, then the model's, less those of a kind the rules already
    read with one value each (a pet's or relative's name, home, work, name, diet
    restriction and way of answering are the rules' when they have them)."""
    ruled = {f.kind for f in rules}
    return [*rules, *(f for f in model if f.kind not in ruled)]
