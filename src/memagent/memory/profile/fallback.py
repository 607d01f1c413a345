"""Facts read by looser patterns, only where the model read nothing.

The small model sometimes lists nothing for a sentence that plainly states
something about the writer: a habit with a time ("I rarely sleep before 2am"),
a liking ("I love a good flat white"), an event ahead ("My sister's wedding is
in June"). These patterns are looser than `rules` (their kind and value are a
best reading, not a fixed phrase), so they fill in only for a group of
sentences the model read no fact in; the planner then treats what they read
like any other fact (grounding, whose fact it is, kind fixes).
"""

from __future__ import annotations

import re

from memagent.memory.profile.facts import MAX_VALUE_CHARS, Extracted
from memagent.memory.profile.kinds import EVENT_WORDS

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
    r"^\s*(?:\w+,?\s+){0,3}?I (?:really |absolutely |just |also )?(?:love|like|enjoy|adore) "
    r"(?:a good |a nice |the |my )?(?!(?:it|that|this|them|you|him|her|to|when|how)\b)"
    r"([a-z][\w' -]{1,40}?)(?=[,.;!]|$| and | but | so | because )"
)
_WHEN = (
    r"\b(on|in|next|this|tomorrow|tonight|at \d|january|february|march|april|may|june|july|"
    r"august|september|october|november|december|monday|tuesday|wednesday|thursday|friday|"
    r"saturday|sunday|\d{1,2}(st|nd|rd|th))\b"
)
_EVENT_AHEAD = re.compile(
    rf"^\s*(?:[Mm]y|[Oo]ur|I have an?|I've got an?|I'm going to an?|we have an?)\s+"
    rf"((?:[\w'-]+ ){{0,2}}?(?:{EVENT_WORDS}))\b(?=.*{_WHEN})",
    re.IGNORECASE,
)


def _clip(text: str) -> str:
    return " ".join(text.split())[:MAX_VALUE_CHARS].strip(" ,.;!")


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
    return out
