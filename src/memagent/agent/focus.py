"""The focus check: does memory mention the person or thing a question is about,
and the attribute it asks for? Deterministic, no model call.

A near miss asks about the same kind of thing the user told, but not the one
told: told "My sister's wedding is on 14 June", asked "When is my brother's
wedding?"; told "I'm allergic to penicillin", asked "Is my dog allergic to
anything?"; told "My name is Ilse", asked "What is my sister's name?". Recall
returns the told lines (they share most words with the question), and a small
model answers from them. Its yes/no grounding check (`memagent.agent.verify`)
often passes too, because the lines are on the question's topic.

What a near miss lacks is read off the question's own words (`memagent.index.owner`,
once per message into `QueryFacts.focus`):
- the *owner*: "my W" where W names a person or a thing of the user's (a
  relation such as sister, boss or neighbour; a pet; a vehicle or a home:
  `ENTITIES`). Some recalled segment (a sentence or a note's bullet) must
  mention W (or a word for the same relation: mum/mother, kid/child).
- the *attribute*: in "my W's A" (sister's name, brother's wedding, dog's vet),
  a segment that mentions W must also say A: the word itself (or one sharing its
  stem: allergy/allergic), or for a few attributes the way a person states them
  ("name": named, called, or a capitalised name right after W; "job": works,
  as a; "birthday": born; `EVIDENCE`).

When either is missing, the question is about a person, thing or attribute
memory does not hold, and the reply is "I don't have that in memory." without
asking the model. Questions with no such owner ("What am I allergic to?"), and
requests for advice or ideas ("Can you suggest a name for my dog?"), are left
to the model's grounding check. The reason to trust it beyond the probe set:
it refuses only when a word the question depends on (its owner, or the
attribute of that owner) occurs in no recalled line, a test of what memory
holds, not of how the question is worded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memagent.index import BROADER, RELATIONS, Focus, QueryFacts, focus_of, is_personal

__all__ = ["EVIDENCE", "Focus", "Miss", "check", "focus_of", "is_personal", "segments"]

_JOB = (
    r"\b(?:works?|working|worked|jobs?|as an?|profession|occupation|employed|"
    r"(?:is|was) an? \w+)\b"
)
EVIDENCE: dict[str, str] = {
    "name": r"\b(?:names?|named|called|calls?)\b",
    "job": _JOB,
    "work": _JOB,
    "occupation": _JOB,
    "profession": _JOB,
    "birthday": r"\b(?:birthdays?|born|turns?|turned)\b",
    "age": r"\b(?:ages?|aged|years? old|born|turns?|turned)\b",
    "wedding": r"\b(?:weddings?|wed|marr\w+)\b",
    "address": r"\b(?:address|lives?|living|street|road|avenue)\b",
    "home": r"\b(?:home|lives?|living|house|flat|apartment)\b",
    "phone": r"\b(?:phone|number|mobile|cell)\b",
    "email": r"\b(?:e-?mail|@)",
    "breed": r"\b(?:breed|retriever|terrier|spaniel|poodle|collie|shepherd|labrador|"
    r"beagle|bulldog|husky|dachshund|pug|siamese|persian|tabby|maine coon|mix)\b",
    "color": r"\b(?:colou?r|red|blue|green|yellow|black|white|grey|gray|silver|brown|"
    r"orange|purple|pink)\b",
    "colour": r"\b(?:colou?r|red|blue|green|yellow|black|white|grey|gray|silver|brown|"
    r"orange|purple|pink)\b",
}
"""How a segment says an attribute without its word (besides the word itself)."""

_SEGMENT = re.compile(r"(?<=[.!?;])\s+|\s+-\s+|\n")
_WORD = re.compile(r"[a-z][a-z'’-]*")


@dataclass(frozen=True)
class Miss:
    """Why memory does not answer a question (the focus check's verdict)."""

    focus: Focus
    missing: str
    """`owner` or `attribute`."""

    def reason(self) -> str:
        if self.missing == "owner":
            return f"no recalled line mentions your {self.focus.owner_word}"
        return (
            f"no recalled line about your {self.focus.owner_word} says its {self.focus.attribute}"
        )


def _mentions_owner(words: list[str], owner: str) -> bool:
    for w in words:
        w = w.strip("'’-")
        for form in (w, w.removesuffix("'s").removesuffix("’s"), w.removesuffix("s")):
            kind = RELATIONS.get(form)
            if kind is not None and (kind == owner or owner in BROADER.get(kind, ())):
                return True
    return False


def _words_for(owner: str) -> str:
    """A regex alternation of every word for `owner` (mum, mom, mother…)."""
    words = [w for w, kind in RELATIONS.items() if kind == owner or owner in BROADER.get(kind, ())]
    return "(?:" + "|".join(sorted((re.escape(w) for w in words), key=len, reverse=True)) + ")"


def _names_of(segment: str, owner: str) -> set[str]:
    """Names the segment gives the owner ("my sister Ana", "Ana is my sister",
    "my cat is named Pixel"): later lines may speak of it by name only. `owner`:
    the canonical word (`Focus.owner`); the segment may use any word for it."""
    owner = _words_for(owner)
    found: set[str] = set()
    for pattern in (
        rf"(?i:\b{owner}s?)\W{{1,3}}([A-Z][a-z]+)",
        rf"\b([A-Z][a-z]+)\W+(?i:(?:is|was)\s+my\s+(?:\w+\s+)?{owner})",
        rf"(?i:\b{owner}s?\b[^.]{{0,20}}\b(?:named|called)\s+)([A-Z][a-z]+)",
    ):
        found.update(m.group(1) for m in re.finditer(pattern, segment))
    return found - _NOT_NAMES


_NOT_NAMES = frozenset(
    [
        "I",
        "My",
        "The",
        "A",
        "An",
        "He",
        "She",
        "It",
        "They",
        "We",
        "You",
        "His",
        "Her",
        "Their",
        "Our",
        "Your",
        "Is",
        "Was",
    ]
)


def _stem_match(attribute: str, words: list[str]) -> bool:
    need = max(4, len(attribute) - 3)
    for w in words:
        n = 0
        for a, b in zip(attribute, w, strict=False):
            if a != b:
                break
            n += 1
        if n >= need or (n == len(w) and n >= 4 and attribute.startswith(w)):
            return True
    return False


def _says_attribute(segment: str, words: list[str], focus: Focus) -> bool:
    attr = focus.attribute
    assert attr is not None
    if attr in RELATIONS:
        return _mentions_owner(words, RELATIONS[attr])
    if _stem_match(attr, words):
        return True
    pattern = EVIDENCE.get(attr)
    if pattern and re.search(pattern, segment, re.IGNORECASE):
        return True
    if attr == "name":  # "my sister Ana", "Ana is my sister", "Sister: Ana", "is Mr. Okafor"
        owner = _words_for(focus.owner)
        if re.search(rf"(?i:\b{owner}s?\s+(?:is|was))\s+[A-Z]", segment):
            return True
        return bool(_names_of(segment, focus.owner))
    return False


def segments(memory: str) -> list[str]:
    """The memory text cut into sentences and bullets (one fact each, mostly)."""
    return [s for s in _SEGMENT.split(memory) if s.strip()]


def check(question: QueryFacts | str, memory: str) -> Miss | None:
    """Why `memory` (the context lines the answer would see) cannot answer the
    question (its `QueryFacts`, whose `focus` was read once with the message; or
    its text), or None when the check finds nothing missing or does not apply."""
    focus = question.focus if isinstance(question, QueryFacts) else focus_of(question)
    if focus is None:
        return None
    about: list[tuple[str, list[str]]] = []
    rest: list[tuple[str, list[str]]] = []
    names: set[str] = set()
    for seg in segments(memory):
        words = _WORD.findall(seg.lower())
        if _mentions_owner(words, focus.owner):
            about.append((seg, words))
            names |= _names_of(seg, focus.owner)
        else:
            rest.append((seg, words))
    if not about:
        return Miss(focus, "owner")
    for seg, words in rest:  # "Karim's birthday is…" after "my husband Karim"
        if any(re.search(rf"\b{re.escape(n)}\b", seg) for n in names):
            about.append((seg, words))
    if focus.attribute is None:
        return None
    if any(_says_attribute(seg, words, focus) for seg, words in about):
        return None
    return Miss(focus, "attribute")
