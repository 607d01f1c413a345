"""Which recalled sentences a reply rests on, and whose life they tell.

A small model asked about one person answers from whatever line is on the topic.
When the question names a speaker of the recalled lines ("What happened to
Caroline's son on the road trip?"), the reply's own words should come from what
that person said of themself, or from what others said about them by name. In
LoCoMo's adversarial questions the event happened to the other speaker, and the
model's reply comes from a line the named person said *to* them ("Thank goodness
your son's okay"), or from a question they asked ("What got you into running?"):
a question asks, it tells nothing about its speaker.

`support(reply, question, hits, named)` measures it mechanically: the reply's
content words that the question did not already hold (its *new* words), and the
share of them found in sentences about the named people (by `attribution`'s
rule, with a speaker's questions left out; a statement with a question tag, "…,
right?", still tells) and in sentences about others. No model call; the decision
that uses it is `memagent.agent.reply_check`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from memagent.agent.attribution import asks, split_by_subject, stem
from memagent.agent.recalled import RecalledMemory
from memagent.index import query_terms


@dataclass(frozen=True)
class Support:
    """How much of a reply's new words the recalled sentences hold."""

    words: int
    """The reply's content words not in the question (0: nothing to measure)."""
    named: float
    """Share of them in sentences about the people the question names (all
    sentences when it names none)."""
    others: float
    """Share of them in sentences about anyone else."""


_NOT_CONTENT = frozenset(["yes", "no", "likely", "maybe"])
"""Words of a reply's form (a yes/no verdict), not of what it says."""


def content_terms(text: str) -> set[str]:
    return {stem(t) for t in query_terms(text)} - _NOT_CONTENT


def _dated(hit: RecalledMemory) -> set[str]:
    """The words of the day a line was said ("8", "may", "2023"): a date in a reply
    comes from the line's date as much as from its words."""
    stamp = str(hit.created_at or "")[:10]
    try:
        day = date.fromisoformat(stamp)
    except ValueError:
        return set()
    return content_terms(f"{day.day} {day:%B %Y}")


def _names(text: str, name: str) -> bool:
    return re.search(rf"(?<![\w'])({re.escape(name)})(?!\w)", text) is not None


def support(reply: str, question: str, hits: Sequence[RecalledMemory], named: list[str]) -> Support:
    """The support of `reply` to `question` in the recalled `hits` (module doc).
    `named`: the speakers of the hits that the question names."""
    speakers_cased = {s for h in hits if (s := h.speaker)}
    speakers = {s.lower() for s in speakers_cased}
    new = content_terms(reply) - content_terms(question) - {stem(s) for s in speakers}
    if not new:
        return Support(0, 0.0, 0.0)
    about: set[str] = set()
    others: set[str] = set()
    people = set(named)
    for hit in hits:
        if not people:
            about |= content_terms(str(hit.content or "")) | _dated(hit)
            continue
        if hit.speaker in people:
            about |= _dated(hit)
        mine, theirs = split_by_subject(hit, people, speakers_cased)
        for sentence in mine:
            speaker = hit.speaker
            asked = asks(sentence) and not any(_names(sentence, n) for n in people)
            if speaker in people and asked:
                others |= content_terms(sentence)
            else:
                about |= content_terms(sentence)
        for sentence in theirs:
            others |= content_terms(sentence)
    return Support(len(new), len(new & about) / len(new), len(new & others) / len(new))
