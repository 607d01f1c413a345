"""The executor's resource locks across processes: PostgreSQL advisory locks
plugged into `Executor(shared_locks=…)`."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Iterator

import pytest

from memagent.plan import Executor, PlanStep, tool_spec
from memagent.postgres import AdvisoryLocks, Database


@pytest.fixture(scope="module")
def db(pg_url: str) -> Iterator[Database]:
    database = Database.open(pg_url, max_size=8)
    yield database
    database.close()


def _run_two_executors(
    make: object, reads: bool, user: str, resource: str = "profile:food"
) -> list[tuple[float, float]]:
    """Two executors (as two servers would have), each in its own thread and
    event loop, run one step on the same resource; returns each step's span."""
    spans: list[tuple[float, float]] = []
    lock = threading.Lock()

    def work() -> None:
        start = time.monotonic()
        time.sleep(0.3)
        with lock:
            spans.append((start, time.monotonic()))

    spec = tool_spec(reads=[resource]) if reads else tool_spec(writes=[resource])
    tool = spec(work)

    def one() -> None:
        executor = Executor(shared_locks=make())  # type: ignore[operator]
        asyncio.run(executor.execute_plan([PlanStep("s", tool, {})]))

    threads = [threading.Thread(target=one) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(spans) == 2
    return sorted(spans)


def _overlap(spans: list[tuple[float, float]]) -> bool:
    (_, end_a), (start_b, _) = spans
    return start_b < end_a - 0.05


def test_writers_in_two_executors_exclude_each_other(db: Database) -> None:
    user = f"u-{uuid.uuid4().hex[:8]}"
    spans = _run_two_executors(lambda: AdvisoryLocks(db, user), reads=False, user=user)
    assert not _overlap(spans)


def test_without_shared_locks_two_executors_do_overlap() -> None:
    spans = _run_two_executors(lambda: None, reads=False, user="x")
    assert _overlap(spans)


def test_readers_share_and_users_do_not_block_each_other(db: Database) -> None:
    user = f"u-{uuid.uuid4().hex[:8]}"
    assert _overlap(_run_two_executors(lambda: AdvisoryLocks(db, user), reads=True, user=user))
    users = iter([f"a-{uuid.uuid4().hex[:8]}", f"b-{uuid.uuid4().hex[:8]}"])
    guard = threading.Lock()

    def make() -> AdvisoryLocks:
        with guard:
            return AdvisoryLocks(db, next(users))

    assert _overlap(_run_two_executors(make, reads=False, user=""))


def test_locks_are_released_when_a_step_fails(db: Database) -> None:
    user = f"u-{uuid.uuid4().hex[:8]}"

    @tool_spec(writes=["vault:user.md"])
    def fail() -> None:
        raise RuntimeError("boom")

    @tool_spec(writes=["vault:user.md"])
    def ok() -> str:
        return "done"

    async def go() -> None:
        executor = Executor(shared_locks=AdvisoryLocks(db, user))
        result = await executor.execute_plan([PlanStep("f", fail, {})], raise_on_failure=False)
        assert not result.ok
        other = Executor(shared_locks=AdvisoryLocks(db, user))
        done = await asyncio.wait_for(
            other.execute_plan([PlanStep("o", ok, {}, produces="r")]), timeout=5
        )
        assert done.ok

    asyncio.run(go())
