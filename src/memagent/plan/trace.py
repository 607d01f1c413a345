"""Execution traces: when each step was ready, started, ended, and how it went.

Times are seconds since the plan started (monotonic `perf_counter`). Export as
plain JSON (`to_dict` / `to_json`) or as Chrome trace-event JSON
(`to_chrome_trace`), which Perfetto and `chrome://tracing` open directly.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Literal, NotRequired, TypedDict

Status = Literal["pending", "ok", "failed", "skipped", "cancelled"]


class StepTraceJson(TypedDict):
    """`StepTrace.to_dict`: a step's record as plain JSON."""

    step_id: str
    tool: str
    status: Status
    ready: float | None
    start: float | None
    end: float | None
    lock_wait: float | None
    attempts: int
    error: str | None
    reason: str | None


class ExecutionTraceJson(TypedDict):
    """`ExecutionTrace.to_dict`: a run's records as plain JSON."""

    started_at: str
    makespan: float
    steps: list[StepTraceJson]


class EventArgs(TypedDict, total=False):
    """What a trace event shows when clicked: a step's status, attempts and error,
    or a lane's name."""

    status: Status
    attempts: int
    error: str
    name: str


class TraceEvent(TypedDict):
    """One Chrome trace event: a complete event (`ph` "X", with `cat`, `ts`, `dur`)
    or a lane's metadata (`ph` "M")."""

    name: str
    ph: Literal["X", "M"]
    pid: int
    tid: int
    args: EventArgs
    cat: NotRequired[str]
    ts: NotRequired[float]
    dur: NotRequired[float]


class ChromeTrace(TypedDict):
    """Trace-event JSON, as Perfetto and `chrome://tracing` open it."""

    traceEvents: list[TraceEvent]
    displayTimeUnit: Literal["ms"]


@dataclass(slots=True)
class StepTrace:
    """One step's record. `ready` is when its dependencies were done; `start` when
    it held its locks and slots and called the tool; `lock_wait = start - ready`."""

    step_id: str
    tool: str
    status: Status = "pending"
    ready: float | None = None
    start: float | None = None
    end: float | None = None
    attempts: int = 0
    error: str | None = None
    reason: str | None = None

    @property
    def lock_wait(self) -> float | None:
        if self.ready is None or self.start is None:
            return None
        return self.start - self.ready

    @property
    def duration(self) -> float | None:
        if self.start is None or self.end is None:
            return None
        return self.end - self.start

    def to_dict(self) -> StepTraceJson:
        return {
            "step_id": self.step_id,
            "tool": self.tool,
            "status": self.status,
            "ready": self.ready,
            "start": self.start,
            "end": self.end,
            "lock_wait": self.lock_wait,
            "attempts": self.attempts,
            "error": self.error,
            "reason": self.reason,
        }


@dataclass(slots=True)
class ExecutionTrace:
    """All step records of one run, in plan order, plus the run's wall time."""

    steps: list[StepTrace] = field(default_factory=list)
    started_at: str = ""
    makespan: float = 0.0

    def to_dict(self) -> ExecutionTraceJson:
        return {
            "started_at": self.started_at,
            "makespan": self.makespan,
            "steps": [s.to_dict() for s in self.steps],
        }

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def to_chrome_trace(self) -> ChromeTrace:
        """Trace-event JSON: one lane per concurrently running step, lock waits shown."""
        events: list[TraceEvent] = []
        lane_free: list[float] = []
        ran = sorted(
            (s for s in self.steps if s.ready is not None and s.end is not None),
            key=lambda s: s.ready or 0.0,
        )
        for s in ran:
            begin = s.ready or 0.0
            end = s.end or begin
            lane = next((i for i, free in enumerate(lane_free) if free <= begin), None)
            if lane is None:
                lane = len(lane_free)
                lane_free.append(end)
            else:
                lane_free[lane] = end
            args: EventArgs = {"status": s.status, "attempts": s.attempts}
            if s.error:
                args["error"] = s.error
            wait = s.lock_wait
            if wait and wait > 0:
                events.append(_event("wait " + s.step_id, "lock_wait", begin, wait, lane, {}))
            if s.start is not None:
                events.append(_event(s.step_id, s.tool, s.start, end - s.start, lane, args))
        for i in range(len(lane_free)):
            events.append(
                {
                    "name": "thread_name",
                    "ph": "M",
                    "pid": 1,
                    "tid": i,
                    "args": {"name": f"lane {i}"},
                }
            )
        return {"traceEvents": events, "displayTimeUnit": "ms"}


def _event(name: str, cat: str, begin: float, dur: float, lane: int, args: EventArgs) -> TraceEvent:
    return {
        "name": name,
        "cat": cat,
        "ph": "X",
        "ts": round(begin * 1e6, 3),
        "dur": round(max(dur, 0.0) * 1e6, 3),
        "pid": 1,
        "tid": lane,
        "args": args,
    }
