"""What passes between the three steps of a turn (`Agent.prepare` → `Agent.act` →
`Agent.finish`, see `memagent.agent.loop`), so each step can run, and be tested,
on its own: `PreparedTurn` is what the first step read and built, `Acted` what the
model's steps came to.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from memagent.agent.honesty import Checked
from memagent.agent.memory import MemoryContext
from memagent.agent.traces import Trace
from memagent.agent.voice import stable_prefix
from memagent.index import QueryFacts
from memagent.llm import Message, Usage


@dataclass
class PreparedTurn:
    """One message read, its memory in context and its prompt built (`Agent.prepare`).

    `base` is the prompt's stable prefix (system prompt, examples, history), `work`
    this turn's messages (the user turn, then each step and its result as `act`
    adds them). `checked` is the honesty checks' verdict: a refusal there is the
    reply, and no model step runs. `usage` counts every model call of the turn."""

    facts: QueryFacts
    """The one reading of the message (its text is `message`)."""
    asked: datetime | None
    """When the question is asked (`as_of`); None: now."""
    trace: Trace
    context: MemoryContext
    base: list[Message]
    work: list[Message]
    checked: Checked
    usage: Usage = field(default_factory=Usage)
    started: float = 0.0
    """`time.perf_counter()` when the turn began."""

    @property
    def message(self) -> str:
        return self.facts.text

    @property
    def messages(self) -> list[Message]:
        """What the model reads for its next step."""
        return self.base + self.work

    def shape(self, text: str) -> str:
        """A reply as it speaks to the user, also while it streams: "my sister"
        copied from the user's words becomes "your sister" (`voice.stable_prefix`)."""
        return stable_prefix(text.lstrip(), self.message)


@dataclass
class Acted:
    """What the model's steps came to (`Agent.act`).

    `reply` is the model's reply, or the checks' refusal (None: no valid reply came;
    `finish` then says why, from `error` and `failed_write`). `emitted` is what
    was streamed to the caller already; `seen` the steps that ran, so a repeated one
    is refused."""

    reply: str | None = None
    steps: int = 0
    error: str | None = None
    """The last step's problem (a model failure, an invalid step, a failed batch or run)."""
    failed_write: bool = False
    """A failed step held a write (undone), so the fallback says it could not save."""
    emitted: str = ""
    seen: set[str] = field(default_factory=set)
