"""The resource locks: modes, prefix intention locks, writer preference, cancel safety."""

from __future__ import annotations

import asyncio
import random

import pytest

from memagent.plan._rwlock import IS, IX, LockTable, ModeLock, S, X, ancestors, lock_requests


def test_ancestors_and_requests() -> None:
    assert ancestors("vault:entities/jane.md") == ("vault:", "vault:entities/")
    assert ancestors("vault:entities/") == ("vault:",)
    assert ancestors("chunks") == ()
    assert lock_requests(["vault:entities/"], ["vault:entities/a.md"]) == (
        ("vault:", IX),
        ("vault:entities/", X),  # S + IX joined into the safe superset
        ("vault:entities/a.md", X),
    )
    assert lock_requests(["a"], ["a"]) == (("a", X),)


async def _grant_order(first: int, then: list[int]) -> list[int]:
    lock = ModeLock()
    await lock.acquire(first)
    granted: list[int] = []

    async def take(k: int, mode: int) -> None:
        await lock.acquire(mode)
        granted.append(k)

    tasks = []
    for k, mode in enumerate(then):
        tasks.append(asyncio.create_task(take(k, mode)))
        await asyncio.sleep(0)
    await asyncio.sleep(0)
    before = list(granted)
    lock.release(first)
    await asyncio.sleep(0)
    for t in tasks:
        t.cancel()
    return before


def test_compatible_modes_share_and_conflicting_ones_wait() -> None:
    assert asyncio.run(_grant_order(S, [S, IS])) == [0, 1]
    assert asyncio.run(_grant_order(IX, [IX, IS])) == [0, 1]
    assert asyncio.run(_grant_order(S, [IX])) == []
    assert asyncio.run(_grant_order(IX, [S])) == []
    assert asyncio.run(_grant_order(X, [IS])) == []


def test_writers_are_preferred_over_new_readers() -> None:
    async def main() -> list[str]:
        lock = ModeLock()
        await lock.acquire(S)
        order: list[str] = []

        async def take(name: str, mode: int) -> None:
            await lock.acquire(mode)
            order.append(name)
            await asyncio.sleep(0)
            lock.release(mode)

        w = asyncio.create_task(take("writer", X))
        await asyncio.sleep(0)
        r = asyncio.create_task(take("late reader", S))
        await asyncio.sleep(0)
        assert order == []  # the late reader may not join the held read lock
        lock.release(S)
        await asyncio.gather(w, r)
        return order

    assert asyncio.run(main()) == ["writer", "late reader"]


def test_cancelled_waiter_leaves_the_queue_and_wakes_others() -> None:
    async def main() -> None:
        lock = ModeLock()
        await lock.acquire(S)
        w = asyncio.create_task(lock.acquire(X))
        await asyncio.sleep(0)
        r = asyncio.create_task(lock.acquire(S))
        await asyncio.sleep(0)
        assert not r.done()
        w.cancel()
        with pytest.raises(asyncio.CancelledError):
            await w
        await asyncio.wait_for(r, 1)
        assert lock.held[S] == 2 and not lock.waiters

    asyncio.run(main())


def test_random_concurrent_acquisitions_never_deadlock_or_leak() -> None:
    names = ["v:", "v:a", "v:d/", "v:d/x", "v:d/y", "p:q"]

    async def main() -> None:
        table = LockTable()
        rng = random.Random(5)
        active: dict[str, int] = {}

        async def worker() -> None:
            for _ in range(40):
                reads = rng.sample(names, rng.randint(0, 2))
                writes = rng.sample(names, rng.randint(0, 2))
                req = lock_requests(reads, writes)
                await table.acquire_all(req)
                try:
                    for key, mode in req:
                        if mode == X:
                            assert active.get(key, 0) == 0
                            active[key] = -1
                    await asyncio.sleep(0)
                finally:
                    for key, mode in req:
                        if mode == X:
                            active[key] = 0
                    table.release_all(req)

        await asyncio.wait_for(asyncio.gather(*(worker() for _ in range(12))), 20)
        assert table.held() == {}

    asyncio.run(main())
