"""8 processes × 200 appends to one resource: nothing lost, nothing doubled."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from memagent.core import MemoryHome
from memagent.memory.profile import ProfileStore, apply_operations, match_key, parse_operation

PROCS = 8
APPENDS = 200
SPAN = 400
FOOD = "resource_user_food_prefs.json"


def key_for(proc: int, i: int) -> int:
    return (proc * 37 + i) % SPAN


def _worker(root: str, proc: int) -> int:
    store = ProfileStore(MemoryHome.open(root))
    applied = 0
    for i in range(APPENDS):
        n = key_for(proc, i)
        spelled = f"Dish {n}" if proc % 2 else f"dishes-{n}!"
        op = parse_operation(
            {"operation": "append", "file": FOOD, "path": "food.likes", "value": {"item": spelled}}
        )
        result = apply_operations(store, [op])
        assert result.ok, result.error
        applied += result.outcomes[0].status == "applied"
    return applied


def test_parallel_appends_keep_every_item_exactly_once(home: MemoryHome) -> None:
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(PROCS) as pool:
        applied = pool.starmap(_worker, [(str(home.root), p) for p in range(PROCS)])
    expected = {match_key(f"dish {key_for(p, i)}") for p in range(PROCS) for i in range(APPENDS)}
    items = ProfileStore(home).load(FOOD).items_at("food.likes")
    assert items is not None
    keys = [match_key(i.item) for i in items]
    assert len(keys) == len(set(keys))
    assert set(keys) == expected
    assert sum(applied) == len(expected)
    writes = [r for r in home.ops(limit=10_000, actor="profile") if r.path.endswith(FOOD)]
    assert len(writes) == len(expected)
    assert not list(Path(home.layout.profile).glob(".tmp-*"))
