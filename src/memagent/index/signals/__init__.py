"""Recall's signals: each multiplies a memory's score and says why in words.

`SIGNALS` is the list, in the order the factors apply. A new signal is one
module (a `Signal` subclass: its knobs as fields, `factor` and/or `rescore`)
and one line here: search runs it, `SearchParams` and `config.toml`'s
`[search]` table take its knobs (`memagent.index.params`), and each hit's
`why` shows its boost and the reason in words.

Three steps of the ranking are not per-memory factors and stay named stages
of `memagent.index.search.finish`, for their semantics: the neighbour share is
added to the fused score before any factor (an answer sits next to the turn
that matches; a product could not add it without changing the scores'
rounding); diversity picks the top k greedily (it orders, it does not score);
and the candidates and their fusion come before everything.
"""

from memagent.index.signals.access import Access
from memagent.index.signals.base import NOTHING, Scored, Signal
from memagent.index.signals.not_a_fact import NotAFact
from memagent.index.signals.quantity import Quantity
from memagent.index.signals.recency import Recency
from memagent.index.signals.speaker import Speaker
from memagent.index.signals.time import Time

SIGNALS: list[type[Signal]] = [
    Speaker,
    Time,
    Recency,
    Access,
    NotAFact,
    Quantity,
]

__all__ = [
    "NOTHING",
    "SIGNALS",
    "Access",
    "NotAFact",
    "Quantity",
    "Recency",
    "Scored",
    "Signal",
    "Speaker",
    "Time",
]
