"""`Executor`: run an `ExecutionPlan` on asyncio, as concurrently as it allows.

Not wave-based: each step starts the moment its own dependencies are done, so a
slow step holds back only what depends on it. Around each call the executor takes
the step's resource locks (read/write, multi-granularity, one global order,
writer-preferring; see `_rwlock`), then the tool's `concurrency_cap` slot, then
the optional global slot; it releases all of them whatever happens, including
cancellation from outside.

Failures do not stop independent work: a failed step's dependents are skipped
with the reason, everything else finishes, and then `ExecutionError` lists every
failure (or `execute_plan(..., raise_on_failure=False)` just returns the result).
`fail_fast=True` cancels the rest at the first failure instead.

Sync tools run in a thread pool. A thread cannot be killed: after a timeout the
step fails and its locks are released, but the thread runs on in the background.
Tools that must really stop use `@tool_spec(isolation="process")`.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import random
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Executor as PoolExecutor
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from memagent.core.deadline import check_deadline, remaining_time
from memagent.plan._args import resolve_refs
from memagent.plan._process import call_in_process
from memagent.plan._rwlock import LockTable
from memagent.plan.errors import PlanError
from memagent.plan.outcome import ExecutionError, ExecutionResult, StepOutcome
from memagent.plan.planner import ExecutionPlan, Planner
from memagent.plan.shared_locks import SharedLocks, shared_requests
from memagent.plan.spec import ToolSpec
from memagent.plan.step import PlanStep
from memagent.plan.trace import ExecutionTrace, StepTrace


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Retries for idempotent tools: exponential backoff with jitter.

    Attempt n (1-based) that fails waits `min(max_delay, base_delay * multiplier**(n-1))`,
    reduced by a random fraction up to `jitter`, before attempt n+1. Only exceptions
    that are instances of `retry_on` are retried; non-idempotent tools never are.
    """

    max_retries: int = 2
    base_delay: float = 0.05
    max_delay: float = 2.0
    multiplier: float = 2.0
    jitter: float = 0.5
    retry_on: tuple[type[BaseException], ...] = (Exception,)

    def __post_init__(self) -> None:
        if isinstance(self.max_retries, bool) or not isinstance(self.max_retries, int):
            raise ValueError("max_retries must be an int")
        if self.max_retries < 0 or self.base_delay < 0 or self.max_delay < 0:
            raise ValueError("max_retries and delays must be >= 0")
        if not 0 <= self.jitter <= 1 or self.multiplier < 1:
            raise ValueError("jitter must be in [0, 1] and multiplier >= 1")

    def delay(self, attempt: int, rng: random.Random) -> float:
        raw = min(self.max_delay, self.base_delay * self.multiplier ** (attempt - 1))
        return raw * (1 - self.jitter * rng.random())


class _LoopState:
    """Locks and semaphores live on one event loop; a new loop gets fresh ones."""

    __slots__ = ("global_slots", "locks", "loop", "tool_slots")

    def __init__(self, loop: asyncio.AbstractEventLoop, max_concurrency: int | None) -> None:
        self.loop = loop
        self.locks = LockTable()
        self.tool_slots: dict[int, asyncio.Semaphore] = {}
        self.global_slots = (
            asyncio.Semaphore(max_concurrency) if max_concurrency is not None else None
        )


class _Run:
    __slots__ = (
        "artifacts",
        "cancel_reason",
        "done",
        "finished",
        "outcomes",
        "pending",
        "plan",
        "records",
        "stopping",
        "t0",
        "tasks",
    )

    def __init__(self, plan: ExecutionPlan, artifacts: dict[str, Any]) -> None:
        self.plan = plan
        self.artifacts = artifacts
        self.pending = [len(d) for d in plan.dependencies]
        self.outcomes: list[StepOutcome | None] = [None] * len(plan.steps)
        self.records = [
            StepTrace(s.step_id, spec.name) for s, spec in zip(plan.steps, plan.specs, strict=True)
        ]
        self.tasks: set[asyncio.Task[None]] = set()
        self.finished = 0
        self.done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.stopping = False
        self.cancel_reason: str | None = None
        self.t0 = time.perf_counter()


class Executor:
    """Runs plans. One executor can run many plans at once (they share its locks);
    it serves one event loop at a time (a new loop gets fresh locks).

    - `tools`: registry for steps naming their tool by string.
    - `max_concurrency`: global limit on steps running at once (None: no limit).
    - `default_timeout`: seconds per attempt for tools without their own timeout.
    - `retry`: `RetryPolicy` for idempotent tools (`max_retries=0` disables).
    - `fail_fast`: cancel everything still running at the first failure.
    - `shared_locks`: cross-process locks (`SharedLocks`, e.g. PostgreSQL advisory
      locks) taken for each step's resources after the in-process ones.
    - `thread_pool`: where sync tools run (default: the loop's default executor,
      which `asyncio.run` waits for on exit; pass your own pool if a thread left
      running by a timeout must not delay that, as `run_plan` does).
    """

    def __init__(
        self,
        tools: Mapping[str, Callable[..., Any]] | None = None,
        *,
        max_concurrency: int | None = None,
        default_timeout: float | None = None,
        retry: RetryPolicy | None = None,
        fail_fast: bool = False,
        thread_pool: PoolExecutor | None = None,
        seed: int | None = None,
        shared_locks: SharedLocks | None = None,
    ) -> None:
        if max_concurrency is not None and (
            isinstance(max_concurrency, bool)
            or not isinstance(max_concurrency, int)
            or max_concurrency < 1
        ):
            raise ValueError(f"max_concurrency must be a positive int, got {max_concurrency!r}")
        if default_timeout is not None and not default_timeout > 0:
            raise ValueError(f"default_timeout must be > 0 seconds, got {default_timeout!r}")
        self.planner = Planner(tools)
        self.max_concurrency = max_concurrency
        self.default_timeout = default_timeout
        self.retry = retry or RetryPolicy()
        self.fail_fast = fail_fast
        self.thread_pool = thread_pool
        self._rng = random.Random(seed)
        self._state: _LoopState | None = None
        self.shared_locks = shared_locks

    def _loop_state(self) -> _LoopState:
        loop = asyncio.get_running_loop()
        if self._state is None or self._state.loop is not loop:
            self._state = _LoopState(loop, self.max_concurrency)
        return self._state

    def held_resources(self) -> dict[str, str]:
        """Resources locked right now on this executor (for diagnostics and tests)."""
        return self._state.locks.held() if self._state is not None else {}

    async def execute_plan(
        self,
        plan: ExecutionPlan | Iterable[PlanStep],
        initial_artifacts: Mapping[str, Any] | None = None,
        *,
        raise_on_failure: bool = True,
        fail_fast: bool | None = None,
    ) -> ExecutionResult:
        """Run `plan` (or plan these steps first) and return every outcome.

        Raises `PlanError` before running anything if an initial artifact the plan
        needs is missing, and `ExecutionError` (carrying the result) after the run
        if any step failed and `raise_on_failure` is true.
        """
        initial = dict(initial_artifacts or {})
        if not isinstance(plan, ExecutionPlan):
            plan = self.planner.create_plan(plan, initial_artifacts=initial)
        missing = sorted(plan.initial_artifacts - initial.keys())
        if missing:
            raise PlanError(f"the plan needs initial artifacts that were not given: {missing}")
        state = self._loop_state()
        run = _Run(plan, initial)
        fail_fast = self.fail_fast if fail_fast is None else fail_fast
        started_at = datetime.now(UTC).isoformat()
        n = len(plan.steps)
        if n:
            for i in range(n):
                if not run.pending[i]:
                    self._start(run, state, i, fail_fast)
            try:
                await run.done
            except asyncio.CancelledError:
                await self._stop(run, "cancelled from outside")
                raise
            if run.stopping:  # fail_fast: cancel whatever is still running
                await self._stop(run, run.cancel_reason or "fail_fast")
        trace = ExecutionTrace(run.records, started_at, time.perf_counter() - run.t0)
        outcomes = {}
        for i, o in enumerate(run.outcomes):
            sid = plan.steps[i].step_id
            if o is None:
                reason = run.cancel_reason or "not run"
                o = StepOutcome(sid, "cancelled", reason=reason)
                run.records[i].status = "cancelled"
                run.records[i].reason = reason
            outcomes[sid] = o
        result = ExecutionResult(run.artifacts, outcomes, trace, run.cancel_reason)
        if raise_on_failure and result.failures:
            raise ExecutionError(result.failures, result, note=run.cancel_reason)
        return result

    async def _stop(self, run: _Run, reason: str) -> None:
        run.stopping = True
        if run.cancel_reason is None:
            run.cancel_reason = reason
        tasks = [t for t in run.tasks if not t.done()]
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.wait(tasks)

    def _start(self, run: _Run, state: _LoopState, i: int, fail_fast: bool) -> None:
        run.records[i].ready = time.perf_counter() - run.t0
        task = asyncio.get_running_loop().create_task(self._step(run, state, i, fail_fast))
        run.tasks.add(task)
        task.add_done_callback(run.tasks.discard)

    def _settle(self, run: _Run, i: int, outcome: StepOutcome) -> None:
        run.outcomes[i] = outcome
        rec = run.records[i]
        rec.status = outcome.status
        rec.reason = outcome.reason
        run.finished += 1
        if run.finished == len(run.outcomes) and not run.done.done():
            run.done.set_result(None)

    async def _step(self, run: _Run, state: _LoopState, i: int, fail_fast: bool) -> None:
        plan = run.plan
        step = plan.steps[i]
        spec = plan.specs[i]
        rec = run.records[i]
        locks = plan.locks[i]
        tool_slot: asyncio.Semaphore | None = None
        shared: Any = None
        shared_locks = self.shared_locks
        try:
            if locks:
                await state.locks.acquire_all(locks)
            try:
                if locks and shared_locks is not None:
                    shared = await shared_locks.acquire(shared_requests(locks))
                if spec.concurrency_cap is not None:
                    tool_slot = state.tool_slots.get(id(spec))
                    if tool_slot is None:
                        tool_slot = asyncio.Semaphore(spec.concurrency_cap)
                        state.tool_slots[id(spec)] = tool_slot
                    await tool_slot.acquire()
                try:
                    if state.global_slots is not None:
                        await state.global_slots.acquire()
                    try:
                        rec.start = time.perf_counter() - run.t0
                        args = (
                            resolve_refs(step.args, run.artifacts)
                            if plan.has_refs[i]
                            else step.args
                        )
                        value = await self._call(spec, step, args, rec)
                    finally:
                        rec.end = time.perf_counter() - run.t0
                        if state.global_slots is not None:
                            state.global_slots.release()
                finally:
                    if tool_slot is not None:
                        tool_slot.release()
            finally:
                try:
                    if shared is not None and shared_locks is not None:
                        await asyncio.shield(shared_locks.release(shared))
                finally:
                    if locks:
                        state.locks.release_all(locks)
            self._store(run, step, value)
        except asyncio.CancelledError:
            reason = run.cancel_reason or "cancelled"
            self._settle(
                run, i, StepOutcome(step.step_id, "cancelled", reason=reason, attempts=rec.attempts)
            )
            raise
        except Exception as exc:
            rec.error = f"{type(exc).__name__}: {exc}"
            self._settle(
                run, i, StepOutcome(step.step_id, "failed", error=exc, attempts=rec.attempts)
            )
            self._skip_dependents(run, i)
            if fail_fast and not run.stopping:
                run.stopping = True
                run.cancel_reason = f"fail_fast: step {step.step_id!r} failed"
                if not run.done.done():
                    run.done.set_result(None)
            return
        self._settle(run, i, StepOutcome(step.step_id, "ok", value=value, attempts=rec.attempts))
        if run.stopping:
            return
        pending = run.pending
        for d in plan.dependents[i]:
            pending[d] -= 1
            if not pending[d] and run.outcomes[d] is None:
                self._start(run, state, d, fail_fast)

    def _skip_dependents(self, run: _Run, failed: int) -> None:
        plan = run.plan
        root = plan.steps[failed].step_id
        stack = list(plan.dependents[failed])
        while stack:
            d = stack.pop()
            if run.outcomes[d] is not None:
                continue
            via = []
            for x in plan.dependencies[d]:
                o = run.outcomes[x]
                if o is not None and o.status != "ok":
                    via.append(plan.steps[x].step_id)
            reason = f"dependency {via[0]!r} did not succeed" if via else "dependency failed"
            if via and via[0] != root:
                reason += f" (root failure: {root!r})"
            self._settle(run, d, StepOutcome(plan.steps[d].step_id, "skipped", reason=reason))
            stack.extend(plan.dependents[d])

    @staticmethod
    def _store(run: _Run, step: PlanStep, value: Any) -> None:
        produces = step.produces
        if not produces:
            return
        if len(produces) == 1:
            run.artifacts[produces[0]] = value
            return
        if not isinstance(value, Mapping) or set(value) != set(produces):
            got = sorted(map(str, value)) if isinstance(value, Mapping) else type(value).__name__
            raise PlanError(
                f"step {step.step_id!r} produces {list(produces)}, so its tool must return a "
                f"dict with exactly those keys; got {got}"
            )
        for name in produces:
            run.artifacts[name] = value[name]

    async def _call(
        self, spec: ToolSpec, step: PlanStep, args: Mapping[str, Any], rec: StepTrace
    ) -> Any:
        own = spec.timeout if spec.timeout is not None else self.default_timeout
        policy = self.retry
        while True:
            check_deadline(f"plan step {step.step_id!r}")  # the request's budget, if any
            rec.attempts += 1
            left = remaining_time()  # the request's budget bounds every attempt too
            timeout = own if left is None else max(0.001, min(own or left, left))
            try:
                return await self._attempt(spec, args, timeout)
            except Exception as exc:
                if (
                    not spec.idempotent
                    or rec.attempts > policy.max_retries
                    or not isinstance(exc, policy.retry_on)
                ):
                    raise
            await asyncio.sleep(policy.delay(rec.attempts, self._rng))

    async def _attempt(self, spec: ToolSpec, args: Mapping[str, Any], timeout: float | None) -> Any:
        fn = spec.fn
        mode = spec.isolation
        try:
            if mode == "async":
                if timeout is None:
                    return await fn(**args)
                async with asyncio.timeout(timeout):
                    return await fn(**args)
            if mode == "inline":
                return fn(**args)
            if mode == "process":
                return await call_in_process(fn, args, timeout)
            loop = asyncio.get_running_loop()
            # the thread runs in a copy of this context: the request's budget goes with it
            ctx = contextvars.copy_context()
            fut = loop.run_in_executor(self.thread_pool, ctx.run, functools.partial(fn, **args))
            if timeout is None:
                return await fut
            return await asyncio.wait_for(fut, timeout)
        except TimeoutError as exc:
            if timeout is None:
                raise
            check_deadline(f"tool {spec.name!r}")  # the request's budget ended it
            raise TimeoutError(f"tool {spec.name!r} timed out after {timeout:g}s") from exc


async def run_plan(
    steps: Iterable[PlanStep] | ExecutionPlan,
    initial_artifacts: Mapping[str, Any] | None = None,
    *,
    tools: Mapping[str, Callable[..., Any]] | None = None,
    max_retries: int = 2,
    default_timeout: float | None = None,
    max_concurrency: int | None = None,
    fail_fast: bool = False,
) -> dict[str, Any]:
    """Plan and run `steps`; return the artifacts (initial ones included):
    `artifacts = await run_plan(steps)`.

    Raises `PlanError` for invalid steps (nothing runs) and `ExecutionError`
    listing every failed step. Sync tools run in a private thread pool that is
    let go without waiting, so a thread left running by a timeout does not hold
    up the return. Outside an event loop, call `run_plan_sync`.
    """
    pool = ThreadPoolExecutor(thread_name_prefix="memagent-plan")
    executor = Executor(
        tools,
        max_concurrency=max_concurrency,
        default_timeout=default_timeout,
        retry=RetryPolicy(max_retries=max_retries),
        fail_fast=fail_fast,
        thread_pool=pool,
    )
    try:
        result = await executor.execute_plan(steps, initial_artifacts)
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    return result.artifacts


def run_plan_sync(
    steps: Iterable[PlanStep] | ExecutionPlan,
    initial_artifacts: Mapping[str, Any] | None = None,
    *,
    tools: Mapping[str, Callable[..., Any]] | None = None,
    max_retries: int = 2,
    default_timeout: float | None = None,
    max_concurrency: int | None = None,
    fail_fast: bool = False,
) -> dict[str, Any]:
    """The blocking form of `run_plan` (as pydantic-ai's `run_sync`), for code
    with no event loop of its own. Inside a running loop, `await run_plan(...)`.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise RuntimeError(
            "run_plan_sync() was called inside a running event loop; await run_plan() instead"
        )
    return asyncio.run(
        run_plan(
            steps,
            initial_artifacts,
            tools=tools,
            max_retries=max_retries,
            default_timeout=default_timeout,
            max_concurrency=max_concurrency,
            fail_fast=fail_fast,
        )
    )
