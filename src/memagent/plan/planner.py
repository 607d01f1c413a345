"""`Planner`: validate steps and build the dependency DAG the executor runs.

Edges come from three places: explicit `depends_on`, data flow (a consumer waits
for the one producer of each artifact it consumes) and resource conflicts in list
order (a later step that writes what an earlier one read or wrote, or reads what an
earlier one wrote, waits for it; prefix resources overlap everything under them).
So a batch of actions on one file behaves as written, and everything else is free
to run at once.
"""

from __future__ import annotations

import graphlib
import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

from memagent.plan._args import collect_refs
from memagent.plan._rwlock import LockRequest, ancestors, lock_requests
from memagent.plan.errors import PlanError
from memagent.plan.spec import ResourceSpec, ToolSpec, is_prefix_resource
from memagent.plan.step import PlanStep, check_name

DEFAULT_MAX_STEPS = 100_000
EdgeKind = str  # "depends_on" | "data:<artifact>" | "resource:<name>"


class PlanSummary(TypedDict):
    """`ExecutionPlan.summary`: the plan's shape, ready for JSON."""

    steps: int
    edges: int
    levels: list[list[str]]
    max_parallelism: int
    critical_path: list[str]
    critical_path_seconds: float
    initial_artifacts: list[str]
    producers: dict[str, str]


@dataclass(frozen=True, eq=False)
class ExecutionPlan:
    """A validated plan: steps plus the DAG and its shape. Build with `Planner`.

    Per-step tuples are aligned with `steps` (index i describes `steps[i]`).
    """

    steps: tuple[PlanStep, ...]
    specs: tuple[ToolSpec, ...]
    reads: tuple[tuple[str, ...], ...]
    writes: tuple[tuple[str, ...], ...]
    consumes: tuple[tuple[str, ...], ...]
    has_refs: tuple[bool, ...]
    dependencies: tuple[tuple[int, ...], ...]
    dependents: tuple[tuple[int, ...], ...]
    dependency_kinds: tuple[Mapping[int, EdgeKind], ...] = field(repr=False)
    locks: tuple[tuple[LockRequest, ...], ...]
    estimates: tuple[float, ...]
    levels: tuple[tuple[str, ...], ...]
    critical_path: tuple[str, ...]
    critical_path_seconds: float
    initial_artifacts: frozenset[str]
    producers: Mapping[str, str]
    index: Mapping[str, int] = field(repr=False)

    @property
    def max_parallelism(self) -> int:
        """The widest level: how many steps can run at once by the DAG alone."""
        return max((len(level) for level in self.levels), default=0)

    def __len__(self) -> int:
        return len(self.steps)

    @property
    def edge_kinds(self) -> dict[tuple[int, int], EdgeKind]:
        """Every edge by step index, `(before, after) -> why`."""
        return {
            (a, b): kind for b, ds in enumerate(self.dependency_kinds) for a, kind in ds.items()
        }

    def dependencies_of(self, step_id: str) -> list[str]:
        return [self.steps[d].step_id for d in self.dependencies[self.index[step_id]]]

    def edges(self) -> list[tuple[str, str, EdgeKind]]:
        """Every edge as (before, after, why)."""
        ids = [s.step_id for s in self.steps]
        return [
            (ids[a], ids[b], kind)
            for b, ds in enumerate(self.dependency_kinds)
            for a, kind in ds.items()
        ]

    def summary(self) -> PlanSummary:
        """A JSON-ready description of the plan's shape (for logs, traces and UIs)."""
        return {
            "steps": len(self.steps),
            "edges": sum(len(d) for d in self.dependency_kinds),
            "levels": [list(level) for level in self.levels],
            "max_parallelism": self.max_parallelism,
            "critical_path": list(self.critical_path),
            "critical_path_seconds": self.critical_path_seconds,
            "initial_artifacts": sorted(self.initial_artifacts),
            "producers": dict(self.producers),
        }


class _ResourceState:
    __slots__ = ("last_writer", "readers")

    def __init__(self) -> None:
        self.last_writer = -1
        self.readers: list[int] = []


@dataclass
class _Resolved:
    """Per step (aligned with the steps): its tool, resources read and written,
    artifacts consumed, whether its args hold references; and each artifact's producer."""

    specs: list[ToolSpec] = field(default_factory=list)
    reads: list[tuple[str, ...]] = field(default_factory=list)
    writes: list[tuple[str, ...]] = field(default_factory=list)
    consumes: list[tuple[str, ...]] = field(default_factory=list)
    has_refs: list[bool] = field(default_factory=list)
    producers: dict[str, int] = field(default_factory=dict)


def _named(
    args: Mapping[str, Any], declared: Sequence[ResourceSpec], extra: Sequence[str]
) -> tuple[str, ...]:
    """The resources a step names: its tool's, rendered with its args, then its own."""
    return tuple(dict.fromkeys([*(x.render(args) for x in declared), *extra]))


def _declared_edges(
    step_list: Sequence[PlanStep],
    index: Mapping[str, int],
    parts: _Resolved,
    initial: frozenset[str],
) -> list[dict[int, EdgeKind]]:
    """Each step's dependencies from `depends_on` and data flow, with why."""
    deps: list[dict[int, EdgeKind]] = [{} for _ in step_list]
    for i, s in enumerate(step_list):
        for d in s.depends_on:
            j = index.get(d)
            if j is None:
                raise PlanError(f"step {s.step_id!r} depends on unknown step {d!r}")
            deps[i].setdefault(j, "depends_on")
        for name in parts.consumes[i]:
            j = parts.producers.get(name)
            if j is None:
                if name not in initial:
                    raise PlanError(
                        f"step {s.step_id!r} consumes artifact {name!r}, which no step "
                        "produces and is not an initial artifact"
                    )
                continue
            deps[i].setdefault(j, f"data:{name}")
    return deps


def _shape(
    step_list: Sequence[PlanStep],
    dependencies: Sequence[tuple[int, ...]],
    order: Sequence[int],
    estimates: Sequence[float],
) -> tuple[tuple[tuple[str, ...], ...], tuple[str, ...], float]:
    """The plan's levels (steps that can run together), its critical path by the
    estimates, and that path's seconds."""
    n = len(step_list)
    level = [0] * n
    finish = [0.0] * n
    best_pred = [-1] * n
    for i in order:
        lv = 0
        start = 0.0
        pred = -1
        for dep in dependencies[i]:
            if level[dep] >= lv:
                lv = level[dep] + 1
            if pred < 0 or finish[dep] > start:
                start = finish[dep]
                pred = dep
        level[i] = lv
        finish[i] = start + estimates[i]
        best_pred[i] = pred
    levels: list[list[str]] = [[] for _ in range(max(level, default=-1) + 1)]
    for i in range(n):
        levels[level[i]].append(step_list[i].step_id)
    if not n:
        return (), (), 0.0
    path: list[str] = []
    node = max(range(n), key=finish.__getitem__)
    seconds = finish[node]
    while node >= 0:
        path.append(step_list[node].step_id)
        node = best_pred[node]
    path.reverse()
    return tuple(tuple(lv) for lv in levels), tuple(path), seconds


class Planner:
    """Turns a list of `PlanStep`s into an `ExecutionPlan`.

    `tools` maps names to callables, for steps whose `tool` is a string (as an LLM
    or a config file would write it). Callables are used as they are.
    """

    def __init__(
        self,
        tools: Mapping[str, Callable[..., Any]] | None = None,
        *,
        max_steps: int = DEFAULT_MAX_STEPS,
    ) -> None:
        self.tools: dict[str, Callable[..., Any]] = dict(tools or {})
        self.max_steps = max_steps

    def resolve_tool(self, step: PlanStep) -> ToolSpec:
        tool = step.tool
        if isinstance(tool, str):
            fn = self.tools.get(tool)
            if fn is None:
                known = ", ".join(sorted(self.tools)[:20]) or "none registered"
                raise PlanError(f"step {step.step_id!r}: unknown tool {tool!r} (known: {known})")
            tool = fn
        try:
            return ToolSpec.of(tool)
        except TypeError as exc:
            raise PlanError(f"step {step.step_id!r}: {exc}") from None

    def create_plan(
        self, steps: Iterable[PlanStep], initial_artifacts: Iterable[str] = ()
    ) -> ExecutionPlan:
        """Validate `steps` and build the plan; raises `PlanError` naming the problem."""
        step_list = self._checked_steps(steps)
        initial = frozenset(check_name("initial artifact", a) for a in initial_artifacts)
        index: dict[str, int] = {}
        for i, s in enumerate(step_list):
            if s.step_id in index:
                raise PlanError(f"duplicate step id {s.step_id!r}")
            index[s.step_id] = i
        parts = self._resolve(step_list, initial)
        deps = _declared_edges(step_list, index, parts, initial)
        self._resource_edges(parts.reads, parts.writes, deps)
        dependencies = tuple(tuple(d) for d in deps)
        dependents: list[list[int]] = [[] for _ in step_list]
        for b, ds in enumerate(dependencies):
            for a in ds:
                dependents[a].append(b)
        order = self._topological(step_list, dependencies, dependents, deps)
        estimates = tuple(
            s.estimate if s.estimate is not None else spec.latency_class.estimate
            for s, spec in zip(step_list, parts.specs, strict=True)
        )
        levels, path, cp_seconds = _shape(step_list, dependencies, order, estimates)
        return ExecutionPlan(
            steps=tuple(step_list),
            specs=tuple(parts.specs),
            reads=tuple(parts.reads),
            writes=tuple(parts.writes),
            consumes=tuple(parts.consumes),
            has_refs=tuple(parts.has_refs),
            dependencies=dependencies,
            dependents=tuple(tuple(d) for d in dependents),
            dependency_kinds=tuple(deps),
            locks=tuple(
                lock_requests(r, w) for r, w in zip(parts.reads, parts.writes, strict=True)
            ),
            estimates=estimates,
            levels=levels,
            critical_path=path,
            critical_path_seconds=cp_seconds,
            initial_artifacts=initial,
            producers={name: step_list[i].step_id for name, i in parts.producers.items()},
            index=index,
        )

    def _checked_steps(self, steps: Iterable[PlanStep]) -> list[PlanStep]:
        if isinstance(steps, str | bytes | Mapping):
            raise PlanError("steps must be a list of PlanStep")
        step_list: list[PlanStep] = []
        for s in steps:
            if not isinstance(s, PlanStep):
                raise PlanError(f"every step must be a PlanStep, got {type(s).__name__}")
            step_list.append(s)
            if len(step_list) > self.max_steps:
                raise PlanError(f"a plan holds at most {self.max_steps} steps")
        return step_list

    def _resolve(self, step_list: list[PlanStep], initial: frozenset[str]) -> _Resolved:
        """Each step's tool (its arguments checked against the tool's signature),
        the resources it reads and writes, the artifacts it consumes and produces."""
        out = _Resolved()
        fitted: set[tuple[int, tuple[str, ...]]] = set()  # (tool, arg names) already checked
        for i, s in enumerate(step_list):
            spec = self.resolve_tool(s)
            out.specs.append(spec)
            where = f"step {s.step_id!r}"
            refs: set[str] = set()
            out.has_refs.append(collect_refs(s.args, where, refs))
            refs.update(s.consumes)
            out.consumes.append(tuple(sorted(refs)))
            if spec.signature is not None:
                fit_key = (id(spec), tuple(s.args))
                if fit_key not in fitted:
                    try:
                        spec.signature.bind(**s.args)
                    except TypeError as exc:
                        raise PlanError(
                            f"{where}: arguments do not fit tool {spec.name}{spec.signature}: {exc}"
                        ) from None
                    fitted.add(fit_key)
            out.reads.append(
                tuple(dict.fromkeys([*(x.render(s.args) for x in spec.reads), *s.reads]))
            )
            out.writes.append(
                tuple(dict.fromkeys([*(x.render(s.args) for x in spec.writes), *s.writes]))
            )
            for name in s.produces:
                if name in initial:
                    raise PlanError(f"{where} produces {name!r}, which is an initial artifact")
                other = out.producers.get(name)
                if other is not None:
                    raise PlanError(
                        f"artifact {name!r} has two producers: steps "
                        f"{step_list[other].step_id!r} and {s.step_id!r}"
                    )
                out.producers[name] = i
        return out

    @staticmethod
    def _resource_edges(
        reads: Sequence[tuple[str, ...]],
        writes: Sequence[tuple[str, ...]],
        deps: list[dict[int, EdgeKind]],
    ) -> None:
        state: dict[str, _ResourceState] = {}
        under: dict[str, set[str]] = {}

        def related(resource: str) -> Iterable[str]:
            yield resource
            yield from ancestors(resource)
            if is_prefix_resource(resource):
                yield from under.get(resource, ())

        labels: dict[str, str] = {}
        for j in range(len(reads)):
            if not reads[j] and not writes[j]:
                continue
            mine = deps[j]
            for r in writes[j]:
                for key in related(r):
                    st = state.get(key)
                    if st is None:
                        continue
                    label = labels.get(key) or labels.setdefault(key, "resource:" + key)
                    w = st.last_writer
                    if w >= 0 and w != j and w not in mine:
                        mine[w] = label
                    for reader in st.readers:
                        if reader != j and reader not in mine:
                            mine[reader] = label
            for r in reads[j]:
                for key in related(r):
                    st = state.get(key)
                    if st is None:
                        continue
                    w = st.last_writer
                    if w >= 0 and w != j and w not in mine:
                        mine[w] = labels.get(key) or labels.setdefault(key, "resource:" + key)
            for r in (*reads[j], *writes[j]):
                if r not in state:
                    state[r] = _ResourceState()
                    for a in ancestors(r):
                        under.setdefault(a, set()).add(r)
            for r in reads[j]:
                state[r].readers.append(j)
            for r in writes[j]:
                st = state[r]
                st.last_writer = j
                st.readers = []

    @staticmethod
    def _topological(
        steps: Sequence[PlanStep],
        dependencies: Sequence[tuple[int, ...]],
        dependents: Sequence[list[int]],
        kinds: Sequence[Mapping[int, EdgeKind]],
    ) -> list[int]:
        n = len(steps)
        pending = [len(d) for d in dependencies]
        order = [i for i in range(n) if not pending[i]]
        k = 0
        while k < len(order):
            for b in dependents[order[k]]:
                pending[b] -= 1
                if not pending[b]:
                    order.append(b)
            k += 1
        if len(order) == n:
            return order
        stuck = {i for i in range(n) if pending[i]}
        graph = {i: [d for d in dependencies[i] if d in stuck] for i in stuck}
        try:
            graphlib.TopologicalSorter(graph).prepare()
        except graphlib.CycleError as exc:
            cycle: list[int] = exc.args[1]
        else:  # pragma: no cover - Kahn and graphlib disagree only on a bug
            raise PlanError("the steps contain a cycle")
        names = " → ".join(steps[i].step_id for i in cycle)
        why = ", ".join(
            f"{steps[a].step_id}→{steps[b].step_id} ({kinds[b][a]})"
            for a, b in itertools.pairwise(cycle)
        )
        raise PlanError(f"the steps contain a cycle: {names} [{why}]")
