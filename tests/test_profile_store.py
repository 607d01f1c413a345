from __future__ import annotations

import json
from pathlib import Path

import pytest

from memagent.core import Conflict, CorruptFile, InvalidInput, MemoryHome, NotFound
from memagent.memory.profile import STARTER_FILES, ProfileStore, ResourceFile
from memagent.setup import init_home


def _file(home: MemoryHome, name: str = "resource_user_food_prefs.json") -> Path:
    return home.layout.profile / name


def test_init_creates_the_four_starting_resources(home: MemoryHome) -> None:
    store = ProfileStore(home)
    assert store.names() == sorted(STARTER_FILES)
    for name in STARTER_FILES:
        res = store.load(name)
        assert res.metadata.version == 1
        assert res.metadata.tags
        assert res.paths()
        assert all(not items for _, items in res.iter_lists())
    food = store.load("resource_user_food_prefs.json")
    assert "food.likes" in food.paths()
    ops = home.ops(actor="init")
    assert {r.path for r in ops} >= {f"profile/{n}" for n in STARTER_FILES}


def test_init_is_idempotent_and_keeps_edits(home: MemoryHome) -> None:
    path = _file(home)
    data = json.loads(path.read_text())
    data["_metadata"]["description"] = "mine"
    path.write_text(json.dumps(data))
    assert init_home(home) == []
    assert json.loads(path.read_text())["_metadata"]["description"] == "mine"


def _corrupt(home: MemoryHome, text: str) -> CorruptFile:
    path = _file(home)
    path.write_text(text)
    before = path.read_bytes()
    with pytest.raises(CorruptFile) as info:
        ProfileStore(home).load(path.name)
    assert path.read_bytes() == before
    return info.value


def test_syntax_error_is_reported_with_line(home: MemoryHome) -> None:
    good = _file(home).read_text()
    lines = good.splitlines()
    lines[5] = lines[5] + " oops"
    err = _corrupt(home, "\n".join(lines))
    assert err.line == 6
    assert "not valid JSON" in err.detail
    assert err.path == "profile/resource_user_food_prefs.json"


def test_schema_error_names_the_field_and_its_line(home: MemoryHome) -> None:
    text = """{
  "_metadata": {"resource_id": "user_food_prefs", "version": 1, "last_updated": "x"},
  "food": {
    "likes": [
      {"item": "tea", "display": "Tea", "added": "x"},
      {"item": "cake", "display": "Cake", "added": "x",
       "expiry": "next tuesday"}
    ]
  }
}
"""
    err = _corrupt(home, text)
    assert "food.likes[1].expiry" in err.detail
    assert err.line == 7


def test_missing_field_wrong_type_and_bad_section(home: MemoryHome) -> None:
    head = '{"_metadata": {"resource_id": "user_food_prefs", "version": 1, "last_updated": "x"},\n'
    err = _corrupt(home, head + '"food": {"likes": [{"display": "Tea", "added": "x"}]}}')
    assert "food.likes[0].item" in err.detail and "required" in err.detail.lower()
    err = _corrupt(home, head + '"food": 3}')
    assert "food" in err.detail and "list of items or an object" in err.detail
    assert err.line == 2
    err = _corrupt(home, head + '"food.likes": []}')
    assert "no dots" in err.detail


def test_duplicate_items_and_wrong_resource_id(home: MemoryHome) -> None:
    head = '{"_metadata": {"resource_id": "user_food_prefs", "version": 1, "last_updated": "x"},\n'
    err = _corrupt(
        home,
        head + '"food": {"likes": [{"item": "Cookies", "display": "C", "added": "x"},\n'
        '{"item": "cookie", "display": "C", "added": "x"}]}}',
    )
    assert "duplicate item" in err.detail and err.line == 3
    err = _corrupt(
        home, '{"_metadata": {"resource_id": "other", "version": 1, "last_updated": "x"}}'
    )
    assert "file name says 'user_food_prefs'" in err.detail
    err = _corrupt(home, "[1, 2]")
    assert "JSON object" in err.detail
    err = _corrupt(home, "{}")
    assert "_metadata" in err.detail


def test_oversized_and_binary_files_are_reported(home: MemoryHome) -> None:
    path = _file(home)
    path.write_bytes(b"\xff\xfe" + b"x" * 10)
    with pytest.raises(CorruptFile, match="UTF-8"):
        ProfileStore(home).load(path.name)
    path.write_text(" " * (home.config.limits.max_file_bytes + 1))
    with pytest.raises(CorruptFile, match="over the limit"):
        ProfileStore(home).load(path.name)


def test_unknown_and_hostile_names(home: MemoryHome) -> None:
    store = ProfileStore(home)
    with pytest.raises(NotFound, match=r"known: resource_user_food_prefs\.json"):
        store.load("resource_nope.json")
    for bad in ("../config.toml", "resource_../../x.json", "resource_A.json", "x.json"):
        with pytest.raises(InvalidInput):
            store.load(bad)
    with pytest.raises(InvalidInput):
        store.name_for("../../etc")
    assert store.name_for("user_health") == "resource_user_health.json"
    assert store.name_for("resource_user_health") == "resource_user_health.json"


def test_create_a_user_resource(home: MemoryHome) -> None:
    store = ProfileStore(home)
    res = store.create(
        "user_travel",
        tags=["travel", "trip"],
        description="Trips",
        sections=["trips.planned", "trips.done", "visa"],
        exclusive=[["trips.planned", "trips.done"]],
    )
    assert res.name == "resource_user_travel.json"
    loaded = store.load("resource_user_travel.json")
    assert loaded.paths() == ["trips.planned", "trips.done", "visa"]
    assert loaded.metadata.exclusive == [["trips.planned", "trips.done"]]
    with pytest.raises(Conflict):
        store.create("user_travel", sections=["a"])
    with pytest.raises(InvalidInput):
        store.create("user_x", sections=["a..b"])
    with pytest.raises(InvalidInput):
        store.create("user_x", sections=["a"], exclusive=[["a", "zzz"]])
    with pytest.raises(InvalidInput):
        store.create("Bad Name", sections=["a"])
    assert not (home.layout.profile / "resource_user_x.json").exists()


def test_resource_json_schema_describes_the_file(home: MemoryHome) -> None:
    schema = ResourceFile.model_json_schema(by_alias=True)
    assert "_metadata" in schema["properties"]
    assert "Item" in schema["$defs"]
    assert set(schema["$defs"]["Item"]["required"]) == {"item", "display", "added"}
