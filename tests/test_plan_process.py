"""isolation="process": the tool runs in a child that is really killed on timeout."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

import pytest

from memagent.plan import ExecutionError, Executor, PlanStep, run_plan_sync, tool_spec


@tool_spec(isolation="process", timeout=2.0)
def hang_forever(pid_file: str) -> None:
    tmp = Path(pid_file + ".tmp")
    tmp.write_text(str(os.getpid()))
    tmp.replace(pid_file)  # the test never sees a half-written file
    time.sleep(60)


@tool_spec(isolation="process")
def square(x: int) -> dict[str, int]:
    return {"sq": x * x, "pid": os.getpid()}


@tool_spec(isolation="process")
def fail_in_child(msg: str) -> None:
    raise KeyError(msg)


@tool_spec(isolation="process")
def die(code: int) -> None:
    os._exit(code)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _gone_soon(pid: int) -> bool:
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _alive(pid)


def test_result_comes_back_from_another_process() -> None:
    out = run_plan_sync([PlanStep("s", square, {"x": 7}, produces="r")])
    assert out["r"]["sq"] == 49 and out["r"]["pid"] != os.getpid()


def test_timed_out_tool_process_is_killed(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    with pytest.raises(ExecutionError) as info:
        run_plan_sync([PlanStep("h", hang_forever, {"pid_file": str(pid_file)})])
    assert isinstance(info.value.failures["h"], TimeoutError)
    assert _gone_soon(int(pid_file.read_text()))


def test_exception_in_child_keeps_its_type_and_traceback() -> None:
    with pytest.raises(ExecutionError) as info:
        run_plan_sync([PlanStep("f", fail_in_child, {"msg": "missing"})])
    err = info.value.failures["f"]
    assert isinstance(err, KeyError)
    assert any("in the tool process" in note for note in getattr(err, "__notes__", []))


def test_child_that_dies_is_reported() -> None:
    with pytest.raises(ExecutionError, match="exit code 3"):
        run_plan_sync([PlanStep("d", die, {"code": 3})])


def test_unpicklable_arguments_fail_cleanly() -> None:
    with pytest.raises(ExecutionError, match="could not start the tool process"):
        run_plan_sync([PlanStep("s", square, {"x": lambda: 1})])


def test_cancelling_the_plan_kills_the_child(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"

    async def main() -> Any:
        ex = Executor()
        task = asyncio.create_task(
            ex.execute_plan([PlanStep("h", hang_forever, {"pid_file": str(pid_file)})])
        )
        deadline = time.monotonic() + 1.8
        while not pid_file.exists() and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    if pid_file.exists():  # the child got far enough to report itself: it must be gone
        assert _gone_soon(int(pid_file.read_text()))
