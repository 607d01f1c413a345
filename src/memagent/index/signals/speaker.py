"""Speaker: a memory said by a person the question names ("What did Caroline
realize…" — Caroline's lines) gains `speaker_boost` of its score."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from memagent.index.query import QueryFacts
from memagent.index.signals.base import NOTHING, Signal
from memagent.index.sqlite import Row
from memagent.index.why import Boost


class Speaker(Signal):
    """A memory said by a person the question names."""

    name: ClassVar[str] = "speaker"
    speaker_boost: float = Field(default=0.5, ge=0)
    """A memory said by a person the query names gains this share of its score."""

    def active(self, facts: QueryFacts) -> bool:
        return self.speaker_boost > 0

    def factor(self, row: Row, facts: QueryFacts) -> tuple[float, Boost | None]:
        if row.speaker and row.speaker.lower() in facts.word_set:
            words = f"said by {row.speaker}, whom the question names"
            return 1.0 + self.speaker_boost, Boost(self.name, self.speaker_boost, words)
        return NOTHING
