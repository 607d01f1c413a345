"""The two errors the plan layer reports.

`PlanError` means the steps themselves are wrong (found before anything runs, so
nothing ran and nothing was written). `ExecutionError` means the plan was sound but
some steps failed while running; it carries every failure, not only the first, and
the full `ExecutionResult` so callers can still read what did succeed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from memagent.core.errors import InvalidInput, MemagentError

if TYPE_CHECKING:
    from memagent.plan.executor import ExecutionResult


class PlanError(InvalidInput):
    """The steps cannot form a valid plan (bad ids, missing artifacts, a cycle…)."""


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
