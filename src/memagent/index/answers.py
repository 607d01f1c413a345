"""What kind of answer a question wants, and which memories can give it.

A question asking for a quantity ("how many fish…", "how much did I spend…",
"how old was I…", "how often…", "what percentage…") is answered by a memory
that states one: a number, an amount of money, an age, a count in words ("ten
neon tetras", "I just turned 32", "I paid $500"). Matching the answer's type to
the question's is a standard step of question answering (answer-type
detection); here it is a soft boost of the memories that state a quantity
(`SearchParams.quantity_boost`), never a filter.

A span of time between two moments ("how many days ago…", "how many weeks
passed between…", "how long did I use it before…") is left alone: its answer
comes from *when* the memories were said (their timestamps, see `temporal`),
not from a number in their words.
"""

from __future__ import annotations

import re

# Longer questions than this are not scanned (a query is at most 4,000
# characters, see `query.MAX_QUERY_CHARS`; the cues sit in the question's start).
_SCAN_CHARS = 4000

_QUANTITY = re.compile(
    r"\bhow\s+(?:many|much|old|long|far|often|tall|heavy)\b"
    r"|\bwhat\s+(?:percentage|percent|number|age|time)\b"
    r"|\bnumber\s+of\b",
    re.IGNORECASE,
)
_UNITS = r"(?:seconds?|minutes?|hours?|days?|nights?|weeks?|months?|years?|decades?)"
# A span between two moments: "how long / how many days …" and, later in the same
# clause, "ago", "since", "between"…; or "after / before / within how long".
_SPAN = re.compile(r"\bhow\s+(?:long|many\s+" + _UNITS + r")\b", re.IGNORECASE)
_SPAN_CUE = re.compile(
    r"\b(?:ago|since|passed|elapsed|between|before|after|until)\b", re.IGNORECASE
)
_SPAN_FIRST = re.compile(r"\b(?:after|before|within)\s+how\s+(?:long|many)\b", re.IGNORECASE)
_STOP = re.compile(r"[?.!\n]")
_NUMBERS_IN_WORDS = (
    "one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy "
    "eighty ninety hundred thousand million billion dozen twice thrice half couple"
)
_NUMBER_WORDS = frozenset(_NUMBERS_IN_WORDS.split())
# A digit or a currency or percent sign; else a number in words. Two simple scans
# (a character class, then the lower-cased words against a set) are several times
# faster than one regex with the words as alternatives, which matters for a pool
# of long memories.
_FIGURE = re.compile(r"[\d$€£¥%]")
_WORD = re.compile(r"[a-z]+")


def asks_quantity(query: str) -> bool:
    """True when `query` asks how many, how much, how old, how long, how often…
    — but not for the time elapsed between two moments (see the module)."""
    head = query[:_SCAN_CHARS]
    return _QUANTITY.search(head) is not None and not _asks_span(head)


def _asks_span(head: str) -> bool:
    """Whether `head` asks for the time between two moments: a cue between a "how
    long" and the end of its clause (the next `?`, `.`, `!` or line break after it;
    the "how long" itself may span a line break). Only the first "how long" of a
    clause is read on (any later one has fewer cues after it), so each clause is
    read once and a hostile query repeating "how long" costs linear time (a single
    regex with a gap between the two parts retried the gap from every "how long",
    ~40 ms for 4,000 characters)."""
    if _SPAN_FIRST.search(head) is not None:
        return True
    stops = [m.start() for m in _STOP.finditer(head)]
    stops.append(len(head))
    i = 0
    clause_end = -1
    for how in _SPAN.finditer(head):
        if how.end() <= clause_end:
            continue  # in the clause already read
        while stops[i] < how.end():
            i += 1
        clause_end = stops[i]
        if _SPAN_CUE.search(head, how.end(), clause_end) is not None:
            return True
    return False


def states_quantity(text: str) -> bool:
    """True when `text` states a quantity: a digit, a currency or percent sign,
    or a number in words."""
    if _FIGURE.search(text) is not None:
        return True
    return not _NUMBER_WORDS.isdisjoint(_WORD.findall(text.lower()))
