from __future__ import annotations

from datetime import date
from typing import Any

import pytest
from pydantic import ValidationError

from memagent.core import InvalidInput, MemoryHome
from memagent.memory.profile import (
    ProfileStore,
    apply_operations,
    parse_operation,
    prune,
    resolve_expiry,
)

FOOD = "resource_user_food_prefs.json"
ROUTINE = "resource_user_routine.json"
TODAY = date(2026, 3, 2)


@pytest.fixture
def store(home: MemoryHome) -> ProfileStore:
    return ProfileStore(home, today=lambda: TODAY)


def op(
    kind: str,
    item: str = "kung_pao_chicken",
    *,
    path: str = "food.likes",
    file: str = FOOD,
    **extra: Any,
) -> dict[str, Any]:
    value: dict[str, Any] = {"item": item, **extra.pop("value", {})}
    return {"operation": kind, "file": file, "path": path, "value": value, **extra}


def run(store: ProfileStore, *ops: dict[str, Any]) -> Any:
    return apply_operations(store, [parse_operation(o) for o in ops])


def items(store: ProfileStore, path: str = "food.likes", file: str = FOOD) -> list[Any]:
    found = store.load(file).items_at(path)
    assert found is not None
    return found


def test_append_sets_python_fields(store: ProfileStore) -> None:
    res = run(store, op("append", value={"display": "Kung pao chicken"}, expiry=None))
    assert res.ok and res.written == [FOOD]
    [item] = items(store)
    assert (item.item, item.display, item.expiry, item.updated) == (
        "kung_pao_chicken",
        "Kung pao chicken",
        None,
        None,
    )
    assert item.added.startswith(str(date.today().year))
    assert store.load(FOOD).metadata.version == 2


def test_append_default_display_and_slugged_key(store: ProfileStore) -> None:
    run(store, op("append", "Green  Tea!", path="drink.likes"))
    [item] = items(store, "drink.likes")
    assert (item.item, item.display) == ("green_tea", "Green tea")


def test_duplicate_append_is_no_change_with_note(store: ProfileStore) -> None:
    run(store, op("append", "Cookies"))
    res = run(store, op("append", "  cookie "), op("append", "COOKIES!"))
    assert [o.status for o in res.outcomes] == ["no_change", "no_change"]
    assert "already present" in (res.outcomes[0].note or "")
    assert res.written == []
    assert len(items(store)) == 1
    assert store.load(FOOD).metadata.version == 2


def test_update_partial_fields(store: ProfileStore) -> None:
    run(store, op("append", "tea", path="drink.likes", value={"note": "green"}))
    res = run(store, op("update", "Tea", path="drink.likes", value={"display": "Tea (hot)"}))
    assert res.ok and res.outcomes[0].status == "applied"
    [item] = items(store, "drink.likes")
    assert (item.display, item.note) == ("Tea (hot)", "green")
    assert item.updated is not None
    res = run(store, op("update", "tea", path="drink.likes", expiry="+3d"))
    assert items(store, "drink.likes")[0].expiry == date(2026, 3, 5)
    res = run(store, op("update", "tea", path="drink.likes", expiry=None))
    assert items(store, "drink.likes")[0].expiry is None
    res = run(store, op("update", "tea", path="drink.likes", value={"display": "Tea (hot)"}))
    assert res.outcomes[0].status == "no_change"


def test_remove(store: ProfileStore) -> None:
    run(store, op("append", "a"), op("append", "bb"), op("append", "ccc"))
    res = run(store, op("remove", "BB"))
    assert res.ok
    assert [i.item for i in items(store)] == ["a", "ccc"]


def test_no_change_writes_nothing(store: ProfileStore) -> None:
    res = run(store, {"operation": "no_change", "reason": "small talk"})
    assert res.ok and res.written == [] and res.outcomes[0].note == "small talk"
    assert store.load(FOOD).metadata.version == 1


def test_exclusive_lists_move_instead_of_duplicating(store: ProfileStore) -> None:
    run(store, op("append", "sushi"))
    res = run(store, op("append", "Sushi", path="food.dislikes"))
    assert res.outcomes[0].note == "moved from food.likes"
    assert items(store) == []
    assert [i.item for i in items(store, "food.dislikes")] == ["sushi"]


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (op("append", file="resource_nope.json"), "no profile resource"),
        (op("append", path="food.nope"), "no section 'food.nope'"),
        (op("append", path="food"), "group of sections"),
        (op("update", "ghost"), "no item 'ghost'"),
        (op("remove", "ghost"), "no item 'ghost'"),
        (op("append", "!!!"), "no letters or digits"),
        (op("append", expiry="2020-01-01"), "in the past"),
    ],
)
def test_bad_operation_rejects_the_whole_batch(
    store: ProfileStore, home: MemoryHome, bad: dict[str, Any], message: str
) -> None:
    run(store, op("append", "tea", path="drink.likes"))
    before = {p.name: p.read_bytes() for p in home.layout.profile.iterdir()}
    log_before = home.layout.ops_log.read_bytes()
    res = run(
        store,
        op("append", "cake"),
        op("remove", "tea", path="drink.likes"),
        bad,
        op("append", "pie"),
    )
    assert not res.ok
    assert [o.status for o in res.outcomes] == [
        "not_applied",
        "not_applied",
        "rejected",
        "not_applied",
    ]
    assert message in (res.outcomes[2].note or "")
    assert res.error and res.error.startswith("operation 2:")
    assert {p.name: p.read_bytes() for p in home.layout.profile.iterdir()} == before
    assert home.layout.ops_log.read_bytes() == log_before


@pytest.mark.parametrize(
    "raw",
    [
        {"operation": "explode", "file": FOOD, "path": "food.likes", "value": {"item": "x"}},
        {"operation": "append", "file": FOOD, "path": "food.likes", "value": "x"},
        {
            "operation": "append",
            "file": FOOD,
            "path": "food.likes",
            "value": {"item": "x", "added": "2020-01-01"},
        },
        {
            "operation": "append",
            "file": FOOD,
            "path": "food.likes",
            "value": {"item": "x", "updated": "2020-01-01"},
        },
        {"operation": "append", "file": "../../config.toml", "path": "a", "value": {"item": "x"}},
        {"operation": "append", "file": FOOD, "path": "../x", "value": {"item": "x"}},
        {
            "operation": "append",
            "file": FOOD,
            "path": "food.likes",
            "value": {"item": "x"},
            "expiry": "tomorrow",
        },
        {
            "operation": "append",
            "file": FOOD,
            "path": "food.likes",
            "value": {"item": "x"},
            "expiry": "2026-13-45",
        },
        {"operation": "append", "file": FOOD, "path": "food.likes", "value": {"item": "x" * 201}},
        {"operation": "remove", "file": FOOD, "path": "food.likes"},
        [],
        "append",
    ],
)
def test_malformed_operations_do_not_parse(raw: Any) -> None:
    with pytest.raises(ValidationError):
        parse_operation(raw)


def test_expiry_forms() -> None:
    assert resolve_expiry("+7d", TODAY) == date(2026, 3, 9)
    assert resolve_expiry("+2w", TODAY) == date(2026, 3, 16)
    assert resolve_expiry("2026-04-01", TODAY) == date(2026, 4, 1)
    assert resolve_expiry(None, TODAY) is None
    with pytest.raises(ValueError):
        resolve_expiry("+9999d", TODAY)


def test_expired_items_are_hidden_and_pruned(home: MemoryHome) -> None:
    day = [TODAY]
    store = ProfileStore(home, today=lambda: day[0])
    run(
        store,
        op("append", "in_berlin", file=ROUTINE, path="whereabouts.current", expiry="+7d"),
        op("append", "gym", file=ROUTINE, path="routine.daily"),
    )
    day[0] = date(2026, 3, 9)
    assert store.load(ROUTINE).to_json(today=day[0])["whereabouts"]["current"] != []
    day[0] = date(2026, 3, 10)
    assert store.load(ROUTINE).to_json(today=day[0])["whereabouts"]["current"] == []
    assert prune(store) == {ROUTINE: ["in_berlin"]}
    assert items(store, "whereabouts.current", ROUTINE) == []
    assert [i.item for i in items(store, "routine.daily", ROUTINE)] == ["gym"]
    assert prune(store) == {}
    assert home.ops(limit=1)[0].op == "prune"


def test_expired_items_are_pruned_on_write_and_do_not_block_append(home: MemoryHome) -> None:
    day = [TODAY]
    store = ProfileStore(home, today=lambda: day[0])
    run(store, op("append", "pizza", expiry="+1d"), op("append", "cheese"))
    day[0] = date(2026, 3, 4)
    res = run(store, op("append", "pizza"))
    assert res.outcomes[0].status == "applied"
    [cheese, pizza] = sorted(items(store), key=lambda i: i.item)
    assert (pizza.item, pizza.expiry, cheese.item) == ("pizza", None, "cheese")
    changes = home.ops(limit=1)[0].meta["changes"]  # type: ignore[index]
    assert [c["op"] for c in changes] == ["expire", "append"]


def test_batch_across_files_and_size_limit(home: MemoryHome, store: ProfileStore) -> None:
    res = run(
        store,
        op("append", "tea", path="drink.likes"),
        op("append", "run", file=ROUTINE, path="routine.daily"),
    )
    assert sorted(res.written) == [FOOD, ROUTINE]
    batch_ids = {r.meta["batch"] for r in home.ops(limit=2)}  # type: ignore[index]
    assert batch_ids == {res.batch}
    home.config.limits.max_file_bytes = 3000
    before = (home.layout.profile / FOOD).read_bytes()
    res = run(store, *[op("append", f"dish {i}", value={"display": "d" * 400}) for i in range(8)])
    assert not res.ok and "limits.max_file_bytes" in (res.error or "")
    assert all(o.status == "not_applied" for o in res.outcomes)
    assert (home.layout.profile / FOOD).read_bytes() == before
    routine_before = (home.layout.profile / ROUTINE).read_bytes()
    res = run(
        store,
        op("append", "nap", file=ROUTINE, path="routine.daily"),
        *[op("append", f"dish {i}", value={"display": "d" * 400}) for i in range(8)],
    )
    assert not res.ok and "limits.max_file_bytes" in (res.error or "")
    assert (home.layout.profile / ROUTINE).read_bytes() == routine_before
    assert (home.layout.profile / FOOD).read_bytes() == before


def test_too_many_operations(store: ProfileStore) -> None:
    with pytest.raises(InvalidInput, match="limit"):
        apply_operations(store, [parse_operation({"operation": "no_change"})] * 1001)


def test_corrupt_target_is_reported_and_not_overwritten(
    home: MemoryHome, store: ProfileStore
) -> None:
    path = home.layout.profile / FOOD
    path.write_text('{"_metadata": {"resource_id": "user_food_prefs",\n "version": "x"}}')
    before = path.read_bytes()
    res = run(store, op("append", "tea", path="drink.likes"))
    assert not res.ok
    assert "profile/resource_user_food_prefs.json, line 2" in (res.error or "")
    assert path.read_bytes() == before
