"""The capable-model pipeline: switchboard → tag router → memory planner → handler.

`learn` itself runs the small-model path (`memagent.memory.profile.extract`):
a mechanical screen, a yes/no gate, a constrained extraction and mechanical
planning. `learn_with_planner` is the original design, where the model also
writes the operations; it suits a capable model and is kept for that.

Each stage is a function with typed input and output. Both LLM stages ask for
schema-constrained output (`response_schema=` the JSON Schema of their pydantic
reply model), validate the reply, and on an invalid one give the model one
repair round with the validation error; a second invalid reply is a clean
`LearnFailed`. The planner's operations are also dry-run against the current
files, so an operation naming an unknown path or a missing item counts as
invalid output and gets the same single repair round.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Annotated, Any, Required, TypedDict, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from memagent.core import InvalidInput, NotFound
from memagent.llm import LLM, Message
from memagent.memory.profile._prompts import load_prompt, render
from memagent.memory.profile.errors import LearnFailed, describe_error
from memagent.memory.profile.extract import Reading, StatementLearned, learn_statement
from memagent.memory.profile.handler import AppliedOps, apply_operations
from memagent.memory.profile.models import Resource
from memagent.memory.profile.operations import AnyOp, OperationBatch
from memagent.memory.profile.router import Route, route
from memagent.memory.profile.store import ProfileStore

MAX_MESSAGE_CHARS = 8000
MAX_FACTS = 20
_FENCE = re.compile(r"^```[a-zA-Z]*\s*\n(.*?)\n?```\s*$", re.DOTALL)

T = TypeVar("T", bound=BaseModel)


class Fact(BaseModel):
    model_config = ConfigDict(extra="forbid")

    fact: Annotated[str, StringConstraints(min_length=1, max_length=500)]
    tags: list[Annotated[str, StringConstraints(min_length=1, max_length=64)]] = Field(
        min_length=1, max_length=8
    )
    temporary: bool = False


class SwitchboardOutput(BaseModel):
    """What the switchboard returns: the facts in one user message, with tags."""

    model_config = ConfigDict(extra="forbid")

    facts: list[Fact] = Field(max_length=MAX_FACTS)


@dataclass(frozen=True)
class RoutedFact:
    fact: Fact
    routes: list[Route]


@dataclass(frozen=True)
class PlannerInput:
    facts: list[RoutedFact]
    resources: Mapping[str, Resource]
    today: date


@dataclass
class LearnResult:
    message: str
    facts: list[Fact]
    routed: list[RoutedFact]
    operations: list[AnyOp]
    result: AppliedOps
    llm_calls: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.result.ok

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "facts": [f.model_dump() for f in self.facts],
            "routes": [
                {"fact": r.fact.fact, "files": [x.file for x in r.routes]} for r in self.routed
            ],
            "operations": [op.model_dump(mode="json", exclude_none=True) for op in self.operations],
            **{k: v for k, v in self.result.to_json().items() if k != "ok"},
            "llm_calls": self.llm_calls,
        }


def _messages(name: str, **values: Any) -> list[Message]:
    spec = load_prompt(name)
    out = [Message(role="system", content=spec.system.strip())]
    for example in spec.examples:
        out.append(Message(role="user", content=example.user.strip()))
        out.append(Message(role="assistant", content=json.dumps(example.assistant)))
    out.append(Message(role="user", content=render(spec.user, **values)))
    return out


def _strip_fence(text: str) -> str:
    text = text.strip()
    m = _FENCE.match(text)
    return m.group(1).strip() if m else text


@dataclass
class _Calls:
    count: int = 0


def ask_structured(
    llm: LLM,
    messages: list[Message],
    model: type[T],
    *,
    stage: str,
    schema: dict[str, Any] | None = None,
    check: Callable[[T], None] | None = None,
    max_tokens: int = 1024,
    calls: _Calls | None = None,
) -> T:
    """Ask for JSON matching `model`; one repair round; else `LearnFailed`."""
    schema = schema or model.model_json_schema()
    convo = list(messages)
    for attempt in (1, 2):
        reply = llm.chat(convo, response_schema=schema, max_tokens=max_tokens, temperature=0.0)
        if calls is not None:
            calls.count += 1
        try:
            parsed = model.model_validate_json(_strip_fence(reply.text))
            if check is not None:
                check(parsed)
            return parsed
        except (ValidationError, InvalidInput) as exc:
            error = describe_error(exc)
            if attempt == 2:
                raise LearnFailed(
                    f"{stage}: the model's reply was invalid after one repair round: {error}"
                ) from exc
            convo.append(Message(role="assistant", content=reply.text))
            repair = render(load_prompt("repair").user, error=error)
            convo.append(Message(role="user", content=repair))
    raise AssertionError("unreachable")


# -- stage 1: switchboard ------------------------------------------------------------
def switchboard(llm: LLM, message: str, *, calls: _Calls | None = None) -> SwitchboardOutput:
    """The facts worth remembering in one user message, each with tags."""
    return ask_structured(
        llm,
        _messages("switchboard", message=message),
        SwitchboardOutput,
        stage="switchboard",
        calls=calls,
    )


# -- stage 2: tag router ---------------------------------------------------------------
def route_facts(facts: Sequence[Fact], resources: Mapping[str, Resource]) -> list[RoutedFact]:
    return [RoutedFact(fact, route(fact.tags, resources)) for fact in facts]


# -- stage 3: memory planner ---------------------------------------------------------
class ShownItem(TypedDict, total=False):
    item: Required[str]
    display: Required[str]
    expiry: str


class ShownFile(TypedDict):
    """What the planner is shown of one resource file."""

    description: str
    sections: dict[str, list[ShownItem]]


def planner_view(resources: Mapping[str, Resource], today: date) -> dict[str, ShownFile]:
    """What the planner sees of each routed file: description and current lists
    (expired items left out, only the fields the model may act on)."""
    view: dict[str, ShownFile] = {}
    for name, resource in resources.items():
        sections: dict[str, list[ShownItem]] = {}
        for path, items in resource.iter_lists():
            shown: list[ShownItem] = []
            for item in items:
                if item.expired(today):
                    continue
                entry: ShownItem = {"item": item.item, "display": item.display}
                if item.expiry is not None:
                    entry["expiry"] = item.expiry.isoformat()
                shown.append(entry)
            sections[path] = shown
        view[name] = {"description": resource.metadata.description, "sections": sections}
    return view


def planner_schema(resources: Mapping[str, Resource]) -> dict[str, Any]:
    """The operation-batch schema, with `file` and `path` narrowed to the routed
    files and their lists, so constrained decoding cannot invent them."""
    schema = OperationBatch.model_json_schema()
    names = sorted(resources)
    paths = sorted({p for r in resources.values() for p in r.paths()})
    for def_name in ("AppendOp", "UpdateOp", "RemoveOp"):
        props = schema["$defs"][def_name]["properties"]
        if names:
            props["file"] = {"enum": names, "title": "File", "type": "string"}
        if paths:
            props["path"] = {"enum": paths, "title": "Path", "type": "string"}
    return schema


def plan_memory(
    llm: LLM, store: ProfileStore, planner_input: PlannerInput, *, calls: _Calls | None = None
) -> OperationBatch:
    """Operations that bring the routed files in line with the facts; each batch
    the model proposes is dry-run by the handler before it is accepted."""
    allowed = set(planner_input.resources)

    def check(batch: OperationBatch) -> None:
        for i, op in enumerate(batch.operations):
            if op.file is not None and op.operation != "no_change" and op.file not in allowed:
                raise InvalidInput(
                    f"operations.{i}.file: {op.file!r} is not one of {sorted(allowed)}"
                )
        dry = apply_operations(store, batch.operations, dry_run=True)
        if not dry.ok:
            raise InvalidInput(dry.error or "the operations were rejected")

    messages = _messages(
        "planner",
        today=planner_input.today.isoformat(),
        facts=[r.fact.model_dump() for r in planner_input.facts],
        files=planner_view(planner_input.resources, planner_input.today),
    )
    return ask_structured(
        llm,
        messages,
        OperationBatch,
        stage="memory planner",
        schema=planner_schema(planner_input.resources),
        check=check,
        calls=calls,
    )


# -- the whole pipeline ----------------------------------------------------------------
def learn(
    store: ProfileStore,
    llm: LLM,
    message: str,
    *,
    today: date | None = None,
    reading: Reading | None = None,
) -> StatementLearned:
    """Learn profile facts from one user message (`extract.learn_statement`)."""
    return learn_statement(store, llm, message, today=today, reading=reading)


def learn_with_planner(store: ProfileStore, llm: LLM, message: str) -> LearnResult:
    """Run switchboard → router → planner → handler on one message and apply it."""
    if not isinstance(message, str) or not message.strip():
        raise InvalidInput("nothing to learn from: the message is empty")
    if len(message) > MAX_MESSAGE_CHARS:
        raise InvalidInput(
            f"message is {len(message)} characters; the limit is {MAX_MESSAGE_CHARS}"
        )
    calls = _Calls()
    facts = switchboard(llm, message, calls=calls).facts
    if not facts:
        return LearnResult(message, [], [], [], AppliedOps(True, []), calls.count)
    resources = store.load_all()
    routed = route_facts(facts, resources)
    chosen = {r.file: resources[r.file] for rf in routed for r in rf.routes}
    if not chosen:
        raise NotFound("no profile resources to learn into (run `memagent init`)")
    planner_input = PlannerInput(routed, chosen, store.today())
    batch = plan_memory(llm, store, planner_input, calls=calls)
    result = apply_operations(store, batch.operations, op="learn", source=message[:200])
    return LearnResult(message, facts, routed, list(batch.operations), result, calls.count)
