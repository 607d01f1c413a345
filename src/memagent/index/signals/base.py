"""What a recall signal is: `Signal`, and `Scored`, the pool its hook sees.

A signal is a pydantic model whose fields are its knobs (they appear in
`SearchParams` and in `config.toml`'s `[search]` table by their names, with
their defaults and bounds) and whose methods say what it does to a memory:

- `active(facts)`: whether it can change anything for this query (a boost of
  0, a question naming no time); an inactive signal is skipped for the query.
- `factor(row, facts) -> (factor, boost)`: the memory's score is multiplied by
  `factor`; `boost` (None when nothing applies) names it in `why.boosts` with
  the reason in words. Per memory, in the order of `SIGNALS`.
- `rescore(scored, facts)`: a hook on the whole pool after every factor, for a
  signal that must see the other scores (the answer type reads only the
  memories that could still reach the ranked window, `quantity`).

Every factor is a product, so signals commute up to rounding; they run in the
list's order so that scores stay bit-for-bit what they were.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from memagent.index.query import QueryFacts
from memagent.index.sqlite import Row
from memagent.index.why import Boost

NOTHING: tuple[float, Boost | None] = (1.0, None)
"""What `factor` returns for a memory the signal leaves alone."""


@dataclass
class Scored:
    """The pool after the per-memory factors, as a `rescore` hook sees it."""

    score: dict[int, float]
    """Each memory's score so far (in the pool's order: best fused score first);
    a hook may change it."""
    rows: Mapping[int, Row]
    window: int
    """How many of the best scores are ranked further (the top k, or the head of
    the list diversity reorders): a memory below the window-th score never shows."""
    lowered: set[int] = field(default_factory=set)
    """Memories a signal ranked down (a factor under 1: not a fact)."""
    boosts: dict[int, list[Boost]] = field(default_factory=dict)
    """The boosts each memory got so far, in order (what its `why` will show)."""

    def add(self, key: int, boost: Boost) -> None:
        self.boosts.setdefault(key, []).append(boost)


class Signal(BaseModel):
    """One recall signal (module doc). Subclasses set `name` and override `factor`,
    `rescore` or both; their fields are their knobs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: ClassVar[str]

    def active(self, facts: QueryFacts) -> bool:
        """Whether this signal can change any score for the query."""
        return True

    def factor(self, row: Row, facts: QueryFacts) -> tuple[float, Boost | None]:
        """The factor of `row`'s score and why (`NOTHING` when it does not apply)."""
        return NOTHING

    def rescore(self, scored: Scored, facts: QueryFacts) -> None:
        """Change scores with the whole pool in view (after every factor)."""
        return None

    @classmethod
    def per_row(cls) -> bool:
        return cls.factor is not Signal.factor

    @classmethod
    def per_pool(cls) -> bool:
        return cls.rescore is not Signal.rescore
