"""Randomized stress: 1,000 random plans over a few shared resources.

Plans run four at a time on one executor, so ordering inside a plan comes from
the planner's edges and exclusion between plans from the executor's locks. Each
tool records its own interval; afterwards no two conflicting steps may overlap
and every dependency must have finished before its dependent started.
"""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

from memagent.plan import Executor, Planner, PlanStep, resources_overlap, tool_spec

RESOURCES = ["vault:a.md", "vault:b.md", "vault:d/", "vault:d/x.md", "profile:p"]
PLANS = 1_000
AT_ONCE = 4

intervals: dict[str, tuple[float, float]] = {}


@tool_spec
async def probe(key: str, inputs: list[Any], yields: int) -> str:
    start = time.perf_counter()
    for _ in range(yields):
        await asyncio.sleep(0)
    intervals[key] = (start, time.perf_counter())
    return key


Access = tuple[set[str], set[str]]


def random_plan(rng: random.Random, tag: str) -> tuple[list[PlanStep], list[Access]]:
    steps: list[PlanStep] = []
    access: list[Access] = []
    for i in range(rng.randint(2, 9)):
        reads = set(rng.sample(RESOURCES, rng.randint(0, 2)))
        writes = set(rng.sample(RESOURCES, rng.randint(0, 1)))
        earlier = list(range(i))
        consumed = rng.sample(earlier, min(len(earlier), rng.randint(0, 2)))
        after = rng.sample(earlier, min(len(earlier), rng.randint(0, 1)))
        steps.append(
            PlanStep(
                f"s{i}",
                probe,
                {
                    "key": f"{tag}/s{i}",
                    "inputs": [{"$artifact": f"{tag}/a{j}"} for j in consumed],
                    "yields": rng.randint(0, 3),
                },
                produces=f"{tag}/a{i}",
                depends_on=[f"s{j}" for j in after],
                reads=sorted(reads),
                writes=sorted(writes),
            )
        )
        access.append((reads, writes))
    # Shuffle the resource-free steps among their own slots, so data edges also
    # point backwards in list order (resource steps keep their order: it is meaningful).
    free = [k for k in range(len(steps)) if not access[k][0] and not access[k][1]]
    moved = free[:]
    rng.shuffle(moved)
    steps_out, access_out = steps[:], access[:]
    for slot, k in zip(free, moved, strict=True):
        steps_out[slot], access_out[slot] = steps[k], access[k]
    return steps_out, access_out


def conflicts(a: Access, b: Access) -> bool:
    (ra, wa), (rb, wb) = a, b
    return any(resources_overlap(x, y) for x in wa for y in rb | wb) or any(
        resources_overlap(x, y) for x in wb for y in ra
    )


def test_one_thousand_random_plans_never_overlap_conflicts_and_respect_dependencies() -> None:
    rng = random.Random(20261122)
    planner = Planner()
    intervals.clear()
    checked_pairs = 0
    checked_edges = 0

    async def main() -> None:
        nonlocal checked_pairs, checked_edges
        executor = Executor()
        for batch in range(PLANS // AT_ONCE):
            made = [random_plan(rng, f"b{batch}p{k}") for k in range(AT_ONCE)]
            plans = [planner.create_plan(steps) for steps, _ in made]
            results = await asyncio.gather(*(executor.execute_plan(p) for p in plans))
            assert all(r.ok for r in results)
            everyone: list[tuple[str, Access]] = []
            for (steps, access), plan in zip(made, plans, strict=True):
                keys = [s.args["key"] for s in steps]
                for i, deps in enumerate(plan.dependencies):
                    for d in deps:
                        assert intervals[keys[d]][1] <= intervals[keys[i]][0], (keys[d], keys[i])
                        checked_edges += 1
                everyone.extend(zip(keys, access, strict=True))
            for x in range(len(everyone)):
                for y in range(x):
                    (kx, ax), (ky, ay) = everyone[x], everyone[y]
                    if conflicts(ax, ay):
                        (s1, e1), (s2, e2) = intervals[kx], intervals[ky]
                        assert e1 <= s2 or e2 <= s1, (kx, ky)
                        checked_pairs += 1
            assert executor.held_resources() == {}

    asyncio.run(main())
    assert len(intervals) > 3 * PLANS
    assert checked_pairs > 1_000 and checked_edges > 1_000
