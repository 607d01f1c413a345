"""Access: a memory recalled (opened) often before gains `access_weight` ×
ln(1 + times) of its score. Off by default: what was looked at often is not
more likely the answer to a new question."""

from __future__ import annotations

import math
from typing import ClassVar

from pydantic import Field

from memagent.index.query import QueryFacts
from memagent.index.signals.base import NOTHING, Signal
from memagent.index.sqlite import Row
from memagent.index.why import Boost


class Access(Signal):
    """A memory opened often before ranks higher (off by default)."""

    name: ClassVar[str] = "access"
    access_weight: float = Field(default=0.0, ge=0)
    """A memory opened n times before gains this × ln(1 + n) of its score (0: off)."""

    def active(self, facts: QueryFacts) -> bool:
        return self.access_weight > 0

    def factor(self, row: Row, facts: QueryFacts) -> tuple[float, Boost | None]:
        if row.access_count <= 0:
            return NOTHING
        share = self.access_weight * math.log1p(row.access_count)
        words = f"opened {row.access_count} times before"
        return 1.0 + share, Boost(self.name, round(share, 6), words)
