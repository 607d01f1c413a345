"""Resource-aware planner and executor: run tool calls as concurrently as is safe.

Declare each tool's contract with `@tool_spec(reads=…, writes=…, idempotent=…)`,
describe the work as `PlanStep`s, and `await run_plan(steps)` (`run_plan_sync`
outside an event loop; or `Planner` + `Executor`) runs it on asyncio: data-flow
and resource-conflict ordering, per resource read/write locks, per-tool caps,
timeouts, retries for idempotent tools, traces. Generic: this layer knows nothing
about memory stores.
"""

from memagent.plan.errors import ExecutionError, PlanError
from memagent.plan.executor import (
    Executor,
    RetryPolicy,
    run_plan,
    run_plan_sync,
)
from memagent.plan.outcome import ExecutionResult, StepOutcome
from memagent.plan.planner import ExecutionPlan, Planner
from memagent.plan.shared_locks import SharedLocks
from memagent.plan.spec import LatencyClass, ResourceSpec, ToolSpec, resources_overlap, tool_spec
from memagent.plan.step import PlanStep
from memagent.plan.trace import ExecutionTrace, StepTrace

__all__ = [
    "ExecutionError",
    "ExecutionPlan",
    "ExecutionResult",
    "ExecutionTrace",
    "Executor",
    "LatencyClass",
    "PlanError",
    "PlanStep",
    "Planner",
    "ResourceSpec",
    "RetryPolicy",
    "SharedLocks",
    "StepOutcome",
    "StepTrace",
    "ToolSpec",
    "resources_overlap",
    "run_plan",
    "run_plan_sync",
    "tool_spec",
]
