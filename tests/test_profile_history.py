from __future__ import annotations

import json
from typing import Any

import pytest

from memagent.core import Conflict, CorruptFile, InvalidInput, MemoryHome, NotFound
from memagent.memory.profile import ProfileStore, apply_operations, history, parse_operation, undo

FOOD = "resource_user_food_prefs.json"


def op(kind: str, item: str, path: str = "food.likes", **extra: Any) -> Any:
    return parse_operation(
        {"operation": kind, "file": FOOD, "path": path, "value": {"item": item, **extra}}
    )


def content(home: MemoryHome) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((home.layout.profile / FOOD).read_text())
    data.pop("_metadata")
    return data


def test_history_lists_every_change_to_an_item(home: MemoryHome) -> None:
    store = ProfileStore(home)
    apply_operations(store, [op("append", "sushi"), op("append", "tea", "drink.likes")])
    apply_operations(store, [op("update", "Sushi", display="Sushi (salmon)")])
    apply_operations(store, [op("append", "sushi", "food.dislikes")])
    entries = history(store, "SUSHI")
    assert [(e.change, e.path) for e in entries] == [
        ("append", "food.likes"),
        ("update", "food.likes"),
        ("remove", "food.likes"),
        ("append", "food.dislikes"),
    ]
    assert entries[1].before and entries[1].before.display == "sushi".capitalize()
    assert entries[1].after and entries[1].after.display == "Sushi (salmon)"
    assert entries[2].note == "moved to food.dislikes"
    assert history(store, "tea", file=FOOD)[0].change == "append"
    assert history(store, "tea", file="resource_user_health.json") == []
    with pytest.raises(InvalidInput):
        history(store, "???")
    with pytest.raises(InvalidInput, match="at most"):
        history(store, "x" * 5000)


def test_undo_reverts_the_newest_batch_and_is_logged(home: MemoryHome) -> None:
    store = ProfileStore(home)
    apply_operations(store, [op("append", "sushi"), op("append", "ramen")])
    first = content(home)
    res = apply_operations(
        store, [op("remove", "ramen"), op("update", "sushi", display="S"), op("append", "pho")]
    )
    result = undo(store)
    assert result.undoes == res.batch
    assert content(home) == first
    last = home.ops(limit=1)[0]
    assert last.op == "undo" and last.actor == "profile"
    assert last.meta and last.meta["undoes"] == res.batch
    assert [e.change for e in history(store, "pho")] == ["append", "remove"]


def test_undo_walks_back_batch_by_batch(home: MemoryHome) -> None:
    store = ProfileStore(home)
    empty = content(home)
    apply_operations(store, [op("append", "a1")])
    one = content(home)
    apply_operations(store, [op("append", "b2")])
    undo(store)
    assert content(home) == one
    undo(store)
    assert content(home) == empty
    with pytest.raises(NotFound, match="nothing to undo"):
        undo(store)


def test_undo_a_named_batch_and_refusals(home: MemoryHome) -> None:
    store = ProfileStore(home)
    first = apply_operations(store, [op("append", "a1")])
    apply_operations(store, [op("append", "b2")])
    undo(store, first.batch)
    assert [i["item"] for i in content(home)["food"]["likes"]] == ["b2"]
    with pytest.raises(Conflict, match="undone already"):
        undo(store, first.batch)
    with pytest.raises(NotFound):
        undo(store, "b-nope")


def test_undo_refuses_when_the_item_changed_since(home: MemoryHome) -> None:
    store = ProfileStore(home)
    first = apply_operations(store, [op("append", "sushi")])
    apply_operations(store, [op("update", "sushi", display="Sushi!")])
    before = (home.layout.profile / FOOD).read_bytes()
    with pytest.raises(Conflict, match="changed since"):
        undo(store, first.batch)
    assert (home.layout.profile / FOOD).read_bytes() == before


def test_undo_of_a_move_restores_both_lists(home: MemoryHome) -> None:
    store = ProfileStore(home)
    apply_operations(store, [op("append", "x1"), op("append", "sushi"), op("append", "z9")])
    before = content(home)
    apply_operations(store, [op("append", "sushi", "food.dislikes")])
    undo(store)
    assert content(home) == before


def test_undo_never_overwrites_a_corrupt_file(home: MemoryHome) -> None:
    store = ProfileStore(home)
    apply_operations(store, [op("append", "sushi")])
    path = home.layout.profile / FOOD
    path.write_text("{ broken")
    with pytest.raises(CorruptFile):
        undo(store)
    assert path.read_text() == "{ broken"
