"""Running a batch of validated actions on a vault: one batch, one plan.

The result is an `ActionsOutcome` (`_results`: one `ActionOutcome` per action,
and the JSON form the model reads). A failed action does not stop later ones;
an action whose `$var` names a failed action fails too and says which one and
why.

How a batch runs: `plan_actions` turns it into one `memagent.plan` plan. Each
action is a step of a tool named after it; `assign_to` makes the step produce
an artifact and each `$var` consumes it, so a consumer waits for its producer.
Each step declares the vault resources it reads and writes (`_step_resources`,
from the action's declaration),
and the planner orders conflicting steps as listed, so the batch gives the
results and files of running it one action at a time (`run_actions_in_order`)
while independent actions run concurrently in a thread pool. Steps never raise
for an action's failure (the failure is their result), so a failed action holds
back only the actions that use its `$var`, exactly as in list order.

Where the executor runs: one background event loop and one thread pool shared
by every batch of the process, so `run_actions` works from any thread, and from
code inside a running event loop (`arun_actions` runs on the caller's loop). A
batch with nothing to overlap (one action, or a chain) runs inline in the
calling thread in list order, which is what the executor would do, minus the
scheduling cost (about half a millisecond a batch). So does every batch whose
caller holds the memory home's write lock, since the pool threads would wait
for that lock forever.
"""

from __future__ import annotations

import asyncio
import os
import threading
import unicodedata
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor as _PoolExecutor
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Protocol

from pydantic import ValidationError

from memagent.actions._catalog import SPECS
from memagent.actions._models import BaseAction, VarRef
from memagent.actions._resources import WHOLE_VAULT, resources_of
from memagent.actions._results import ActionOutcome, ActionsOutcome, json_value
from memagent.core import InvalidInput, MemagentError
from memagent.core.deadline import Budget, check_deadline, current_budget, within
from memagent.memory.vault import Vault
from memagent.plan import ExecutionPlan, Executor, Planner, PlanStep, tool_spec

MAX_WORKERS = 8
NAMES = "vault-names"
"""The set of names in the vault. A failed lookup of a missing file suggests close
names from the whole vault ("did you mean …?"), so actions that may report that
read this resource and actions that add or remove names write it (an action
declares either with the template `names`)."""

HOME_LOCK = "vault-writes"
"""Every write takes the memory home's write lock (`Storage.lock`), so writes never
overlap anyway; declaring it keeps a batch's writes in list order instead of
letting pool threads contend for a file lock that waits by polling."""

_MAX_RESOURCE_CHARS = 1000
_REF = "$artifact"


class _VarFailed(Exception):
    pass


def _lookup(ref: VarRef, results: Mapping[str, ActionOutcome]) -> Any:
    entry = results.get(ref.name)
    if entry is None:
        raise _VarFailed(f'$var "{ref.name}" was not assigned by an earlier action')
    if not entry.ok:
        raise _VarFailed(
            f'$var "{ref.name}" comes from action {entry.index} ({entry.action}), '
            f"which failed: {entry.error}"
        )
    value = entry.value
    for k in ref.keys:
        if isinstance(value, dict) and k in value:
            value = value[k]
        elif isinstance(value, list) and k.isdigit() and int(k) < len(value):
            value = value[int(k)]
        else:
            raise _VarFailed(f'$var "{ref.var}": the value of "{ref.name}" has no "{k}"')
    return value


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return "null" if value is None else type(value).__name__


def format_validation(exc: ValidationError, name: str) -> str:
    """A pydantic error on an action's arguments as one line for the LLM."""
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"] if p != 1)
        got = _kind(err.get("input"))
        parts.append(f'field "{loc}": {err["msg"]} (got {got})' if loc else err["msg"])
    return f"{name}: " + "; ".join(parts)


def run_action(vault: Vault, name: str, args: Mapping[str, Any]) -> Any:
    """Run action `name` with resolved arguments (no `$var` left); its value (a
    vault result or a plain value) or a raise.

    This is what one plan step does; `run_actions` adds `$var` resolution,
    error capture and the result object.
    """
    spec = SPECS.get(name)
    if spec is None:
        raise InvalidInput(f"unknown action {name!r}; valid actions: {', '.join(SPECS)}")
    return spec.func(vault, **args)


def _action_name(action: object, index: int) -> str:
    if not isinstance(action, BaseAction):
        raise InvalidInput(
            f"action {index} is a {type(action).__name__}, not a validated action "
            "(run validate_actions or parse_response first)"
        )
    name = type(action).example.get("action")
    if name not in SPECS:
        raise InvalidInput(f"action {index}: unknown action {name!r}")
    return str(name)


def _run_one(
    vault: Vault, index: int, action: BaseAction, named: Mapping[str, ActionOutcome]
) -> ActionOutcome:
    """One action's result; its failure is reported in the result, never raised."""
    name = type(action).example["action"]
    entry = ActionOutcome(index, name, False, None, None, action.assign_to)
    try:
        args = {
            k: _lookup(v, named) if isinstance(v, VarRef) else v for k, v in action.fields().items()
        }
        value = run_action(vault, name, args)
    except _VarFailed as exc:
        entry.error = str(exc)
    except ValidationError as exc:
        entry.error = format_validation(exc, name)
    except MemagentError as exc:
        entry.error = str(exc)
    except OSError as exc:
        entry.error = f"{exc.strerror or exc.__class__.__name__}"
    else:
        entry.ok, entry.value = True, json_value(value)
    return entry


def _step_tool(name: str) -> Callable[..., ActionOutcome]:
    def step(
        vault: Vault, index: int, action: BaseAction, named: Mapping[str, ActionOutcome]
    ) -> ActionOutcome:
        return _run_one(vault, index, action, named)

    step.__name__ = step.__qualname__ = name
    return tool_spec(name=name)(step)


_STEP_TOOLS: dict[str, Callable[..., ActionOutcome]] = {n: _step_tool(n) for n in SPECS}


def _key(resource: str) -> str:
    # Case-insensitive file systems (macOS, Windows) make `User.md` and `user.md`
    # one file; folding both only ever adds an edge, which is always safe.
    key = unicodedata.normalize("NFKC", resource.casefold())
    return key if len(key) <= _MAX_RESOURCE_CHARS else WHOLE_VAULT


class _Resolver:
    """Per-batch cache of where each path really lives (links followed)."""

    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self.cache: dict[str, str | None] = {}

    def real(self, rel: str) -> str | None:
        """The link-free path of `rel`, or None when it cannot be located."""
        if rel not in self.cache:
            try:
                self.cache[rel] = self.vault.locate(rel).real_rel
            except (MemagentError, OSError):
                self.cache[rel] = None
        return self.cache[rel]

    def widen(self, resources: Sequence[str]) -> list[str]:
        """Each path as itself and as a folder prefix, under its own and its real
        name: whether `a` is a file, a folder or missing decides what an action on
        `a` or on `a/b.md` does, and a link makes two names one file."""
        out: dict[str, None] = {}
        for res in resources:
            if res == WHOLE_VAULT:
                return [WHOLE_VAULT]
            rel = res.removeprefix("vault:").removesuffix("/")
            real = self.real(rel)
            if not real:  # unresolvable, or a link to the vault root itself
                return [WHOLE_VAULT]
            for name in dict.fromkeys((rel, real)):
                for r in (f"vault:{name}", f"vault:{name}/"):
                    key = _key(r)
                    if key == WHOLE_VAULT:
                        return [WHOLE_VAULT]
                    out[key] = None
        return list(out)


def _step_resources(
    resolver: _Resolver, name: str, fields: Mapping[str, object]
) -> tuple[list[str], list[str]]:
    """What one action reads and writes, for the planner (see the module docstring)."""
    spec = SPECS[name]
    reads, writes = resources_of(name, fields)
    r = [WHOLE_VAULT] if spec.walks else resolver.widen(reads)
    w = resolver.widen(writes)
    if spec.reads_names:
        r.append(NAMES)
    if spec.writes_names:
        w.append(NAMES)
    if writes:
        w.append(HOME_LOCK)
    return r, w


def plan_actions(vault: Vault, actions: Sequence[BaseAction]) -> ExecutionPlan:
    """The plan of a batch: one step per action (`step_id` "INDEX:ACTION").

    `assign_to` produces artifact "vINDEX" and a `$var` consumes the artifact of
    the latest earlier action with that `assign_to`; resources order the rest.
    The plan's `levels` and `max_parallelism` say what can run at once.
    """
    resolver = _Resolver(vault)
    last: dict[str, str] = {}
    steps: list[PlanStep] = []
    for index, action in enumerate(actions):
        name = _action_name(action, index)
        fields = action.fields()
        named = {
            v.name: {_REF: last[v.name]}
            for v in fields.values()
            if isinstance(v, VarRef) and v.name in last
        }
        reads, writes = _step_resources(resolver, name, fields)
        produces = None
        if action.assign_to is not None:
            produces = f"v{index}"
            last[action.assign_to] = produces
        steps.append(
            PlanStep(
                f"{index}:{name}",
                _STEP_TOOLS[name],
                {"vault": vault, "index": index, "action": action, "named": named},
                produces=produces,
                reads=reads,
                writes=writes,
            )
        )
    return Planner().create_plan(steps)


def _run_inline(plan: ExecutionPlan) -> list[ActionOutcome]:
    """The plan's steps in list order (every edge points forward in the list)."""
    entries: list[ActionOutcome] = []
    artifacts: dict[str, ActionOutcome] = {}
    for step in plan.steps:
        args = step.args
        named = {k: artifacts[ref[_REF]] for k, ref in args["named"].items()}
        entry = _run_one(args["vault"], args["index"], args["action"], named)
        for produced in step.produces:
            artifacts[produced] = entry
        entries.append(entry)
    return entries


class _Background:
    """The thread pool the steps run in and the event loop that schedules them,
    shared by every batch of this process (a forked child makes its own).

    The loop only waits on locks and futures; file work happens in the pool, so
    one loop serves any number of concurrent batches from any threads.
    """

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.pool = ThreadPoolExecutor(MAX_WORKERS, thread_name_prefix="memagent-actions")
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()

        def serve() -> None:
            asyncio.set_event_loop(self.loop)
            self.loop.call_soon(ready.set)
            self.loop.run_forever()

        threading.Thread(target=serve, name="memagent-actions-loop", daemon=True).start()
        ready.wait()


PER_OWNER_WORKERS = 2
"""Steps of one vault (one user) that may run in the shared pool at once; the rest
wait in that vault's own queue, so one user's batches never fill the pool."""


class _OwnerQueue:
    """One vault's slice of the shared pool: at most `limit` of its steps in the
    pool at a time, the others queued here (holding no thread)."""

    def __init__(self, owner: str, pool: ThreadPoolExecutor, limit: int) -> None:
        self.owner = owner
        self.pool = pool
        self.limit = limit
        self.running = 0
        self.waiting: deque[Callable[[], None]] = deque()

    def submit(self, fn: Callable[[], Any]) -> Future[Any]:
        outer: Future[Any] = Future()

        def finish(inner: Future[Any] | None) -> None:
            if inner is not None and not outer.done():
                if inner.cancelled():
                    outer.cancel()
                elif (exc := inner.exception()) is not None:
                    outer.set_exception(exc)
                else:
                    outer.set_result(inner.result())
            with _owners_lock:
                nxt = self.waiting.popleft() if self.waiting else None
                if nxt is None:
                    self.running -= 1
                    if self.running == 0:
                        _owners.pop(self.owner, None)
            if nxt is not None:
                nxt()

        def start() -> None:
            if outer.cancelled():  # given up while it waited: free the slot
                finish(None)
            else:
                self.pool.submit(fn).add_done_callback(finish)

        with _owners_lock:
            go = self.running < self.limit
            if go:
                self.running += 1
            else:
                self.waiting.append(start)
        if go:
            start()
        return outer


_owners: dict[str, _OwnerQueue] = {}
_owners_lock = threading.Lock()


class _FairShare(_PoolExecutor):
    """What a batch's executor submits to: its vault's queue, each step run under
    the deadline of the request that sent the batch (the pool threads do not
    inherit it otherwise)."""

    def __init__(self, owner: str, pool: ThreadPoolExecutor, budget: Budget) -> None:
        self.owner = owner
        self.pool = pool
        self.budget = budget

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        budget = self.budget

        def call() -> Any:
            with within(budget):  # its time and its cancel event
                check_deadline("the batch of actions")
                return fn(*args, **kwargs)

        with _owners_lock:
            queue = _owners.get(self.owner)
            if queue is None:
                queue = _owners[self.owner] = _OwnerQueue(self.owner, self.pool, PER_OWNER_WORKERS)
        return queue.submit(call)


_background_lock = threading.Lock()
_background: _Background | None = None


def _shared() -> _Background:
    global _background
    with _background_lock:
        if _background is None or _background.pid != os.getpid():
            _background = _Background()
        return _background


async def _execute(
    plan: ExecutionPlan, owner: str, budget: Budget | None = None
) -> list[ActionOutcome]:
    executor = Executor(thread_pool=_FairShare(owner, _shared().pool, budget or Budget()))
    result = await executor.execute_plan(plan, raise_on_failure=False)
    entries: list[ActionOutcome] = []
    for step in plan.steps:
        outcome = result.outcomes[step.step_id]
        if outcome.status != "ok":
            # Only a bug raises inside a step (failures are entries); report the
            # first one as the sequential runner would have.
            first = next(o.error for o in result.outcomes.values() if o.error is not None)
            raise first
        entries.append(outcome.value)
    return entries


class BatchOwner(Protocol):
    """What the runner asks of any vault backend to share its pool fairly: who
    owns the batch (one memory home, one database user) and whether this thread
    already holds that owner's lock. Both are public on every `Vault`."""

    def owner_key(self) -> str: ...

    def holds_lock(self) -> bool: ...


def _owner(vault: BatchOwner) -> str:
    """Whose share of the pool a batch uses: its memory home or database user."""
    return vault.owner_key()


def _holds_home_lock(vault: BatchOwner) -> bool:
    return vault.holds_lock()


def _inline(plan: ExecutionPlan, vault: Vault) -> bool:
    return plan.max_parallelism <= 1 or _holds_home_lock(vault)


def _summary(results: list[ActionOutcome]) -> ActionsOutcome:
    return ActionsOutcome(results)


def run_actions(vault: Vault, actions: Sequence[BaseAction]) -> ActionsOutcome:
    """Run validated actions as one plan; see the module docstring for the result.

    Safe to call from any thread, including one running an event loop: the
    plan runs on a shared background loop while the caller waits (async code
    should rather `await arun_actions(...)`, which does not block its loop).
    """
    if len(actions) <= 1:
        return run_actions_in_order(vault, actions)
    plan = plan_actions(vault, actions)
    if _inline(plan, vault):
        return _summary(_run_inline(plan))
    loop = _shared().loop
    batch = _execute(plan, _owner(vault), current_budget())
    return _summary(asyncio.run_coroutine_threadsafe(batch, loop).result())


async def arun_actions(vault: Vault, actions: Sequence[BaseAction]) -> ActionsOutcome:
    """`run_actions` for async callers: the plan runs on the caller's loop (file
    work in threads), so the loop keeps serving other requests meanwhile."""
    plan = plan_actions(vault, actions)
    if _inline(plan, vault):
        if _holds_home_lock(vault):  # the lock is this thread's; stay on it
            return _summary(_run_inline(plan))
        return _summary(await asyncio.to_thread(_run_inline, plan))
    return _summary(await _execute(plan, _owner(vault), current_budget()))


def run_actions_in_order(vault: Vault, actions: Sequence[BaseAction]) -> ActionsOutcome:
    """Run the actions one at a time in list order, with no plan: the reference
    `run_actions` matches (same results, same files)."""
    results: list[ActionOutcome] = []
    named: dict[str, ActionOutcome] = {}
    for index, action in enumerate(actions):
        _action_name(action, index)
        entry = _run_one(vault, index, action, named)
        results.append(entry)
        if action.assign_to is not None:
            named[action.assign_to] = entry
    return _summary(results)
