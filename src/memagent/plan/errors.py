"""The two errors the plan layer reports.

`PlanError` means the steps themselves are wrong (found before anything runs, so
nothing ran and nothing was written). `ExecutionError` means the plan was sound but
some steps failed while running; it carries every failure, not only the first, and
the full `ExecutionResult` so callers can still read what did succeed.
"""

from __future__ import annotations

from memagent.core.errors import InvalidInput
from memagent.plan.outcome import ExecutionError

__all__ = ["ExecutionError", "PlanError"]


class PlanError(InvalidInput):
    """The steps cannot form a valid plan (bad ids, missing artifacts, a cycle…)."""
