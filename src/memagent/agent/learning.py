"""Profile learning that never holds the user up, and never loses a statement.

Learning profile facts from a statement (the profile pipeline: two model calls)
takes seconds on a capable model but minutes on the embedded 1.5B model on two
busy cores. So each statement to learn from is first written to the home's state
(`state/learn/<stamp>-<id>.json`), then learned by the agent's background
learner (its own worker thread: recall and the chunk writes that recall waits
for never queue behind it), and its document removed once learned.
`Agent.close(learn_wait=…)` waits at most that long (leaving `with Agent(...)`:
`EXIT_LEARN_WAIT_S`, and it says how many are left): what is still unlearned
stays on disk, and the next agent on the same home (a later `chat` or `ask`)
picks it up when it starts and learns it in the background.
The statement itself is stored as a chunk at once, whatever happens to learning.

Learning a statement twice (a process stopped after applying, before removing
the document) is harmless: profile appends are de-duplicated by item key.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime

from memagent.core import MemagentError
from memagent.core.state import State

FOLDER = "learn"
MAX_PENDING_READ = 1000
"""At most this many pending statements are picked up by one agent."""
EXIT_LEARN_WAIT_S = 5.0
"""How long leaving `with Agent(...)` waits for profile learning still running."""


def left_note(left: int) -> str:
    """What a bounded exit says about the statements it left to learn."""
    return (
        f"memagent: {left} statement(s) not learned into the profile yet; kept in the "
        "memory home (state/learn/) and learned by the next agent on this home"
    )


@dataclass(frozen=True)
class PendingStatement:
    name: str
    message: str
    conversation_id: str
    turn: int


class PendingLearning:
    """The statements waiting to be learned from, as state documents."""

    def __init__(self, state: State, actor: str = "agent") -> None:
        self.state = state
        self.actor = actor

    def add(self, message: str, conversation_id: str, turn: int) -> PendingStatement:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
        name = f"{FOLDER}/{stamp}-{uuid.uuid4().hex[:8]}.json"
        doc = {"message": message, "conversation_id": conversation_id, "turn": turn}
        self.state.write(
            name, json.dumps(doc, ensure_ascii=False).encode(), actor=self.actor, op="learn_queue"
        )
        return PendingStatement(name, message, conversation_id, turn)

    def done(self, item: PendingStatement) -> None:
        # another agent on this home may have learned it and removed it first
        with contextlib.suppress(MemagentError):
            self.state.delete(item.name, actor=self.actor, op="learn_done")

    def pending(self) -> list[PendingStatement]:
        """The statements not learned yet, oldest first (unreadable documents skipped)."""
        out: list[PendingStatement] = []
        for name in self.state.names(FOLDER)[:MAX_PENDING_READ]:
            try:
                doc = json.loads(self.state.read(name))
                message = doc["message"]
                if not isinstance(message, str) or not message.strip():
                    continue
                conv = str(doc.get("conversation_id") or "")
                turn = doc.get("turn") if isinstance(doc.get("turn"), int) else 0
                out.append(PendingStatement(name, message, conv, turn))
            except (MemagentError, ValueError, KeyError, TypeError):
                continue
        return out
