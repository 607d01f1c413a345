"""The part of a long memory line that bears on the question.

A context line is cut to a few hundred characters so the memory fits its token
budget. Cut at the head, a long chat turn ("Thanks for the tips! … By the way,
I've been using my Fitbit Charge 3 for 9 months now …") loses the one sentence
the question is about. `excerpt(text, question, limit)` keeps instead the
sentence sharing most of the question's words, then its neighbours while they
fit, and marks each cut with "…". A line that fits, or that shares no word with
the question, is cut at the head as before.

Measured: on the 200-question LoCoMo dev sample no context changed (its turns are
short; every model call of the run was a cache hit of the run without it). On the
LongMemEval dev slice, 19 of the 99 turns that hold an answer are longer than the
cut; the kept text holds more of the gold answer's words for 2 of them and fewer
for none (word coverage 0.27 -> 0.33). The reason it carries to a user's memory:
long turns (a pasted email, an assistant's long reply) are where a head cut loses
the fact, and it only chooses which of the line's own sentences to show.
"""

from __future__ import annotations

import re

from memagent.index import query_terms

_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+|$)")
ELLIPSIS = "…"


def _stems(text: str) -> set[str]:
    return {t[:5] for t in query_terms(text)}


def excerpt(text: str, question: str, limit: int) -> str:
    """At most `limit` characters of `text` (whitespace already collapsed): the
    head when it fits or nothing matches, else the best-matching sentences."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    want = _stems(question)
    spans = [(m.start(), m.end()) for m in _SENTENCE.finditer(text) if m.group(0).strip()]
    if not want or len(spans) < 2:
        return head
    scores = [len(want & _stems(text[a:b])) for a, b in spans]
    best = max(range(len(spans)), key=lambda i: (scores[i], -i))
    if scores[best] == 0 or spans[best][1] <= limit:
        return head  # nothing matches, or the head already holds the best sentence
    lo = hi = best
    room = limit - 2 * (len(ELLIPSIS) + 1)
    if spans[best][1] - spans[best][0] > room:
        a = spans[best][0]
        return f"{ELLIPSIS} {text[a : a + room].strip()} {ELLIPSIS}"
    while True:
        grew = False
        for j in (hi + 1, lo - 1):
            if 0 <= j < len(spans):
                a, b = spans[min(lo, j)][0], spans[max(hi, j)][1]
                if b - a <= room:
                    lo, hi, grew = min(lo, j), max(hi, j), True
        if not grew:
            break
    body = text[spans[lo][0] : spans[hi][1]].strip()
    before = ELLIPSIS + " " if spans[lo][0] > 0 else ""
    after = " " + ELLIPSIS if spans[hi][1] < len(text.rstrip()) else ""
    return f"{before}{body}{after}"
