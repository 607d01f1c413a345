"""Not a fact: a memory whose source marks it as a question or command put to
the assistant, or as the assistant's own reply (`memagent.index.roles.non_fact`),
keeps only `non_fact_weight` of its score: it stays findable (the conversation
record) but never outranks what a person actually stated. A question about the
assistant's own words ("remind me what you suggested") lifts the penalty from
the assistant's lines: there they are the evidence."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from memagent.index.query import QueryFacts
from memagent.index.roles import non_fact, said_by_assistant
from memagent.index.signals.base import NOTHING, Signal
from memagent.index.sqlite import Row
from memagent.index.why import Boost


class NotAFact(Signal):
    """Questions, commands and the assistant's replies rank below what people stated."""

    name: ClassVar[str] = "non_fact"
    non_fact_weight: float = Field(default=0.05, ge=0, le=1)
    """A question or command to the assistant, or its reply, keeps this share of its
    score (1: no penalty)."""

    def active(self, facts: QueryFacts) -> bool:
        return self.non_fact_weight < 1

    def factor(self, row: Row, facts: QueryFacts) -> tuple[float, Boost | None]:
        if not non_fact(row.source):
            return NOTHING
        if facts.about_assistant and said_by_assistant(row.source):
            words = "the assistant's own words, which the question asks about"
            return 1.0, Boost("about_assistant", 1.0, words)
        words = "a question or reply in a chat, not something a person stated: ranked lower"
        return self.non_fact_weight, Boost(self.name, self.non_fact_weight, words)
