"""Learning profile facts from one statement, in small steps a 1.5B model gets right.

1. `statements.screen`: sentences that cannot hold a fact about the writer
   (questions, requests, greetings, the assistant's voice, hypotheticals,
   injection, pasted data) are dropped mechanically; nothing left, no model call.
2. The gate: a constrained yes/no (`{"facts": "yes"}`: does this state a
   lasting fact about the writer?), asked with the same prompt prefix as step
   3, so the extraction call that follows reuses the prefix llama.cpp already
   has in its cache.
3. The extraction: JSON constrained by `facts.extraction_schema` (enums and
   bounded strings only, which llama.cpp's grammar supports in full): each
   fact's kind, value and, for a pet or relative, name. Where it reads nothing,
   `fallback.fallback_facts` (looser patterns) fills in.
4. `rules.rule_facts`: facts fixed phrasings state plainly (a pet's name, "I
   live in", "I'm allergic to X", "I don't eat X"), merged ahead of the model's.
5. `facts.plan`: grounding, kind fixes, negation, correction and expiry, all
   mechanical, into operations the handler applies as one batch.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal

from pydantic import ValidationError

from memagent.core import InvalidInput
from memagent.llm import LLM, Message
from memagent.memory.profile._prompts import load_prompt
from memagent.memory.profile.errors import LearnFailed, describe_error
from memagent.memory.profile.facts import Extracted, Extraction, extraction_schema, plan
from memagent.memory.profile.fallback import fallback_facts
from memagent.memory.profile.handler import AppliedOps, apply_operations
from memagent.memory.profile.operations import AnyOp
from memagent.memory.profile.rules import merge, rule_facts
from memagent.memory.profile.statements import screen
from memagent.memory.profile.store import ProfileStore

MAX_STATEMENT_CHARS = 8000
MAX_MODEL_CHARS = 600
"""The kept sentences go to the model in groups of at most this many characters."""
MAX_GROUPS = 4
EXTRACT_MAX_TOKENS = 160


@dataclass
class StatementLearned:
    """What learning one statement did: the facts read, the operations applied
    (or why none), and how many model calls it took."""

    message: str
    facts: list[Extracted]
    operations: list[AnyOp]
    result: AppliedOps
    llm_calls: int = 0
    skipped: str | None = None
    dropped: list[tuple[str, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.result.ok

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "facts": [f.model_dump() for f in self.facts],
            "operations": [op.model_dump(mode="json", exclude_none=True) for op in self.operations],
            **{k: v for k, v in self.result.to_json().items() if k != "ok"},
            "llm_calls": self.llm_calls,
            "skipped": self.skipped,
            "dropped": [{"text": t, "why": w} for t, w in self.dropped],
        }


def _prefix() -> list[Message]:
    spec = load_prompt("extract")
    out = [Message(role="system", content=spec.system.strip())]
    for example in spec.examples:
        out.append(Message(role="user", content=f"Statement: {example.user.strip()}"))
        out.append(Message(role="assistant", content=json.dumps(example.assistant)))
    return out


def _ask(name: Literal["gate", "user"], statement: str) -> Message:
    spec = load_prompt("extract")
    text = (spec.gate if name == "gate" else spec.user).replace("{{ statement }}", statement)
    return Message(role="user", content=text.strip())


def gate_messages(statement: str) -> list[Message]:
    return [*_prefix(), _ask("gate", statement)]


def extract_messages(statement: str) -> list[Message]:
    return [*_prefix(), _ask("user", statement)]


GATE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"facts": {"type": "string", "enum": ["yes", "no"]}},
    "required": ["facts"],
    "additionalProperties": False,
}
"""The gate's reply, `{"facts": "yes"}` or `{"facts": "no"}`: a handful of tokens."""


def holds_a_fact(llm: LLM, statement: str) -> bool:
    """The gate: does `statement` state a lasting fact about its writer? Anything
    but a clear "yes" is no; a reply that is not a JSON object is `LearnFailed`."""
    reply = llm.chat(
        gate_messages(statement), response_schema=GATE_SCHEMA, max_tokens=8, temperature=0.0
    )
    text = reply.text.strip().removeprefix("```json").removeprefix("```").removesuffix("```")
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise LearnFailed(f"the gate: the model's reply does not fit the schema: {text[:80]!r}")
    return data.get("facts") == "yes"


def read_facts(llm: LLM, statement: str) -> list[Extracted]:
    """The facts the model reads in `statement`; a reply that does not fit the
    schema (a backend that ignores it) is `LearnFailed`, and nothing is written."""
    reply = llm.chat(
        extract_messages(statement),
        response_schema=extraction_schema(),
        max_tokens=EXTRACT_MAX_TOKENS,
        temperature=0.0,
    )
    text = reply.text.strip().removeprefix("```json").removeprefix("```").removesuffix("```")
    try:
        return Extraction.model_validate_json(text).facts
    except ValidationError as exc:
        raise LearnFailed(
            f"the extraction: the model's reply does not fit the schema: {describe_error(exc)}"
        ) from exc


def _groups(kept: list[str]) -> list[list[str]]:
    groups: list[list[str]] = []
    for sentence in kept:
        if groups and len(" ".join([*groups[-1], sentence])) <= MAX_MODEL_CHARS:
            groups[-1].append(sentence)
        else:
            groups.append([sentence])
    return groups[:MAX_GROUPS]


def learn_statement(
    store: ProfileStore,
    llm: LLM,
    message: str,
    *,
    today: date | None = None,
    gate: bool = False,
    source: str | None = None,
) -> StatementLearned:
    """Learn from one statement the user made on `today` (default: the store's
    today); apply what it says as one batch. `gate`: ask the yes/no gate before
    the extraction (off by default: on the embedded model it cost a call and
    turned away plain facts such as "I don't eat red meat"; bench.profile_learn
    --gate). Raises `InvalidInput` for an empty or oversized statement (nothing
    written); a statement with no fact writes nothing."""
    if not isinstance(message, str) or not message.strip():
        raise InvalidInput("nothing to learn from: the message is empty")
    if len(message) > MAX_STATEMENT_CHARS:
        raise InvalidInput(
            f"message is {len(message)} characters; the limit is {MAX_STATEMENT_CHARS}"
        )
    day = today or store.today()
    screened = screen(message)
    empty = AppliedOps(True, [])
    if not screened.kept:
        why = "prompt injection" if screened.injection else "no statement about the user"
        return StatementLearned(message, [], [], empty, 0, why, screened.dropped)
    calls = 0
    facts: list[Extracted] = []
    dropped = list(screened.dropped)
    for group in _groups(screened.kept):
        text = " ".join(group)
        if gate:
            calls += 1
            if not holds_a_fact(llm, text):
                dropped.append((text[:200], "the gate: no lasting fact"))
                continue
        read = read_facts(llm, text)
        calls += 1
        facts.extend(read or fallback_facts(group))
    facts = merge(rule_facts(screened.kept), facts)
    for _attempt in (1, 2):  # planned outside the lock: re-planned once if it changed
        planned = plan(facts, screened.kept, store.load_all(), day)
        if not planned.operations:
            dropped.extend(planned.dropped)
            why = "nothing new" if facts else "no facts"
            return StatementLearned(message, planned.facts, [], empty, calls, why, dropped)
        result = apply_operations(
            store, planned.operations, op="learn", source=(source or message)[:200]
        )
        if result.ok:
            break
    dropped.extend(planned.dropped)
    return StatementLearned(
        message, planned.facts, planned.operations, result, calls, None, dropped
    )
