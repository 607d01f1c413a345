"""Every step of every turn is traced to `state/traces/<time>-<conversation>.json`
(one file per turn, through `Storage`); `memagent trace last` shows the newest.

A trace holds what the model saw of memory (ids and token count), each step's
record (`StepRecord`: raw response, parsed parts, result or error, time), and
the reply. Large fields are cut so a trace stays under `limits.max_file_bytes`.
A saved trace is read back as the JSON document it is (`Traces.last`), so
files written by older versions load as they are.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypedDict

from memagent.agent.recalled import MemorySource, MemorySourceJson
from memagent.core import CorruptFile, MemoryHome, NotFound
from memagent.core.jsontext import JsonObject
from memagent.core.state import FileState, State

if TYPE_CHECKING:
    from memagent.agent.acting import BatchJson, BatchResult, PythonRun, PythonRunJson
    from memagent.agent.protocol import Step, StepJson

ACTOR = "agent"
_MAX_FIELD = 8000


def _cut(value: Any) -> Any:
    if isinstance(value, str) and len(value) > _MAX_FIELD:
        return value[:_MAX_FIELD] + f"… [{len(value) - _MAX_FIELD} more characters]"
    if isinstance(value, dict):
        return {k: _cut(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_cut(v) for v in value[:200]]
    return value


StepKind = Literal["model", "planning", "deep"]


class StepRecordJson(TypedDict):
    step: int
    kind: StepKind
    raw: NotRequired[str]
    seconds: NotRequired[float]
    error: NotRequired[str]
    plan: NotRequired[str]
    parsed: NotRequired[StepJson]
    result: NotRequired[BatchJson | PythonRunJson]


class GroundingJson(TypedDict, total=False):
    p_yes: float | None
    threshold: float | None
    error: str
    skipped: str


class ContrastJson(TypedDict):
    question: str
    p_yes: NotRequired[float | None]
    error: NotRequired[str]
    skipped: NotRequired[str]


class MemoryTraceJson(TypedDict):
    error: NotRequired[str]
    tokens: int
    sources: list[MemorySourceJson]
    as_of: NotRequired[str]
    chunks_unavailable: NotRequired[str]
    verify: NotRequired[GroundingJson]
    contrast: NotRequired[ContrastJson]
    refused: NotRequired[str]
    reply_check: NotRequired[str]


class TraceJson(TypedDict):
    """A saved trace (`state/traces/…json`), long fields cut."""

    conversation: str
    turn: int
    model: str
    mode: str
    message: str
    started: str
    memory: MemoryTraceJson
    steps: list[StepRecordJson]
    reply: str
    ok: bool
    seconds: float
    background: list[str]


@dataclass
class StepRecord:
    """One step of a turn: a model step (`raw` response, then an `error` or the
    `parsed` step and its `result`), a planning step (`plan` or `error`), or an
    iteration of deep recall (`raw`, then an `error` or the code's `result`)."""

    step: int
    kind: StepKind = "model"
    raw: str | None = None
    seconds: float | None = None
    error: str | None = None
    parsed: Step | None = None
    result: BatchResult | PythonRun | None = None
    plan: str | None = None

    def to_json(self) -> StepRecordJson:
        out: StepRecordJson = {"step": self.step, "kind": self.kind}
        if self.raw is not None:
            out["raw"] = self.raw
        if self.seconds is not None:
            out["seconds"] = self.seconds
        if self.error is not None:
            out["error"] = self.error
        if self.plan is not None:
            out["plan"] = self.plan
        if self.parsed is not None:
            out["parsed"] = self.parsed.to_json()
        if self.result is not None:
            out["result"] = self.result.to_json()
        return out


@dataclass
class Grounding:
    """The grounding check's verdict (`memagent.agent.verify`): P(yes) that the
    recalled lines answer the question and the threshold it met, or why it was
    `skipped`; `error` when the model gave no verdict."""

    p_yes: float | None = None
    threshold: float | None = None
    error: str | None = None
    skipped: str | None = None

    def to_json(self) -> GroundingJson:
        if self.skipped is not None:
            return {"skipped": self.skipped}
        out: GroundingJson = {"p_yes": self.p_yes, "threshold": self.threshold}
        if self.error is not None:
            out["error"] = self.error
        return out


@dataclass
class ContrastCheck:
    """The contrast probe (`memagent.agent.verify`): the `question` about the other
    speaker, and its P(yes), or why it was `skipped`."""

    question: str
    p_yes: float | None = None
    error: str | None = None
    skipped: str | None = None

    def to_json(self) -> ContrastJson:
        if self.skipped is not None:
            return {"question": self.question, "skipped": self.skipped}
        out: ContrastJson = {"question": self.question, "p_yes": self.p_yes}
        if self.error is not None:
            out["error"] = self.error
        return out


@dataclass
class MemoryTrace:
    """What a turn put in context (`tokens`, `sources`), when it was asked (`as_of`),
    what failed (`error`: recall; `chunks_unavailable`: the chunk store) and what the
    honesty checks made of it (`verify`, `contrast`, and why the reply `refused`;
    `reply_check`: what the check after the answer found in a reply already streamed)."""

    tokens: int = 0
    sources: list[MemorySource] = field(default_factory=list)
    error: str | None = None
    as_of: str | None = None
    chunks_unavailable: str | None = None
    verify: Grounding | None = None
    contrast: ContrastCheck | None = None
    refused: str | None = None
    reply_check: str | None = None

    def to_json(self) -> MemoryTraceJson:
        out: MemoryTraceJson = {
            "tokens": self.tokens,
            "sources": [s.to_json() for s in self.sources],
        }
        if self.error is not None:
            out = {"error": self.error, **out}
        if self.as_of is not None:
            out["as_of"] = self.as_of
        if self.chunks_unavailable is not None:
            out["chunks_unavailable"] = self.chunks_unavailable
        if self.verify is not None:
            out["verify"] = self.verify.to_json()
        if self.contrast is not None:
            out["contrast"] = self.contrast.to_json()
        if self.refused is not None:
            out["refused"] = self.refused
        if self.reply_check is not None:
            out["reply_check"] = self.reply_check
        return out


@dataclass
class Trace:
    conversation: str
    turn: int
    model: str
    mode: str
    message: str
    started: str = field(default_factory=lambda: datetime.now(UTC).isoformat())
    memory: MemoryTrace = field(default_factory=MemoryTrace)
    steps: list[StepRecord] = field(default_factory=list)
    reply: str = ""
    ok: bool = False
    seconds: float = 0.0
    background: list[str] = field(default_factory=list)

    def to_json(self) -> TraceJson:
        doc: TraceJson = {
            "conversation": self.conversation,
            "turn": self.turn,
            "model": self.model,
            "mode": self.mode,
            "message": self.message,
            "started": self.started,
            "memory": self.memory.to_json(),
            "steps": [s.to_json() for s in self.steps],
            "reply": self.reply,
            "ok": self.ok,
            "seconds": self.seconds,
            "background": list(self.background),
        }
        return _cut(doc)


class Traces:
    """`state` (default: the home's `state/` files; the database's state on
    PostgreSQL) holds one document per turn, `traces/<time>-<conversation>.json`."""

    def __init__(self, home: MemoryHome, state: State | None = None) -> None:
        self.home = home
        self.dir = home.layout.state / "traces"
        self.state: State = state if state is not None else FileState(home)

    def save(self, trace: Trace) -> str:
        """Store the trace; returns its name under `state/`."""
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
        name = f"traces/{stamp}-{trace.conversation}-{trace.turn:04d}.json"
        doc = trace.to_json()
        data = json.dumps(doc, ensure_ascii=False, indent=1, default=str).encode("utf-8")
        limit = self.home.config.limits.max_file_bytes
        if len(data) > limit:
            cut = {
                **doc,
                "steps": [{"note": f"{len(trace.steps)} steps cut: trace over {limit} bytes"}],
            }
            data = json.dumps(cut, ensure_ascii=False, indent=1, default=str).encode("utf-8")
        self.state.write(name, data, actor=ACTOR, op="trace")
        return name

    def names(self) -> list[str]:
        return self.state.names("traces")

    def paths(self) -> list[Path]:
        """The trace files (of the home's own state)."""
        return [self.home.layout.state / n for n in self.names()]

    def last(self) -> JsonObject:
        names = self.names()
        if not names:
            raise NotFound("no traces yet: run `memagent chat` or `memagent ask` first")
        shown = f"state/{names[-1]}"
        try:
            doc = json.loads(self.state.read(names[-1]))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise CorruptFile(shown, f"not valid JSON: {exc}") from exc
        if not isinstance(doc, dict):
            raise CorruptFile(shown, "a trace is a JSON object")
        doc["file"] = shown
        return doc
