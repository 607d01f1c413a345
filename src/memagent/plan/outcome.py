"""What a run produced: each step's `StepOutcome`, the whole `ExecutionResult`,
and `ExecutionError`, which carries that result when some steps failed.

One module for the three because they refer to each other (a result raises the
error; the error holds the result); the plan layer's other modules import this
one and it imports none of them but `trace`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from memagent.core.errors import MemagentError
from memagent.plan.trace import ExecutionTrace, Status


class ExecutionError(MemagentError):
    """One or more steps failed; `failures` maps each failed step id to its cause."""

    def __init__(
        self,
        failures: Mapping[str, BaseException],
        result: ExecutionResult | None = None,
        *,
        note: str | None = None,
    ) -> None:
        self.failures: dict[str, BaseException] = dict(failures)
        self.result = result
        if self.failures:
            lines = [f"{len(self.failures)} step(s) failed" + (f" ({note})" if note else "")]
        else:
            lines = [note or "the plan did not complete"]
        for step_id, exc in self.failures.items():
            lines.append(f"  step {step_id!r}: {type(exc).__name__}: {exc}")
        super().__init__("\n".join(lines))


@dataclass(slots=True)
class StepOutcome:
    """How one step ended: `ok` (with `value`), `failed` (with `error`), `skipped`
    (a dependency failed; `reason` says which) or `cancelled`."""

    step_id: str
    status: Status
    value: Any = None
    error: BaseException | None = None
    reason: str | None = None
    attempts: int = 0


@dataclass(slots=True)
class ExecutionResult:
    """Everything a run produced: artifacts, every step's outcome, the trace."""

    artifacts: dict[str, Any]
    outcomes: dict[str, StepOutcome]
    trace: ExecutionTrace
    cancelled_by: str | None = field(default=None)

    @property
    def ok(self) -> bool:
        return all(o.status == "ok" for o in self.outcomes.values())

    @property
    def failures(self) -> dict[str, BaseException]:
        return {k: o.error for k, o in self.outcomes.items() if o.error is not None}

    @property
    def skipped(self) -> dict[str, str]:
        return {
            k: o.reason or ""
            for k, o in self.outcomes.items()
            if o.status in ("skipped", "cancelled")
        }

    def value(self, step_id: str) -> Any:
        """The return value of a step that succeeded; raises its error otherwise."""
        outcome = self.outcomes[step_id]
        if outcome.status == "ok":
            return outcome.value
        if outcome.error is not None:
            raise outcome.error
        raise ExecutionError({}, self, note=f"step {step_id!r} did not run: {outcome.reason}")
