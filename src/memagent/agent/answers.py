"""Finishing a reply from memory: a relative date the model copied is put back in
the date it meant.

Memory lines reach the model with each relative date resolved beside it
("We had a picnic last week [the week before 6 July 2023]", `memagent.agent.dates`),
yet a small model asked "When did Caroline have a picnic?" often copies the words
("last week") rather than the bracket. Said back a day or a year later, "last week"
is wrong. `resolve_copied_dates(reply, question, memory)` replaces each relative
phrase of the reply by what it meant in the memory line it came from: the phrase
must occur there with its bracket. When lines resolve the same phrase differently,
the line sharing most words with the question and the reply decides; when none
does, the phrase is left as it was. A bracket the model copied with its phrase
("last week [the week before 6 July 2023]") is reduced to the date.

Why it carries beyond one benchmark: it only ever substitutes a date that memory
itself computed for the very words the model used; it never invents a date.
"""

from __future__ import annotations

import re

from memagent.agent.dates import RELATIVE_PHRASE
from memagent.index import query_terms

_ANNOTATED = re.compile(rf"(?P<phrase>{RELATIVE_PHRASE.pattern})\s\[(?P<meaning>[^\]\n]{{1,80}})\]",
                        re.IGNORECASE)  # fmt: skip


def _words(text: str) -> set[str]:
    return set(query_terms(text))


def _norm(phrase: str) -> str:
    return " ".join(phrase.lower().split())


def resolve_copied_dates(reply: str, question: str, memory: str) -> str:
    """`reply` with each relative date it copied from `memory` replaced by the date
    it meant there (module doc); unchanged when memory resolves none of them."""
    if not reply or not memory or "[" not in memory:
        return reply
    reply = _ANNOTATED.sub(lambda m: m.group("meaning"), reply)
    found: dict[str, list[tuple[str, str]]] = {}
    for line in memory.splitlines():
        for m in _ANNOTATED.finditer(line):
            found.setdefault(_norm(m.group("phrase")), []).append((m.group("meaning"), line))
    if not found:
        return reply
    cue = _words(question) | _words(reply)

    def sub(m: re.Match[str]) -> str:
        options = found.get(_norm(m.group(0)))
        if not options:
            return m.group(0)
        meanings = {meaning for meaning, _ in options}
        if len(meanings) == 1:
            meaning = options[0][0]
        else:
            ranked = sorted(options, key=lambda o: len(cue & _words(o[1])), reverse=True)
            if len(cue & _words(ranked[0][1])) == len(cue & _words(ranked[1][1])):
                return m.group(0)  # no line is clearly the one it came from
            meaning = ranked[0][0]
        if m.group(0)[:1].isupper() and meaning[:1].islower():
            meaning = meaning[0].upper() + meaning[1:]
        return meaning

    return RELATIVE_PHRASE.sub(sub, reply)
