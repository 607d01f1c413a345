from __future__ import annotations

from memagent.core import MemoryHome
from memagent.memory.profile import GENERAL_RESOURCE, ProfileStore, route


def test_tags_pick_resources_ranked(home: MemoryHome) -> None:
    resources = ProfileStore(home).load_all()
    ranked = route(["allergies", "food"], resources)
    assert {r.file for r in ranked[:2]} == {
        "resource_user_food_prefs.json",
        "resource_user_health.json",
    }
    assert GENERAL_RESOURCE not in {r.file for r in ranked}
    top = route(["health", "allergy", "medication"], resources)
    assert top[0].file == "resource_user_health.json"
    assert top[0].score > (top[1].score if len(top) > 1 else 0)
    assert route(["travel"], resources)[0].file == "resource_user_routine.json"


def test_description_words_count_less_than_tags(home: MemoryHome) -> None:
    store = ProfileStore(home)
    store.create("user_pets", tags=["pet"], description="Animals and vets", sections=["pets.own"])
    resources = store.load_all()
    [first, *_] = route(["animals"], resources)
    assert first.file == "resource_user_pets.json" and first.score == 1
    assert route(["pets"], resources)[0].score == 3


def test_unknown_tags_fall_back_to_general(home: MemoryHome) -> None:
    resources = ProfileStore(home).load_all()
    assert [r.file for r in route(["quantum-chromodynamics"], resources)] == [GENERAL_RESOURCE]
    assert [r.file for r in route([], resources)] == [GENERAL_RESOURCE]
    assert route(["zzz"], {}) == []


def test_limit(home: MemoryHome) -> None:
    resources = ProfileStore(home).load_all()
    assert len(route(["food", "health", "routine", "music"], resources, limit=2)) == 2
