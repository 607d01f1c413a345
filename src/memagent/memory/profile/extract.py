"""Learning profile facts from one statement, in small steps a 1.5B model gets right.

1. `statements.screen`: sentences that cannot hold a fact about the writer
   (questions, requests, greetings, the assistant's voice, hypotheticals,
   injection, pasted data) are dropped mechanically; nothing left, no model call.
2. The gate: a constrained yes/no (`{"facts": "yes"}`: does this state a
   lasting fact about the writer?), asked with the same prompt prefix as step
   3, so the extraction call that follows reuses the prefix llama.cpp already
   has in its cache.
3. The extraction: JSON constrained by `fact_schema.extraction_schema` (enums and
   bounded strings only, which llama.cpp's grammar supports in full): each
   fact's kind, value and, for a pet or relative, name. The model is made to list
   one (`Reading.must_read`) unless the group tells of an event, is said of no one,
   or the embedding gate (`factgate`, no model call) scores it under its cut.
   Where it reads nothing said in the statement (and no rule read anything),
   `fallback.fallback_facts` (looser patterns) fills in.
4. `rules.rule_facts`: facts fixed phrasings state plainly (a pet's name, "I
   live in", "I'm allergic to X", "I don't eat X"), merged ahead of the model's.
5. `facts.plan`: grounding, kind fixes, negation, correction and expiry, all
   mechanical, into operations the handler applies as one batch.
6. `revise` asks whether a held line the statement names is over; `valuekind`
   whether each value the model read is a thing of its list's kind ("horror films"
   is no food); `factcheck` (off by default) whether each new line is true of the
   writer. Each is one short yes/no a line; a broken verdict changes nothing.
   A habit the plan moves to another day or time is written as its held line with
   the new day (`moves`), not as the whole clause.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal

from pydantic import ValidationError

from memagent.core import InvalidInput
from memagent.llm import LLM, LLMError, Message
from memagent.llm.yesno import verdict_schema
from memagent.memory.profile._prompts import load_prompt, render
from memagent.memory.profile.errors import LearnFailed, describe_error
from memagent.memory.profile.events import episodic
from memagent.memory.profile.fact_schema import Extracted, Extraction, extraction_schema
from memagent.memory.profile.factcheck import check
from memagent.memory.profile.factgate import fact_probability, shipped_weights
from memagent.memory.profile.facts import (
    grounded,
    plan,
)
from memagent.memory.profile.fallback import fallback_facts
from memagent.memory.profile.handler import AppliedOps, apply_operations
from memagent.memory.profile.item_keys import match_key
from memagent.memory.profile.kinds import NAME_AFTER
from memagent.memory.profile.moves import moved
from memagent.memory.profile.operations import AnyOp
from memagent.memory.profile.revise import END_AT, REWRITE_AT, merged, revise
from memagent.memory.profile.rules import merge, rule_facts
from memagent.memory.profile.statements import screen
from memagent.memory.profile.store import ProfileStore
from memagent.memory.profile.subjects import about_no_one
from memagent.memory.profile.valuekind import check as check_kinds

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
    gate_p: list[float] = field(default_factory=list)
    """The gate's P(yes) for each group of sentences it was asked about."""
    embedded_p: list[float] = field(default_factory=list)
    """The embedding gate's P(a fact) for each group it was asked about (`factgate`)."""
    revised: list[tuple[str, float]] = field(default_factory=list)
    """Stored lines asked about (`revise`) and their P(ended)."""
    checked: list[tuple[str, float]] = field(default_factory=list)
    """New lines asked about and their P(yes): of a value of its list's kind (`valuekind`),
    then true of the writer (`factcheck`)."""
    rewrites: list[tuple[str, str]] = field(default_factory=list)
    """Stored lines the statement changed a detail of, and the line written in place of
    each (`revise.rewritten`)."""

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
            "rewrites": [{"before": b, "now": n} for b, n in self.rewrites],
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
    return Message(role="user", content=render(spec.gate if name == "gate" else spec.user,
                                               statement=statement))  # fmt: skip


def gate_messages(statement: str) -> list[Message]:
    return [*_prefix(), _ask("gate", statement)]


def extract_messages(statement: str) -> list[Message]:
    return [*_prefix(), _ask("user", statement)]


GATE_SCHEMA: dict[str, Any] = verdict_schema("facts")
"""The gate's reply, `{"facts": "yes"}` or `{"facts": "no"}`: a handful of tokens."""


@dataclass(frozen=True)
class Reading:
    """How far the model is held to reading something.

    `must_read`: the extraction lists at least one fact (a grammar with
    `minItems: 1`) when the gate's P(yes) is at least this; 0.0 always (no gate
    call), None never (the model may list nothing). `skip_below`: no extraction
    at all when P(yes) is under this (0.0: never skipped). A backend that gives no
    yes/no probability is read as if the gate were not asked: the model may list
    nothing."""

    must_read: float | None = None
    skip_below: float = 0.0
    spare_episodic: bool = True
    """A group that tells of an event or a passing state (`events.episodic`) is
    never made to list a fact: the model may read nothing in "I had a burger"."""
    end_at: float | None = END_AT
    """A stored line the statement may end (`revise`) is removed when the model's
    P(ended) is at least this; None: the model is not asked."""

    keep_at: float | None = None
    """A new line the plan would write is kept only when the model's P(yes) that it
    is true of the writer is at least this (`factcheck`); None (the default: on the
    embedded model it drops about as many good lines as junk): not asked."""
    check_kinds: bool = True
    """A new line holding a value the model read is kept only when the model
    says the value is a thing of its list's kind (`valuekind`: "horror films" is
    not a food); False: not asked."""
    embedding_gate: bool = True
    """A group the embedding gate (`factgate`) gives a P(a fact) under its cut is not
    made to list a fact (the model may still list one); False, or no embeddings
    installed: not asked."""
    rewrite: bool = True
    """A stored line the statement names, with a P(ended) of at least
    `revise.REWRITE_AT`, is asked what it says now ("upped my sertraline to 100mg"),
    and that line, if it passes `revise.checked_rewrite`, is written in its place; a
    habit the plan moves is written as its held line with the new day or time
    (`moves`). False: neither, and only `end_at` removes a line."""

    @property
    def asks_gate(self) -> bool:
        return self.skip_below > 0.0 or self.must_read not in (None, 0.0)


DEFAULT_READING = Reading(must_read=0.0, spare_episodic=True)
"""Measured on the bench (docs/concepts/profile.md): a 1.5B model left to decide
lists no fact for many a plain statement in new wording ("I run a small bakery");
made to list one, it reads them, and what it lists that is not in the statement,
not the writer's or not a fact of its kind is dropped by `facts.plan`. The gate's
P(yes) did not tell facts from non-facts on the bench (0.40-0.83 for both), so it
is not asked; an event or passing state ("I had a burger") is left to the model."""


def forceable(group: list[str]) -> bool:
    """Whether the model may be made to list a fact for `group` (sentences read
    together): not when one of them tells of an event or passing state
    (`events.episodic`), nor when none of them is said of the writer
    (`subjects.about_no_one`: "The kids next door have a new puppy"). A model
    held to list a fact in such lines lists the event, the mood or the other
    person's fact as the writer's; left free, it lists one only where it reads one.
    A sentence that names a pet or person ("The family tortoise is called Shelby")
    is read as the planning reads a pet or relative: the writer's."""
    if any(episodic(s) for s in group):
        return False
    return not all(about_no_one(s) and not NAME_AFTER.search(s) for s in group)


def gate_probability(llm: LLM, statement: str) -> float | None:
    """P(yes) that `statement` states a lasting fact about its writer, from the
    first token's probabilities (`memagent.llm.yesno`); None when the backend
    cannot say (no such method, or no yes/no among its likely first tokens)."""
    judge = getattr(llm, "yes_probability", None)
    if not callable(judge):
        return None
    try:
        verdict = judge(gate_messages(statement))
    except LLMError:
        return None
    p = getattr(verdict, "p_yes", verdict)
    return float(p) if isinstance(p, int | float) and 0.0 <= p <= 1.0 else None


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


def read_facts(llm: LLM, statement: str, *, at_least_one: bool = False) -> list[Extracted]:
    """The facts the model reads in `statement` (`at_least_one`: it must list one);
    a reply that does not fit the schema (a backend that ignores it) is
    `LearnFailed`, and nothing is written."""
    reply = llm.chat(
        extract_messages(statement),
        response_schema=extraction_schema(min_facts=1 if at_least_one else 0),
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


def worth_learning(message: str) -> bool:
    """Whether `message` may teach the profile anything: it is within the size
    `learn_statement` takes and the mechanical screen keeps one of its sentences.
    A question, thanks or small talk is not worth queueing for learning: the
    screen would drop it without a model call, and queued behind a slow model it
    only keeps the queue from draining."""
    if not isinstance(message, str) or not message.strip():
        return False
    return len(message) <= MAX_STATEMENT_CHARS and bool(screen(message).kept)


def learn_statement(
    store: ProfileStore,
    llm: LLM,
    message: str,
    *,
    today: date | None = None,
    reading: Reading | None = None,
    source: str | None = None,
) -> StatementLearned:
    """Learn from one statement the user made on `today` (default: the store's
    today); apply what it says as one batch. `reading`: how far the model is held
    to reading something (`Reading`; default `DEFAULT_READING`). Raises
    `InvalidInput` for an empty or oversized statement (nothing written); a
    statement with no fact writes nothing."""
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
        return StatementLearned(message, [], [], empty, skipped=why, dropped=screened.dropped)
    calls = 0
    facts: list[Extracted] = []
    dropped = list(screened.dropped)
    policy = reading or DEFAULT_READING
    gate_p: list[float] = []
    embedded_p: list[float] = []
    for group in _groups(screened.kept):
        text = " ".join(group)
        p = gate_probability(llm, text) if policy.asks_gate else None
        if p is not None:
            calls += 1
            gate_p.append(p)
            if p < policy.skip_below:
                dropped.append((text[:200], f"the gate: P(a fact) {p:.2f}"))
                continue
        must = policy.must_read == 0.0 or (
            policy.must_read is not None and p is not None and p >= policy.must_read
        )
        if must and policy.spare_episodic and not forceable(group):
            must = False
        gate = shipped_weights() if must and policy.embedding_gate else None
        fact_p = fact_probability(group, gate) if gate is not None else None
        if gate is not None and fact_p is not None:
            embedded_p.append(fact_p)
            must = fact_p >= gate.unforce_below
        read = read_facts(llm, text, at_least_one=must)
        calls += 1
        usable = [f for f in read if grounded(f.value, text)]
        facts.extend(usable or ([] if rule_facts(group, day) else fallback_facts(group)))
    ruled = rule_facts(screened.kept, day)
    ruled_keys = {match_key(f.value) for f in ruled}  # "Dark chocolate" read by rule too
    model_read = {f.value for f in facts if match_key(f.value) not in ruled_keys}
    facts = merge(ruled, facts)
    known: dict[tuple[str, str, str], float | None] = {}
    lines: dict[tuple[str, str, str], str | None] = {}
    vouched: dict[str, float | None] = {}
    kinds_known: dict[tuple[str, str], float | None] = {}
    for _attempt in (1, 2):  # planned outside the lock: re-planned once if it changed
        resources = store.load_all()
        planned = plan(facts, screened.kept, resources, day)
        operations = planned.operations
        revised: list[tuple[str, float]] = []
        rewrites: list[tuple[str, str]] = []
        if policy.end_at is not None:
            revision = revise(
                llm,
                screened.kept,
                resources,
                operations,
                day,
                end_at=policy.end_at,
                known=known,
                rewrite_at=REWRITE_AT if policy.rewrite else None,
                rewrites_known=lines,
            )
            calls += revision.calls
            operations, revised = merged(operations, revision), revision.asked
            rewrites = revision.rewrites
        if policy.rewrite:
            moves = moved(llm, screened.kept, resources, operations, day, known=lines)
            calls += moves.calls
            operations, rewrites = merged(operations, moves), [*rewrites, *moves.rewrites]
        checked: list[tuple[str, float]] = []
        if policy.check_kinds and operations and model_read:
            typed = check_kinds(
                llm,
                screened.kept,
                operations,
                resources,
                day,
                read=model_read,
                known=kinds_known,
            )
            calls += typed.calls
            operations, checked = typed.operations, typed.asked
            planned.dropped.extend((t, "the check: not a thing of its kind") for t in typed.dropped)
        if policy.keep_at is not None and operations:
            verdict = check(
                llm,
                screened.kept,
                operations,
                resources,
                day,
                keep_at=policy.keep_at,
                known=vouched,
            )
            calls += verdict.calls
            operations, checked = verdict.operations, [*checked, *verdict.asked]
            planned.dropped.extend(
                (t, "the check: not true of the writer") for t in verdict.dropped
            )
        if not operations:
            dropped.extend(planned.dropped)
            why = "nothing new" if facts else "no facts"
            return StatementLearned(
                message,
                planned.facts,
                [],
                empty,
                llm_calls=calls,
                skipped=why,
                dropped=dropped,
                gate_p=gate_p,
                embedded_p=embedded_p,
                revised=revised,
                checked=checked,
            )
        result = apply_operations(store, operations, op="learn", source=(source or message)[:200])
        if result.ok:
            break
    dropped.extend(planned.dropped)
    return StatementLearned(
        message,
        planned.facts,
        operations,
        result,
        llm_calls=calls,
        dropped=dropped,
        gate_p=gate_p,
        embedded_p=embedded_p,
        revised=revised,
        checked=checked,
        rewrites=rewrites,
    )
