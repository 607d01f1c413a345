"""Time: a memory said within a time the question names ("in May 2023", "last
summer", "two weeks ago"; `memagent.index.temporal`, relative to when it is
asked) gains `temporal_boost` of its score: a soft filter, so a wrong reading
of the phrase costs a little ranking, never a missing answer."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from memagent.index.query import QueryFacts
from memagent.index.signals.base import NOTHING, Signal
from memagent.index.sqlite import Row
from memagent.index.why import Boost


class Time(Signal):
    """A memory said within a time the question names."""

    name: ClassVar[str] = "time"
    temporal_boost: float = Field(default=1.0, ge=0)
    """A time the query names multiplies what was said then by 1 + this (a soft filter)."""

    def active(self, facts: QueryFacts) -> bool:
        return self.temporal_boost > 0 and bool(facts.time_ranges)

    def factor(self, row: Row, facts: QueryFacts) -> tuple[float, Boost | None]:
        if row.created > 0:
            for r in facts.time_ranges:
                if r.contains(row.created):
                    words = f"said within the time the question names ({r.phrase})"
                    return 1.0 + self.temporal_boost, Boost(self.name, self.temporal_boost, words)
        return NOTHING
