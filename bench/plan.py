"""Planner/executor speed: `python -m bench.plan`.

Three measurements, each against a baseline measured in the same run:

1. Scheduling overhead per step: 10,000 no-op async steps in a random DAG through
   `Executor.execute_plan`, vs the same DAG run with a bare `asyncio.TaskGroup` +
   `graphlib.TopologicalSorter` (target <= 3x; Dask documents ~200 us per task).
2. Makespan of a 1,000-step random DAG of `asyncio.sleep` tools vs its critical
   path (the physical limit; target <= 1.05x), both as computed and as measured by
   sleeping through the critical path serially on the same loop.
3. Planning time for 10,000 steps with data flow and shared resources (target
   < 0.5 s), vs `graphlib.TopologicalSorter.static_order` on the resulting edges.
"""

from __future__ import annotations

import asyncio
import gc
import graphlib
import random
import sys
import time
from collections.abc import Callable, Coroutine
from typing import Any

from rich.console import Console
from rich.table import Table

from memagent.plan import ExecutionPlan, Executor, Planner, PlanStep, tool_spec

N_NOOP = 10_000
N_SLEEP = 1_000
N_PLAN = 10_000
SEED = 7


@tool_spec(latency_class="instant")
async def noop() -> None:
    return None


@tool_spec
async def nap(seconds: float) -> None:
    await asyncio.sleep(seconds)


def random_dag(n: int, rng: random.Random, max_deps: int = 3, window: int = 100) -> list[list[int]]:
    """deps[i] lists earlier steps that step i depends on."""
    deps: list[list[int]] = []
    for i in range(n):
        k = rng.randint(0, min(max_deps, i))
        lo = max(0, i - window)
        deps.append(sorted(set(rng.sample(range(lo, i), k))) if k else [])
    return deps


def best_of(repeats: int, fn: Callable[[], float]) -> float:
    times = []
    for _ in range(repeats):
        gc.collect()
        times.append(fn())
    return min(times)


Work = Callable[[int], Coroutine[Any, Any, None]]


async def bare_taskgroup(deps: list[list[int]], work: Work) -> None:
    ts: graphlib.TopologicalSorter[int] = graphlib.TopologicalSorter(
        {i: d for i, d in enumerate(deps)}
    )
    ts.prepare()
    async with asyncio.TaskGroup() as tg:

        async def run(node: int) -> None:
            await work(node)
            ts.done(node)
            for nxt in ts.get_ready():
                tg.create_task(run(nxt))

        for node in ts.get_ready():
            tg.create_task(run(node))


def bench_overhead() -> tuple[float, float]:
    deps = random_dag(N_NOOP, random.Random(SEED))
    steps = [PlanStep(f"s{i}", noop, depends_on=[f"s{d}" for d in ds]) for i, ds in enumerate(deps)]
    plan = Planner().create_plan(steps)
    executor = Executor()

    async def noop_node(_: int) -> None:
        await noop()

    def ours() -> float:
        async def main() -> float:
            t = time.perf_counter()
            result = await executor.execute_plan(plan)
            elapsed = time.perf_counter() - t
            assert result.ok
            return elapsed

        return asyncio.run(main())

    def bare() -> float:
        async def main() -> float:
            t = time.perf_counter()
            await bare_taskgroup(deps, noop_node)
            return time.perf_counter() - t

        return asyncio.run(main())

    return best_of(3, ours) / N_NOOP, best_of(3, bare) / N_NOOP


def bench_makespan() -> tuple[float, float, float]:
    rng = random.Random(SEED + 1)
    deps = random_dag(N_SLEEP, rng, max_deps=2, window=40)
    durations = [rng.uniform(0.010, 0.030) for _ in range(N_SLEEP)]
    steps = [
        PlanStep(
            f"s{i}",
            nap,
            {"seconds": durations[i]},
            depends_on=[f"s{d}" for d in ds],
            estimate=durations[i],
        )
        for i, ds in enumerate(deps)
    ]
    plan: ExecutionPlan = Planner().create_plan(steps)
    path = [plan.index[sid] for sid in plan.critical_path]

    async def main() -> tuple[float, float]:
        t = time.perf_counter()
        await Executor().execute_plan(plan)
        makespan = time.perf_counter() - t
        t = time.perf_counter()
        for i in path:
            await asyncio.sleep(durations[i])
        serial = time.perf_counter() - t
        return makespan, serial

    makespan, serial = asyncio.run(main())
    return makespan, plan.critical_path_seconds, serial


def bench_planning() -> tuple[float, float]:
    rng = random.Random(SEED + 2)
    deps = random_dag(N_PLAN, rng, max_deps=2)
    resources = [f"vault:entities/e{k}.md" for k in range(50)] + ["vault:entities/", "chunks"]
    steps = []
    for i, ds in enumerate(deps):
        args: dict[str, Any] = {"a": [{"$artifact": f"a{d}"} for d in ds]}
        roll = rng.random()
        reads = [rng.choice(resources)] if roll < 0.5 else []
        writes = [rng.choice(resources[:50])] if roll > 0.7 else []
        steps.append(PlanStep(f"s{i}", collect, args, produces=f"a{i}", reads=reads, writes=writes))
    planner = Planner()
    plan = planner.create_plan(steps)
    graph = {i: list(d) for i, d in enumerate(plan.dependencies)}

    def ours() -> float:
        t = time.perf_counter()
        planner.create_plan(steps)
        return time.perf_counter() - t

    def bare() -> float:
        t = time.perf_counter()
        list(graphlib.TopologicalSorter(graph).static_order())
        return time.perf_counter() - t

    return best_of(3, ours), best_of(3, bare)


@tool_spec(latency_class="instant", isolation="inline")
def collect(a: list[Any]) -> int:
    return len(a)


def main() -> int:
    console = Console()
    table = Table(title="memagent.plan")
    for col in ("measurement", "memagent", "baseline", "ratio", "target"):
        table.add_column(col)
    ours, bare = bench_overhead()
    table.add_row(
        f"scheduling overhead per step ({N_NOOP:,} no-op async steps)",
        f"{ours * 1e6:.1f} us",
        f"{bare * 1e6:.1f} us (TaskGroup + TopologicalSorter)",
        f"{ours / bare:.2f}x",
        "<= 3x; far under Dask's ~200 us",
    )
    makespan, cp, serial = bench_makespan()
    table.add_row(
        f"makespan, {N_SLEEP:,}-step random DAG of sleeps",
        f"{makespan * 1e3:.1f} ms",
        f"{cp * 1e3:.1f} ms critical path (computed)",
        f"{makespan / cp:.3f}x",
        "<= 1.05x",
    )
    table.add_row(
        "  same, vs critical path slept serially",
        f"{makespan * 1e3:.1f} ms",
        f"{serial * 1e3:.1f} ms (measured)",
        f"{makespan / serial:.3f}x",
        "<= 1.05x",
    )
    plan_s, topo_s = bench_planning()
    table.add_row(
        f"planning {N_PLAN:,} steps (data flow + resources)",
        f"{plan_s * 1e3:.1f} ms",
        f"{topo_s * 1e3:.1f} ms (graphlib static_order)",
        f"{plan_s / topo_s:.1f}x",
        "< 500 ms",
    )
    console.print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
