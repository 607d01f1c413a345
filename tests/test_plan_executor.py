"""Executor: results, failures, timeouts, retries, caps, cancellation, traces."""

from __future__ import annotations

import ast
import asyncio
import graphlib
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import memagent.plan
from memagent.plan import (
    ExecutionError,
    Executor,
    PlanError,
    Planner,
    PlanStep,
    RetryPolicy,
    run_plan,
    run_plan_sync,
    tool_spec,
)

FAST_RETRY = RetryPolicy(max_retries=3, base_delay=0.001, max_delay=0.002)


def add(a: int, b: int) -> int:
    return a + b


@tool_spec(isolation="inline")
def split(text: str) -> dict[str, str]:
    head, _, tail = text.partition(" ")
    return {"head": head, "tail": tail}


@tool_spec
async def boom(msg: str = "boom") -> None:
    raise ValueError(msg)


def test_run_plan_returns_artifacts_including_initial_ones() -> None:
    out = run_plan_sync(
        [
            PlanStep("s", split, {"text": {"$artifact": "text"}}, produces=["head", "tail"]),
            PlanStep("n", add, {"a": 1, "b": 2}, produces="n"),
            PlanStep(
                "j",
                add,
                {"a": {"$artifact": "head"}, "b": {"$artifact": "tail"}},
                produces="joined",
            ),
        ],
        initial_artifacts={"text": "hello world"},
    )
    assert out == {
        "text": "hello world",
        "head": "hello",
        "tail": "world",
        "n": 3,
        "joined": "helloworld",
    }


def test_empty_plan_returns_the_initial_artifacts() -> None:
    assert run_plan_sync([], initial_artifacts={"a": 1}) == {"a": 1}


def test_nested_artifact_references_are_resolved() -> None:
    def echo(x: Any) -> Any:
        return x

    out = run_plan_sync(
        [
            PlanStep("a", add, {"a": 1, "b": 1}, produces="two"),
            PlanStep(
                "b",
                echo,
                {"x": {"k": [{"$artifact": "two"}, ({"$artifact": "two"},)]}},
                produces="out",
            ),
        ]
    )
    assert out["out"] == {"k": [2, (2,)]}


def test_multi_produce_needs_a_dict_with_exactly_those_keys() -> None:
    with pytest.raises(ExecutionError, match="exactly those keys") as info:
        run_plan_sync([PlanStep("a", add, {"a": 1, "b": 2}, produces=["x", "y"])])
    assert set(info.value.failures) == {"a"}


def test_tools_by_name_from_a_registry() -> None:
    out = run_plan_sync([PlanStep("a", "add", {"a": 2, "b": 3}, produces="r")], tools={"add": add})
    assert out["r"] == 5


def test_missing_initial_artifact_is_a_plan_error_and_nothing_runs() -> None:
    calls: list[int] = []

    def track() -> None:
        calls.append(1)

    plan = Planner().create_plan(
        [PlanStep("t", track), PlanStep("u", add, {"a": {"$artifact": "x"}, "b": 1})],
        initial_artifacts=["x"],
    )
    with pytest.raises(PlanError, match=r"\['x'\]"):
        asyncio.run(Executor().execute_plan(plan))
    assert calls == []


def test_failed_step_skips_dependents_but_independent_branches_finish() -> None:
    done: list[str] = []

    @tool_spec
    async def ok(name: str) -> str:
        await asyncio.sleep(0.01)
        done.append(name)
        return name

    steps = [
        PlanStep("bad", boom, {"msg": "first"}, produces="x"),
        PlanStep("child", ok, {"name": {"$artifact": "x"}}, produces="y"),
        PlanStep("grandchild", ok, {"name": {"$artifact": "y"}}),
        PlanStep("bad2", boom, {"msg": "second"}),
        PlanStep("free", ok, {"name": "free"}),
        PlanStep("free2", ok, {"name": "free2"}, depends_on="free"),
    ]
    with pytest.raises(ExecutionError) as info:
        run_plan_sync(steps)
    err = info.value
    assert set(err.failures) == {"bad", "bad2"}
    assert isinstance(err.failures["bad"], ValueError) and "first" in str(err)
    assert "step 'bad2': ValueError: second" in str(err)
    assert done == ["free", "free2"]
    assert "fail_fast" not in str(err)
    result = err.result
    assert result is not None and result.cancelled_by is None
    assert result.outcomes["child"].status == "skipped"
    assert "'bad'" in (result.outcomes["child"].reason or "")
    assert result.outcomes["grandchild"].status == "skipped"
    assert "root failure: 'bad'" in (result.outcomes["grandchild"].reason or "")
    assert result.value("free2") == "free2"
    with pytest.raises(ValueError, match="first"):
        result.value("bad")
    with pytest.raises(ExecutionError, match="'child' did not run"):
        result.value("child")


def test_raise_on_failure_false_returns_every_outcome() -> None:
    async def main() -> Any:
        return await Executor().execute_plan(
            [PlanStep("bad", boom), PlanStep("good", add, {"a": 1, "b": 1}, produces="g")],
            raise_on_failure=False,
        )

    result = asyncio.run(main())
    assert not result.ok and result.cancelled_by is None
    assert result.outcomes["good"].value == 2 and result.artifacts["g"] == 2
    assert set(result.failures) == {"bad"}


def test_fail_fast_cancels_the_rest() -> None:
    @tool_spec
    async def slow() -> str:
        await asyncio.sleep(5)
        return "late"

    @tool_spec
    async def fail_soon() -> None:
        await asyncio.sleep(0.01)
        raise RuntimeError("stop")

    t = time.perf_counter()
    with pytest.raises(ExecutionError, match="fail_fast") as info:
        run_plan_sync(
            [
                PlanStep("slow", slow),
                PlanStep("f", fail_soon),
                PlanStep("after", slow, depends_on="slow"),
            ],
            fail_fast=True,
        )
    assert time.perf_counter() - t < 4
    result = info.value.result
    assert result is not None
    assert result.cancelled_by == "fail_fast: step 'f' failed"
    assert result.outcomes["slow"].status == "cancelled"
    assert result.outcomes["after"].status == "cancelled"
    assert set(result.failures) == {"f"}


def test_async_timeout() -> None:
    @tool_spec(timeout=0.05)
    async def hang() -> None:
        await asyncio.sleep(10)

    t = time.perf_counter()
    with pytest.raises(ExecutionError, match=r"timed out after 0\.05s"):
        run_plan_sync([PlanStep("h", hang)])
    assert time.perf_counter() - t < 5


def test_default_timeout_applies_to_threads_too() -> None:
    release = threading.Event()

    def block() -> None:
        release.wait(10)

    t = time.perf_counter()
    try:
        with pytest.raises(ExecutionError) as info:
            run_plan_sync([PlanStep("b", block)], default_timeout=0.05)
        assert isinstance(info.value.failures["b"], TimeoutError)
        # The thread cannot be killed, but run_plan does not wait for it either.
        assert time.perf_counter() - t < 5 and not release.is_set()
    finally:
        release.set()


def test_idempotent_tool_is_retried_until_it_succeeds() -> None:
    attempts: list[int] = []

    @tool_spec(idempotent=True)
    def flaky() -> str:
        attempts.append(1)
        if len(attempts) < 3:
            raise ConnectionError("transient")
        return "ok"

    async def main() -> Any:
        return await Executor(retry=FAST_RETRY).execute_plan([PlanStep("f", flaky, produces="r")])

    result = asyncio.run(main())
    assert result.artifacts["r"] == "ok"
    assert len(attempts) == 3
    assert result.outcomes["f"].attempts == 3 and result.trace.steps[0].attempts == 3


def test_retries_stop_at_max_retries() -> None:
    attempts: list[int] = []

    @tool_spec(idempotent=True)
    async def always() -> None:
        attempts.append(1)
        raise ConnectionError("down")

    with pytest.raises(ExecutionError):
        asyncio.run(Executor(retry=FAST_RETRY).execute_plan([PlanStep("a", always)]))
    assert len(attempts) == 1 + FAST_RETRY.max_retries


def test_non_idempotent_failure_is_never_retried() -> None:
    attempts: list[int] = []

    @tool_spec(idempotent=False)
    async def once() -> None:
        attempts.append(1)
        raise ConnectionError("down")

    with pytest.raises(ExecutionError):
        asyncio.run(Executor(retry=FAST_RETRY).execute_plan([PlanStep("a", once)]))
    assert attempts == [1]


def test_backoff_grows_exponentially_with_bounded_jitter() -> None:
    import random

    policy = RetryPolicy(base_delay=0.1, multiplier=2, max_delay=0.5, jitter=0.5)
    rng = random.Random(1)
    for attempt, full in [(1, 0.1), (2, 0.2), (3, 0.4), (4, 0.5), (9, 0.5)]:
        for _ in range(20):
            d = policy.delay(attempt, rng)
            assert full * 0.5 <= d <= full
    with pytest.raises(ValueError):
        RetryPolicy(max_retries=-1)
    with pytest.raises(ValueError):
        RetryPolicy(jitter=2)


def test_a_slow_step_never_holds_back_unrelated_ones() -> None:
    @tool_spec
    async def nap(s: float) -> float:
        await asyncio.sleep(s)
        return time.perf_counter()

    async def main() -> Any:
        return await Executor().execute_plan(
            [
                PlanStep("slow", nap, {"s": 0.3}, produces="slow"),
                PlanStep("a1", nap, {"s": 0.01}, produces="a1"),
                PlanStep("a2", nap, {"s": 0.01}, produces="a2", depends_on="a1"),
                PlanStep("a3", nap, {"s": 0.01}, produces="a3", depends_on="a2"),
            ]
        )

    result = asyncio.run(main())
    assert result.artifacts["a3"] < result.artifacts["slow"]
    a3 = result.trace.steps[3]
    slow = result.trace.steps[0]
    assert a3.end is not None and slow.end is not None and a3.end < slow.end


def test_concurrency_cap_and_global_limit() -> None:
    live = {"cap": 0, "cap_max": 0, "all": 0, "all_max": 0}

    async def track(key: str) -> None:
        live[key] += 1
        live["all"] += 1
        live[key + "_max"] = max(live[key + "_max"], live[key])
        live["all_max"] = max(live["all_max"], live["all"])
        await asyncio.sleep(0.005)
        live[key] -= 1
        live["all"] -= 1

    @tool_spec(concurrency_cap=2)
    async def capped() -> None:
        await track("cap")

    async def main(limit: int | None) -> None:
        await Executor(max_concurrency=limit).execute_plan(
            [PlanStep(f"c{i}", capped) for i in range(10)]
        )

    asyncio.run(main(None))
    assert live["cap_max"] == 2
    live.update(cap_max=0, all_max=0)

    @tool_spec
    async def free() -> None:
        live["all"] += 1
        live["all_max"] = max(live["all_max"], live["all"])
        await asyncio.sleep(0.005)
        live["all"] -= 1

    async def main2() -> None:
        await Executor(max_concurrency=3).execute_plan([PlanStep(f"f{i}", free) for i in range(12)])

    asyncio.run(main2())
    assert live["all_max"] == 3


def test_cancellation_from_outside_releases_every_lock() -> None:
    @tool_spec(writes=["vault:user.md", "vault:entities/"], reads=["profile:food"])
    async def hold(flag: Any) -> None:
        flag.set()
        await asyncio.sleep(10)

    @tool_spec(writes=["vault:entities/jane.md", "profile:food"])
    async def quick() -> str:
        return "ran"

    async def main() -> Any:
        executor = Executor()
        flag = asyncio.Event()
        task = asyncio.create_task(
            executor.execute_plan(
                [
                    PlanStep("h", hold, {"flag": flag}),
                    PlanStep("h2", hold, {"flag": flag}, depends_on="h"),
                ]
            )
        )
        await flag.wait()
        assert executor.held_resources()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert executor.held_resources() == {}
        async with asyncio.timeout(2):
            result = await executor.execute_plan([PlanStep("q", quick, produces="r")])
        return result.artifacts["r"]

    assert asyncio.run(main()) == "ran"


def test_concurrent_plans_on_one_executor_share_locks() -> None:
    log: list[tuple[str, str]] = []

    @tool_spec(writes=["vault:{path}"])
    async def write(path: str, tag: str) -> None:
        log.append(("start", tag))
        await asyncio.sleep(0.01)
        log.append(("end", tag))

    @tool_spec(reads=["vault:entities/"])
    async def scan(tag: str) -> None:
        log.append(("start", tag))
        await asyncio.sleep(0.01)
        log.append(("end", tag))

    async def main() -> None:
        ex = Executor()
        await asyncio.gather(
            ex.execute_plan([PlanStep("w", write, {"path": "entities/a.md", "tag": "w1"})]),
            ex.execute_plan([PlanStep("s", scan, {"tag": "s"})]),
            ex.execute_plan([PlanStep("w", write, {"path": "entities/b.md", "tag": "w2"})]),
        )

    asyncio.run(main())
    # The scan conflicts with both writes, so it never overlaps either of them.
    s_start = log.index(("start", "s"))
    s_end = log.index(("end", "s"))
    for tag in ("w1", "w2"):
        a, b = log.index(("start", tag)), log.index(("end", tag))
        assert b < s_start or a > s_end


def test_trace_exports_json_and_chrome_trace_events() -> None:
    @tool_spec(writes=["x:"])
    async def w() -> None:
        await asyncio.sleep(0.01)

    async def main() -> Any:
        return await Executor().execute_plan(
            [
                PlanStep("a", w),
                PlanStep("b", w),
                PlanStep("c", boom, depends_on="a"),
                PlanStep("d", add, {"a": 1, "b": 1}, depends_on="c"),
            ],
            raise_on_failure=False,
        )

    result = asyncio.run(main())
    data = json.loads(result.trace.to_json())
    by_id = {s["step_id"]: s for s in data["steps"]}
    assert by_id["a"]["status"] == "ok" and by_id["c"]["status"] == "failed"
    assert by_id["d"]["status"] == "skipped" and by_id["d"]["start"] is None
    assert by_id["c"]["error"].startswith("ValueError")
    assert by_id["b"]["start"] >= by_id["a"]["end"]
    assert by_id["b"]["attempts"] == 1
    chrome = result.trace.to_chrome_trace()
    json.dumps(chrome)
    complete = [e for e in chrome["traceEvents"] if e["ph"] == "X" and e["cat"] != "lock_wait"]
    assert {e["name"] for e in complete} == {"a", "b", "c"}
    assert all(e["dur"] >= 0 and e["ts"] >= 0 for e in complete)


def test_run_plan_is_the_coroutine_as_the_seed_awaits_it() -> None:
    async def main() -> Any:
        artifacts = await run_plan([PlanStep("a", add, {"a": 1, "b": 1}, produces="x")])
        return artifacts

    assert asyncio.run(main()) == {"x": 2}


def test_run_plan_sync_inside_a_loop_points_to_await_run_plan() -> None:
    async def main() -> Any:
        with pytest.raises(RuntimeError, match=r"await run_plan\(\)"):
            run_plan_sync([PlanStep("a", add, {"a": 1, "b": 1})])
        return await run_plan([PlanStep("a", add, {"a": 1, "b": 1}, produces="x")])

    assert asyncio.run(main()) == {"x": 2}


def test_plan_package_has_no_import_cycle() -> None:
    """errors → outcome → trace, executor → outcome: no module of `plan` imports one
    that imports it back (not even for type checking)."""
    pkg = Path(memagent.plan.__file__).parent
    graph: dict[str, set[str]] = {}
    for path in pkg.glob("*.py"):
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            module = node.module or "" if isinstance(node, ast.ImportFrom) else ""
            if module.startswith("memagent.plan."):
                deps.add(module.rsplit(".", 1)[1])
        graph[path.stem] = deps
    graphlib.TopologicalSorter(graph).prepare()  # raises CycleError on a cycle


def test_bad_executor_settings_are_refused() -> None:
    with pytest.raises(ValueError):
        Executor(max_concurrency=0)
    with pytest.raises(ValueError):
        Executor(default_timeout=0)
