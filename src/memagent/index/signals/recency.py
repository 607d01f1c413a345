"""Recency: a newer memory gains `recency_weight` × ½^(age / half-life) of its
score, its age counted from when the question is asked. Off by default (and in
the benchmarks): a conversation's facts do not lose truth with age."""

from __future__ import annotations

import math
from typing import ClassVar

from pydantic import Field

from memagent.index.query import QueryFacts
from memagent.index.signals.base import NOTHING, Signal
from memagent.index.sqlite import Row
from memagent.index.why import Boost


class Recency(Signal):
    """A newer memory ranks higher (off by default)."""

    name: ClassVar[str] = "recency"
    recency_weight: float = Field(default=0.0, ge=0)
    """A memory said just now gains this share of its score (0: off)."""
    recency_half_life_days: float = Field(default=30.0, gt=0)
    """...halved for every this many days of its age."""

    def active(self, facts: QueryFacts) -> bool:
        return self.recency_weight > 0

    def factor(self, row: Row, facts: QueryFacts) -> tuple[float, Boost | None]:
        if row.created <= 0:
            return NOTHING
        age_days = max(facts.now - row.created, 0.0) / 86400.0
        share = self.recency_weight * math.pow(0.5, age_days / self.recency_half_life_days)
        words = f"said recently ({age_days:.0f} days before the question)"
        return 1.0 + share, Boost(self.name, round(share, 6), words)
