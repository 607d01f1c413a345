"""What one agent turn takes and gives, and the small rules around it: the
message check, the honest fallback reply, which prompt set a model gets, and what
an `Agent` is given: its memory home (opened, or created), its model and its
settings (`AgentConfig`, with keyword overrides)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict

from pydantic import ValidationError

from memagent.agent.memory import MAX_MESSAGE_CHARS, MemorySource, count_tokens
from memagent.agent.recalled import MemorySourceJson
from memagent.agent.traces import StepRecord
from memagent.core import InvalidInput, MemagentError, MemoryHome
from memagent.core.config import AgentConfig
from memagent.llm import LLM, Message, Usage

if TYPE_CHECKING:
    from memagent.agent.prompts import PromptSet
    from memagent.agent.traces import Trace
    from memagent.memory.profile import ProfileStore

FALLBACK_PERSONA = "You are a helpful assistant with a durable memory of the user."
TextCallback = Callable[[str], None]


class UsageJson(TypedDict):
    prompt_tokens: int
    completion_tokens: int


class TurnJson(TypedDict):
    """`TurnResult.to_json` (what `memagent ask --json` prints, and `/v1/chat` returns)."""

    reply: str
    ok: bool
    conversation_id: str
    steps: int
    usage: UsageJson
    seconds: float
    memory_tokens: int
    memory_sources: list[MemorySourceJson]
    error: str | None
    p_grounded: float | None
    refused_by: str | None
    check_tokens: int
    check_seconds: float


@dataclass
class TurnResult:
    """What one user turn produced."""

    reply: str
    ok: bool
    """True when the model gave the reply; False for the agent's honest fallback."""
    conversation_id: str
    steps: int
    usage: Usage = field(default_factory=Usage)
    seconds: float = 0.0
    memory_tokens: int = 0
    memory_sources: list[MemorySource] = field(default_factory=list)
    error: str | None = None
    p_grounded: float | None = None
    """The grounding check's P(yes) that the recalled lines answer the message
    (`memagent.agent.verify`); None when it did not run or gave no verdict."""
    refused_by: str | None = None
    """What made the reply "I don't have that in memory." without the model's
    answer: `focus` (`memagent.agent.focus`), `verify` (the grounding check),
    `contrast` (its contrast probe) or `attribution`; None otherwise."""
    check_tokens: int = 0
    """Tokens the grounding check and contrast probe cost (prompt + completion; in `usage` too)."""
    check_seconds: float = 0.0
    """Seconds the honesty checks took (the focus check's and the model's)."""

    def to_json(self) -> TurnJson:
        return {
            "reply": self.reply,
            "ok": self.ok,
            "conversation_id": self.conversation_id,
            "steps": self.steps,
            "usage": {
                "prompt_tokens": self.usage.prompt_tokens,
                "completion_tokens": self.usage.completion_tokens,
            },
            "seconds": round(self.seconds, 3),
            "memory_tokens": self.memory_tokens,
            "memory_sources": [s.to_json() for s in self.memory_sources],
            "error": self.error,
            "p_grounded": self.p_grounded,
            "refused_by": self.refused_by,
            "check_tokens": self.check_tokens,
            "check_seconds": round(self.check_seconds, 3),
        }


def check_message(message: object) -> str:
    if not isinstance(message, str):
        raise InvalidInput("the message must be text")
    if "\x00" in message:
        raise InvalidInput("the message contains a NUL character")
    if not message.strip():
        raise InvalidInput("the message is empty")
    if len(message) > MAX_MESSAGE_CHARS:
        raise InvalidInput(
            f"the message is {len(message)} characters; the limit is {MAX_MESSAGE_CHARS}"
        )
    return message.strip()


class AgentOverrides(TypedDict, total=False):
    """The `AgentConfig` fields an `Agent` takes as keywords (`Agent(home,
    mode="python")`): the ones callers set per agent; any other goes in `config=`."""

    mode: str | None  # `json` or `python`, checked by the config model
    max_steps: int | None
    planning_interval: int | None
    learn_profile: bool | None
    prompt_set: str | None
    retrieval: bool | None
    structured: bool | None


def agent_config(base: AgentConfig, overrides: Mapping[str, object]) -> AgentConfig:
    """`base` with `overrides` (an override of None keeps the base's value), validated
    as a whole: also a `base` made by `model_copy(update=…)`, which pydantic does not
    check. `InvalidInput`, in one line, for an unknown setting or a bad value."""
    unknown = sorted(set(overrides) - set(AgentOverrides.__annotations__))
    if unknown:
        known = ", ".join(AgentOverrides.__annotations__)
        raise InvalidInput(f"unknown agent setting {unknown[0]!r}: one of {known}, or config=")
    given = {k: v for k, v in overrides.items() if v is not None}
    try:
        return AgentConfig.model_validate(base.model_dump() | given)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise InvalidInput(f"agent setting {where}: {first['msg']}") from None


def open_model(home: MemoryHome, llm: LLM | str | None, model: str | None) -> LLM:
    """The agent's model: an `LLM`, or one loaded by its spec (`llm` or `model`, not
    both; neither: the home's `llm.model`)."""
    if llm is not None and model is not None:
        raise InvalidInput("give the model once: llm or model, not both")
    spec = model if model is not None else llm
    if spec is None or isinstance(spec, str):
        from memagent.llm import load_llm

        return load_llm(spec or home.config.llm.model, home.config.llm)
    return spec


def open_or_create_home(home: MemoryHome | str | os.PathLike[str] | None) -> MemoryHome:
    """The home `home` names (a folder; None: `$MEMAGENT_HOME`, else `~/.memagent`),
    created and initialised when it has no vault yet; a `MemoryHome` must exist."""
    if isinstance(home, MemoryHome):
        return home.require()
    if home is not None and not isinstance(home, str | os.PathLike):
        raise InvalidInput(f"home must be a folder path or a MemoryHome, not {type(home).__name__}")
    mh = MemoryHome.open(home)
    if not mh.exists:
        from memagent.setup import init_home

        mh.check_folder()
        init_home(mh)
    return mh.require()


def default_prompt_set(model_name: str, mode: str) -> str:
    """`instruct` for the embedded instruct model, `small` for the tiny base model
    (both in JSON mode: reply only), else the mode's full set."""
    if mode == "json" and model_name == "embedded":
        return "instruct"
    if mode == "json" and model_name.startswith("embedded:"):
        return "small"
    return mode


def learn_note(store: ProfileStore, llm: LLM, message: str) -> str:
    from memagent.memory.profile import LearnFailed, learn

    if not store.names():
        return "profile: no resources"
    try:
        res = learn(store, llm, message)
    except LearnFailed as exc:
        return f"profile: {exc}"
    except MemagentError as exc:
        return f"profile: {exc}"
    return f"profile: {len(res.facts)} facts, {len(res.operations)} operations"


def add_usage(total: Usage, part: Usage) -> None:
    total.prompt_tokens += part.prompt_tokens
    total.completion_tokens += part.completion_tokens
    total.cached_tokens += part.cached_tokens


def add_estimated_usage(total: Usage, messages: list[Message], completion_tokens: int) -> None:
    """Count a call whose backend reports no usage (a streamed reply, a yes/no
    probe): its prompt estimated as the context budget counts tokens."""
    total.prompt_tokens += sum(count_tokens(m.content) for m in messages)
    total.completion_tokens += completion_tokens


def as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def honest_reply(error: str | None, failed_write: bool, max_steps: int) -> str:
    why = (error or "no valid response").strip()
    if len(why) > 400:
        why = why[:400] + "…"
    if failed_write:
        return f"I couldn't save that because {why}"
    if error and error.startswith("the model failed"):
        return f"I couldn't answer: {why}"
    return f"I couldn't finish that within {max_steps} steps: {why}"


def write_plan(
    llm: LLM,
    prompts: PromptSet,
    base: list[Message],
    work: list[Message],
    step_no: int,
    usage: Usage,
    trace: Trace,
    *,
    structured: bool,
    max_tokens: int,
    temperature: float,
) -> None:
    """The planning step (`planning_interval`): the model writes or updates a short
    plan, which joins `work` as its own turn; a model failure is recorded in the
    trace and the turn goes on without a plan."""
    ask = Message(role="user", content=prompts.render("planning", step=step_no))
    record = StepRecord(step_no, "planning")
    trace.steps.append(record)
    schema = {
        "type": "object",
        "properties": {"think": {"type": "string", "minLength": 1, "maxLength": 1500}},
        "required": ["think"],
        "additionalProperties": False,
    }
    try:
        res = llm.chat(
            [*base, *work, ask],
            response_schema=schema if structured else None,
            max_tokens=max_tokens,
            temperature=temperature,
        )
    except MemagentError as exc:
        record.error = f"the model failed: {exc}"
        return
    add_usage(usage, res.usage)
    plan = res.text.strip()
    try:
        obj = json.loads(plan)
        if isinstance(obj, dict) and isinstance(obj.get("think"), str):
            plan = obj["think"].strip()
    except json.JSONDecodeError:
        pass
    record.plan = plan
    if plan:
        work.append(ask)
        think = (
            json.dumps({"think": plan}, ensure_ascii=False)
            if structured
            else f"<think>{plan}</think>"
        )
        work.append(Message(role="assistant", content=think))
