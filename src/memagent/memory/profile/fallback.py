"""Facts read by looser patterns, only where the model read nothing.

The small model sometimes lists nothing for a sentence that plainly states
something about the writer: a habit with a time ("I rarely sleep before 2am"),
a liking ("I love a good flat white"), an event ahead ("My sister's wedding is
in June"), a thing that is (not) "my thing" ("Horror movies are not my
thing"). These patterns are looser than `rules` (their kind and value are a
best reading, not a fixed phrase), so they fill in only for a group of
sentences the model read no fact in; the planner then treats what they read
like any other fact (grounding, whose fact it is, kind fixes).
"""

from __future__ import annotations

import re

from memagent.memory.profile.fact_schema import MAX_VALUE_CHARS, Extracted
from memagent.memory.profile.occasions import EVENT_WORDS

_CLOCK = re.compile(
    r"\b\d{1,2}(?::\d{2})?\s*(?:am|pm)\b|\b\d{1,2}:\d{2}\b|\bo'clock\b|\bnoon\b|\bmidnight\b",
    re.IGNORECASE,
)
_HABIT = re.compile(
    r"\b(usually|always|every|each|rarely|never|normally|typically|most (days|nights|mornings)|"
    r"on (week)?days|weekends?|mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|"
    r"sundays|once a|twice a)\b",
    re.IGNORECASE,
)
_DAYS = re.compile(
    r"\b(week(day|end)s?|(mon|tues|wednes|thurs|fri|satur|sun)days?)\b", re.IGNORECASE
)
_SUBJECT_I = re.compile(r"^\s*(?:\w+,?\s+){0,3}?I\b")
_LIKE = re.compile(
    r"^\s*(?:\w+,?\s+){0,3}?I(?:'m| am)? (?:really |absolutely |just |also )?"
    r"(?:love|like|enjoy|adore|(?:a |such a )?(?:big |huge )?fan of) "
    r"(?:a good |a nice |the |my )?(?!(?:it|that|this|them|you|him|her|to|when|how)\b)"
    r"([a-z][\w' -]{1,40}?)(?=[,.;!]|$| and | but | so | because )"
)
_MONTH_NAMES = (
    "january|february|march|april|may|june|july|august|september|october|november|december"
)
_DAY_NAMES = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_WHEN = (
    rf"\b(?:(?:on|in|next|this|by|until|till) (?:the )?(?:{_MONTH_NAMES}|{_DAY_NAMES}|\d|"
    r"a |an |one|two|three|four|five|six|few|couple|week|month|year|spring|summer|autumn|"
    rf"fall|winter|weekend)|tomorrow|tonight|at \d|{_MONTH_NAMES}|{_DAY_NAMES}|"
    r"\d{1,2}(?:st|nd|rd|th))\b"
)
"""A time ahead ("in June", "on the 22nd", "next week"), not any "in" ("in Nairobi")."""
_EVENT_AHEAD = re.compile(
    r"^\s*(?:[Mm]y|[Oo]ur|(?:I|[Ww]e)(?: have| have got|'ve got|'re having| are having) an?|"
    r"I'm going to an?)\s+"
    rf"((?:[\w'-]+ ){{0,2}}?(?:{EVENT_WORDS}))\b(?=.*{_WHEN})",
    re.IGNORECASE,
)


MY_THING = re.compile(
    r"^\W*(?!(?:it|that|this|which|what|there)\b)([a-z][a-z -]{2,40}?) (?:is|are) "
    r"(not |never )?(?:really |totally |absolutely |just )?(?:not )?my "
    r"(?:thing|jam|therapy|happy place|cup of tea|favou?rite(?: way| thing| hobby)?)\b",
    re.IGNORECASE,
)
""""Horror movies are not my thing", "Gardening is my therapy": a taste said of a thing."""


def _clip(text: str) -> str:
    return " ".join(text.split())[:MAX_VALUE_CHARS].strip(" ,.;!")


_INTO = re.compile(
    r"\b(?:I'?m|I am|been|getting|got)\s+(?:(?:really|very|super|so|well|totally|big "
    r"time|quite|kind of|kinda)\s+)*into\s+(?!(?:my|the|a|an|it|that|this|bed|work|town|"
    r"trouble|shape|debt)\b)([a-z][\w' -]{2,40}?)(?=[,.;!]|$| and | but | now\b| lately\b| "
    r"these days\b| instead\b| at the moment\b| any ?more\b| at all\b)",
    re.IGNORECASE,
)
_NOT_INTO = re.compile(
    r"^\W*(?:I'?m |I am )?not (?:really |that |too |very |super |big )?into "
    r"(?!(?:my|the|it|that|this)\b)([a-z][\w' -]{2,40}?)"
    r"(?=[,.;!]|$| and | but | any ?more\b| at all\b)",
    re.IGNORECASE,
)
""""been getting really into old westerns", "not really into podcasts": a taste, in chat words."""


def fallback_facts(sentences: list[str]) -> list[Extracted]:
    """What the loose patterns read in `sentences` (module doc)."""
    out: list[Extracted] = []
    for s in sentences:
        if _SUBJECT_I.match(s) and _HABIT.search(s) and (_CLOCK.search(s) or _DAYS.search(s)):
            out.append(Extracted(kind="routine", value=_clip(s)))
            continue
        event = _EVENT_AHEAD.search(s)
        if event is not None:
            out.append(Extracted(kind="plan", value=_clip(event.group(1))))
            continue
        like = _LIKE.search(s)
        if like is not None:
            out.append(Extracted(kind="like", value=_clip(like.group(1))))
            continue
        thing = MY_THING.search(s)
        if thing is not None:
            negative = thing.group(2) or re.search(r"\bnot my\b", thing.group(0), re.I)
            kind = "dislike" if negative else "like"
            out.append(Extracted(kind=kind, value=_clip(thing.group(1))))
            continue
        out.extend(
            Extracted(kind="dislike", value=_clip(m.group(1))) for m in _NOT_INTO.finditer(s)
        )
        out.extend(
            Extracted(kind="like", value=_clip(m.group(1)))
            for m in _INTO.finditer(s)
            if not re.search(r"\bnot\b", s[max(0, m.start() - 12) : m.start()], re.I)
        )
    return out
