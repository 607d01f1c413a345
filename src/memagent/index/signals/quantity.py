"""Answer type: a question asking for a quantity ("how many…", "how much…", "how
old…"; `memagent.index.answers`) favours, by `quantity_boost`, the memories that
state one (a number, an amount, a count in words).

A pool-level hook rather than a per-memory factor, for its cost: telling whether
a memory states a quantity reads its text, so only the memories that could still
reach the ranked window are read. The window-th best score can only rise when
scores are lifted, so a memory below it even when lifted never enters; applied
last, as a factor like the others, it changes nothing else. A memory another
signal ranked down (not a fact) is not lifted.
"""

from __future__ import annotations

import heapq
from typing import ClassVar

from pydantic import Field

from memagent.index.answers import states_quantity
from memagent.index.query import QueryFacts
from memagent.index.signals.base import Scored, Signal
from memagent.index.why import Boost


class Quantity(Signal):
    """A memory stating a quantity, for a question asking for one."""

    name: ClassVar[str] = "quantity"
    quantity_boost: float = Field(default=0.5, ge=0)
    """A question asking for a quantity lifts the memories stating one by this share."""

    def active(self, facts: QueryFacts) -> bool:
        return self.quantity_boost > 0 and facts.quantity

    def rescore(self, scored: Scored, facts: QueryFacts) -> None:
        final, lift = scored.score, 1.0 + self.quantity_boost
        window = scored.window
        floor = heapq.nlargest(window, final.values())[-1] if len(final) >= window else 0.0
        words = "states a number, and the question asks for one"
        boost = Boost(self.name, self.quantity_boost, words)
        for key, value in final.items():
            if key in scored.lowered:
                continue
            if value * lift >= floor and states_quantity(scored.rows[key].content):
                final[key] = value * lift
                scored.boosts.setdefault(key, []).append(boost)
