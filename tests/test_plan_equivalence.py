"""Running a batch as a plan gives exactly what running it step by step gives.

This is the promise the vault's action batches rely on: independent steps run
concurrently, conflicting ones in list order, and the outcome is the same as the
sequential one. The tools here act on an in-memory key-value store and yield to
the loop between reading and writing, so a missing edge or lock shows up as a
different result.
"""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from memagent.plan import Executor, PlanStep, tool_spec
from memagent.plan._args import resolve_refs

store: dict[str, Any] = {}


@tool_spec(reads=["kv:{key}"])
async def get(key: str) -> Any:
    await asyncio.sleep(0)
    return store.get(key)


@tool_spec(writes=["kv:{key}"])
async def append(key: str, value: Any) -> int:
    old = list(store.get(key, []))
    await asyncio.sleep(0)
    store[key] = [*old, value]
    return len(old) + 1


@tool_spec(reads=["kv:"])
async def snapshot() -> list[tuple[str, Any]]:
    first = sorted(store)
    await asyncio.sleep(0)
    return [(k, store[k]) for k in first]


@tool_spec(writes=["kv:g/"])
async def reset_group() -> int:
    gone = [k for k in store if k.startswith("g/")]
    await asyncio.sleep(0)
    for k in gone:
        del store[k]
    return len(gone)


KEYS = ["a", "b", "g/x", "g/y"]

op = st.one_of(
    st.tuples(st.just("get"), st.sampled_from(KEYS), st.none()),
    st.tuples(st.just("append"), st.sampled_from(KEYS), st.integers(0, 9)),
    st.tuples(st.just("append_ref"), st.sampled_from(KEYS), st.integers(0, 30)),
    st.tuples(st.just("snapshot"), st.none(), st.none()),
    st.tuples(st.just("reset_group"), st.none(), st.none()),
)


def build(ops: list[tuple[str, Any, Any]]) -> list[PlanStep]:
    steps: list[PlanStep] = []
    for i, (name, key, extra) in enumerate(ops):
        out = f"r{i}"
        if name == "get":
            steps.append(PlanStep(f"s{i}", get, {"key": key}, produces=out))
        elif name == "append":
            steps.append(PlanStep(f"s{i}", append, {"key": key, "value": extra}, produces=out))
        elif name == "append_ref":
            value: Any = {"$artifact": f"r{extra % i}"} if i else 0
            steps.append(PlanStep(f"s{i}", append, {"key": key, "value": value}, produces=out))
        elif name == "snapshot":
            steps.append(PlanStep(f"s{i}", snapshot, produces=out))
        else:
            steps.append(PlanStep(f"s{i}", reset_group, produces=out))
    return steps


async def sequential(steps: list[PlanStep]) -> dict[str, Any]:
    artifacts: dict[str, Any] = {}
    for s in steps:
        fn: Any = s.tool
        artifacts[s.produces[0]] = await fn(**resolve_refs(s.args, artifacts))
    return artifacts


@settings(max_examples=120, deadline=None)
@given(st.lists(op, max_size=14))
def test_plan_equals_one_step_at_a_time(ops: list[tuple[str, Any, Any]]) -> None:
    steps = build(ops)
    store.clear()
    expected = asyncio.run(sequential(steps))
    expected_store = dict(store)

    async def concurrent() -> dict[str, Any]:
        return (await Executor().execute_plan(steps)).artifacts

    store.clear()
    got = asyncio.run(concurrent())
    assert got == expected
    assert store == expected_store
