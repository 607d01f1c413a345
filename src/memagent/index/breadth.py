"""Questions that need several memories, usually from several conversations.

"How many fun runs did I miss?", "How much did I spend in total?", "Which did
I set up first, the thermostat or the router?", "How much older is my grandma
than me?": counting, adding up, comparing and ordering combine facts said at
different times, so the answer's evidence is spread over conversations. For
such a question recall fills the head of its list from distinct conversations
(`SearchParams.session_head`; see `diversity`): ranked by relevance alone, the
best-matching conversation takes every slot and the other facts fall below the
top k.

The cues are plain English words of counting, totals, coverage, comparison,
order and change; a question without them ("what did I name my cat?") keeps
the plain ranking. A false positive costs little: the head then holds the best
turn of a few conversations instead of a few turns of one.
"""

from __future__ import annotations

import re

_CUES = (
    # counting and totals
    r"how\s+(?:many|much|often)|number\s+of|total|in\s+all|altogether|combined|sum|add(?:ed)?\s+up"
    # coverage
    r"|both|each|every|all\s+(?:the|of|my)|different"
    # comparison
    r"|than|compared?|difference|differ|percentage"
    # order and time relations
    r"|order|earliest|before|after|since"
    r"|(?:first|earlier|later|sooner|more|less|fewer)\b[^?.!\n]{0,80}?\bor"
    # change over time
    r"|change[ds]?|switch(?:ed)?|increase[ds]?|decrease[ds]?|still|anymore|currently"
)
_BREADTH = re.compile(r"\b(?:" + _CUES + r")\b", re.IGNORECASE)


_LIST = re.compile(
    r"^\s*(?:in\s+)?(?:what|which)\s+(?:(?:kinds?|types?|sorts?)\s+of\s+)?(?:[\w'+-]+\s+){0,2}?"
    r"(?:[a-z][\w'-]*[^s\W']s|[a-z][\w-]*ies|people|children)\s+"
    r"(?:has|have|does|do|did|is|are|was|were|had)\b"
    r"|^\s*(?:what|which|who)\s+are\b",
    re.IGNORECASE,
)


def asks_for_list(query: str) -> bool:
    """True when `query` asks for several things: a plural noun asked of someone
    ("What books has Melanie read?", "Which cities…", "What are…"). The agent gives
    such a question more recalled lines (`agent.memory.LIST_K_FACTOR`). Recall's own
    ranking ignores it: as a `wants_many` cue (a head of distinct conversations) it
    moved LoCoMo dev recall@5 from 0.711 to 0.709 (multi-hop 0.398 to 0.396)."""
    return _LIST.search(query[:1000]) is not None


def wants_many(query: str) -> bool:
    """True when `query` counts, adds up, compares, orders or asks what changed."""
    return _BREADTH.search(query) is not None
