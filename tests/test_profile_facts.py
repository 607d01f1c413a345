"""Mechanical planning: what the model read becomes operations by rule (negation,
correction, expiry, names, grounding), tested with fixed dates and no model."""

from __future__ import annotations

from datetime import date

import pytest

from memagent.core import MemoryHome
from memagent.memory.profile import ProfileStore, apply_operations
from memagent.memory.profile.facts import Extracted, extraction_schema, grounded, plan

WED = date(2026, 3, 4)


def store_of(home: MemoryHome) -> ProfileStore:
    return ProfileStore(home, today=lambda: WED)


def said(store: ProfileStore, text: str, *facts: tuple[str, str, str]) -> list[str]:
    """Plan `facts` read from `text` and apply them; the profile's lines after."""
    extracted = [Extracted(kind=k, value=v, name=n) for k, v, n in facts]  # type: ignore[arg-type]
    planned = plan(extracted, [text], store.load_all(), WED)
    result = apply_operations(store, planned.operations, op="learn")
    assert result.ok, result.error
    return lines(store)


def lines(store: ProfileStore) -> list[str]:
    out = []
    for res in store.load_all().values():
        for path, items in res.iter_lists():
            for i in items:
                if not i.expired(store.today()):
                    until = f" @{i.expiry.isoformat()}" if i.expiry else ""
                    out.append(f"{path}: {i.display}{until}")
    return sorted(out)


def test_an_allergy_needs_the_word(home: MemoryHome) -> None:
    s = store_of(home)
    assert said(s, "I can't stand cilantro.", ("allergy", "cilantro", "")) == [
        "food.dislikes: Dislikes cilantro"
    ]
    assert "health.allergies: Allergic to shellfish" in said(
        s, "I'm allergic to shellfish.", ("allergy", "shellfish", "")
    )


def test_a_like_said_with_hate_is_a_dislike(home: MemoryHome) -> None:
    assert said(store_of(home), "I hate horror movies.", ("like", "horror movies", "")) == [
        "preferences.dislikes: Dislikes horror movies"
    ]


def test_no_more_x_removes_it(home: MemoryHome) -> None:
    s = store_of(home)
    said(s, "I love sushi.", ("food_like", "sushi", ""))
    assert said(s, "No more sushi for me.", ("food_like", "sushi", "")) == []


def test_not_anymore_with_dislike_moves_it(home: MemoryHome) -> None:
    s = store_of(home)
    said(s, "I love coffee.", ("drink_like", "coffee", ""))
    got = said(s, "I don't like coffee anymore.", ("drink_like", "coffee", ""))
    assert got == ["drink.dislikes: Dislikes coffee"]


def test_a_negated_thing_is_removed_even_if_the_model_missed_it(home: MemoryHome) -> None:
    s = store_of(home)
    said(s, "I love coffee.", ("drink_like", "coffee", ""))
    got = said(s, "Actually I prefer tea now, not coffee.", ("drink_like", "tea", ""))
    assert got == ["drink.likes: Likes tea"]


def test_not_allergic_any_more(home: MemoryHome) -> None:
    s = store_of(home)
    said(s, "I'm allergic to kiwi.", ("allergy", "kiwi", ""))
    assert said(s, "Turns out I'm not allergic to kiwi after all.", ("allergy", "kiwi", "")) == []


def test_correction_of_a_single_valued_fact_updates_it(home: MemoryHome) -> None:
    s = store_of(home)
    said(s, "I live in Porto.", ("home", "Porto", ""))
    assert said(s, "I moved to Lisbon.", ("home", "Lisbon", "")) == [
        "personal.facts: Lives in Lisbon"
    ]
    said(s, "I work as a nurse.", ("work", "nurse", ""))
    got = said(s, "I'm not a nurse anymore, I work as a paramedic now.", ("work", "paramedic", ""))
    assert "personal.facts: Works as paramedic" in got and len(got) == 2


def test_a_pets_name_is_a_fact_about_the_pet(home: MemoryHome) -> None:
    s = store_of(home)
    assert said(s, "My dog is called Rex.", ("pet", "dog", "Rex")) == [
        "personal.facts: Dog named Rex"
    ]
    # the model read the name as a like, with a placeholder: Python reads the clause
    got = said(s, "Actually my dog is called Nova now.", ("like", "Nova", "<NAME>"))
    assert got == ["personal.facts: Dog named Nova"]
    got = said(s, "My son Leo just turned seven.", ("family", "son", ""))
    assert "personal.facts: Son: Leo" in got


def test_expiry_from_the_statement_date(home: MemoryHome) -> None:
    s = store_of(home)
    got = said(s, "I'm in Berlin until Friday.", ("whereabouts", "Berlin", ""))
    assert got == ["whereabouts.current: In Berlin (until Fri 2026-03-06) @2026-03-06"]
    got = said(
        s, "Change of plans, I'm in Brussels until Tuesday.", ("whereabouts", "Brussels", "")
    )
    assert got == ["whereabouts.current: In Brussels (until Tue 2026-03-10) @2026-03-10"]
    assert said(s, "I'm back home from Brussels now.", ("whereabouts", "Brussels", "")) == []


def test_routine_daily_or_weekly(home: MemoryHome) -> None:
    s = store_of(home)
    got = said(s, "I play tennis on Saturdays.", ("routine", "tennis", ""))
    assert got == ["routine.weekly: I play tennis on Saturdays"]


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("I'm vegetarian.", ("allergy", "peanuts", "")),  # a copied example
        ("I'm vegetarian.", ("allergy", "<FOOD>", "")),  # a placeholder
        ("Tom is allergic to shellfish.", ("allergy", "shellfish", "")),  # someone else
        ("My sister is vegan.", ("diet", "vegan", "")),
        ("Alice lives in Denver.", ("home", "Denver", "")),
        ("My friend loves cricket.", ("like", "cricket", "")),
    ],
)
def test_ungrounded_or_other_peoples_facts_are_dropped(
    home: MemoryHome, text: str, fact: tuple[str, str, str]
) -> None:
    assert said(store_of(home), text, fact) == []


def test_grounding_folds_plurals_and_case() -> None:
    assert grounded("Peanuts", "I'm allergic to peanut butter.")
    assert not grounded("peanuts", "I'm vegetarian.")
    assert not grounded("the", "the")  # no content words


def test_the_schema_has_nothing_llama_cpp_cannot_build() -> None:
    unsupported = {"pattern", "format", "$ref", "patternProperties", "oneOf", "not", "if"}

    def walk(node: object) -> None:
        if isinstance(node, dict):
            assert not unsupported & set(node), node
            if node.get("type") == "string" and "enum" not in node:
                assert "maxLength" in node, node
            if node.get("type") == "array":
                assert "maxItems" in node, node
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(extraction_schema())


def test_rules_read_what_a_small_model_misses(home: MemoryHome) -> None:
    from memagent.memory.profile.rules import merge, rule_facts

    s = store_of(home)
    for text in (
        "My dog is called Rex.",
        "My wife's name is Priya.",
        "I don't eat red meat.",
        "I'm from Scotland originally but I live in Leeds.",
        "Please keep your answers short.",
    ):
        facts = merge(rule_facts([text]), [Extracted(kind="home", value="Scotland")])
        planned = plan(facts, [text], s.load_all(), WED)
        assert apply_operations(s, planned.operations, op="learn").ok
    assert lines(s) == [
        "communication.style: Please keep your answers short",
        "diet.restrictions: No red meat",
        "personal.facts: Dog named Rex",
        "personal.facts: Lives in Leeds",
        "personal.facts: Wife: Priya",
    ]


def test_stems_ground_a_reworded_value() -> None:
    assert grounded("lactose intolerance", "I'm lactose intolerant.")
    assert grounded("swimming", "I swim before work.")
    assert not grounded("peas", "I'm allergic to peanuts.")
