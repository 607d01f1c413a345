"""Mechanical planning: what the model read becomes operations by rule (negation,
correction, expiry, names, grounding), tested with fixed dates and no model."""

from __future__ import annotations

from datetime import date

import pytest

from memagent.core import MemoryHome
from memagent.memory.profile import AppendOp, ProfileStore, apply_operations
from memagent.memory.profile.fact_schema import Extracted, extraction_schema
from memagent.memory.profile.facts import (
    clause_of,
    grounded,
    plan,
    same_thing,
)
from memagent.memory.profile.kinds import fix_kind

WED = date(2026, 3, 4)
GENERAL = "resource_user_general_prefs.json"


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


@pytest.mark.parametrize("kind", ["food_like", "food_dislike"])
def test_gone_off_then_a_dislike_by_pronoun_moves_it(home: MemoryHome, kind: str) -> None:
    """The end of a like said with a later "can't stand them" is a dislike, not
    only the like removed (read as a like or as a dislike by the model)."""
    s = store_of(home)
    said(s, "I love mushrooms.", ("food_like", "mushrooms", ""))
    got = said(s, "I've gone off mushrooms, can't stand them now", (kind, "mushrooms", ""))
    assert got == ["food.dislikes: Dislikes mushrooms"]


def test_gone_off_without_a_dislike_only_ends_the_like(home: MemoryHome) -> None:
    s = store_of(home)
    said(s, "I love mushrooms.", ("food_like", "mushrooms", ""))
    assert said(s, "I've gone off mushrooms lately.", ("food_like", "mushrooms", "")) == []


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
    ("text", "path"),
    [
        ("I swim three times a week.", "routine.weekly"),
        ("yoga 3x a week keeps my back in check", "routine.weekly"),
        ("I row on the river three mornings a week.", "routine.weekly"),
        ("Sunday evenings I call my grandmother.", "routine.weekly"),
        ("I do the crossword every week without fail.", "routine.weekly"),
        ("I swim every morning before work.", "routine.daily"),
    ],
)
def test_a_routine_said_by_the_week_is_weekly(home: MemoryHome, text: str, path: str) -> None:
    got = said(store_of(home), text, ("routine", text.split()[1], ""))
    assert [g.split(":")[0] for g in got] == [path]


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


def test_we_includes_the_user(home: MemoryHome) -> None:
    s = store_of(home)
    said(s, "I live in Boston.", ("home", "Boston", ""))
    assert said(s, "We just moved to Seattle.", ("home", "Seattle", "")) == [
        "personal.facts: Lives in Seattle"
    ]


def test_a_relatives_wedding_is_the_users_plan(home: MemoryHome) -> None:
    got = said(store_of(home), "My sister's wedding is in June.", ("plan", "wedding", ""))
    assert got == ["schedule.upcoming: My sister's wedding is in June"]
    assert said(store_of(home), "My boss has a meeting at 3.", ("plan", "meeting", "")) == [
        "schedule.upcoming: My sister's wedding is in June"
    ]


def test_a_plan_lasts_until_its_day_and_a_past_one_is_not_coming_up(home: MemoryHome) -> None:
    s = store_of(home)  # said on Wednesday 4 March 2026
    assert (
        said(s, "My sister's wedding is on 14 June 2025 in Bergen.", ("plan", "wedding", "")) == []
    )
    got = said(s, "My sister's wedding is on 14 June 2026 in Bergen.", ("plan", "wedding", ""))
    assert got == [
        "schedule.upcoming: My sister's wedding is on 14 June 2026 in Bergen @2026-06-14"
    ]
    got = said(s, "Dentist on Friday.", ("plan", "dentist", ""))
    assert "schedule.upcoming: Dentist on Friday @2026-03-06" in got


def test_no_x_for_me_is_a_diet_rule_not_a_taste(home: MemoryHome) -> None:
    got = said(
        store_of(home),
        "I keep halal, so no pork for me please.",
        ("diet", "halal", ""),
        ("food_dislike", "pork", ""),
    )
    assert got == ["diet.restrictions: Halal", "diet.restrictions: No pork"]


def test_one_item_per_pet_or_relative_and_a_correction_replaces(home: MemoryHome) -> None:
    s = store_of(home)
    text = "I have two daughters, Ana and Bea."
    assert said(s, text, ("family", "daughters", "Ana and Bea")) == [
        "personal.facts: Daughter: Ana",
        "personal.facts: Daughter: Bea",
    ]
    said(s, "My cat is called Mocha.", ("pet", "cat", "Mocha"))
    got = said(s, "We got a second cat, called Miso.", ("pet", "cat", "Miso"))
    assert "personal.facts: Cat named Mocha" in got and "personal.facts: Cat named Miso" in got
    got = said(s, "Actually my cat is called Pixel now, not Mocha.", ("pet", "cat", "Pixel"))
    assert [x for x in got if "Cat" in x] == ["personal.facts: Cat named Pixel"]
    said(s, "My wife's name is Priya.", ("family", "wife", "Priya"))
    got = said(s, "My wife is called Anna.", ("family", "wife", "Anna"))
    assert [x for x in got if "Wife" in x] == ["personal.facts: Wife: Anna"]


def test_an_item_stored_before_names_were_keys_is_not_duplicated(home: MemoryHome) -> None:
    s = store_of(home)
    op = {"item": "pet_dog", "display": "Dog named Rex"}
    assert apply_operations(
        s, [AppendOp(operation="append", file=GENERAL, path="personal.facts", value=op)]
    ).ok
    assert said(s, "My dog Rex loves the beach.", ("pet", "dog", "Rex")) == [
        "personal.facts: Dog named Rex"
    ]
    assert said(s, "Actually my dog is called Nova now.", ("pet", "dog", "Nova")) == [
        "personal.facts: Dog named Nova"
    ]


def test_one_diet_of_a_kind_at_a_time(home: MemoryHome) -> None:
    s = store_of(home)
    said(s, "I'm vegan.", ("diet", "vegan", ""))
    said(s, "I'm gluten free.", ("diet", "gluten free", ""))
    got = said(s, "I'm vegetarian now.", ("diet", "vegetarian", ""))
    assert got == ["diet.restrictions: Gluten free", "diet.restrictions: Vegetarian"]


def test_a_job_is_the_role_not_the_employer(home: MemoryHome) -> None:
    s = store_of(home)
    got = said(s, "I'm a software engineer at a fintech startup.", ("work", "fintech startup", ""))
    assert got == ["personal.facts: Works as software engineer at a fintech startup"]
    got = said(s, "I teach maths at a secondary school.", ("work", "secondary school", ""))
    assert got == ["personal.facts: Work: teach maths at a secondary school"]


def test_a_move_is_a_home_not_a_stay_and_a_kind_word_is_no_fact(home: MemoryHome) -> None:
    s = store_of(home)
    got = said(
        s, "I moved to Lisbon last month.", ("home", "Lisbon", ""), ("whereabouts", "Lisbon", "")
    )
    assert got == ["personal.facts: Lives in Lisbon"]
    got = said(
        s,
        "I carry an EpiPen because I'm allergic to bee stings.",
        ("condition", "allergy", ""),
        ("allergy", "bee stings", ""),
    )
    assert "health.allergies: Allergic to bee stings" in got
    assert not [x for x in got if x.startswith("health.conditions")]


def test_a_food_said_without_a_rule_is_a_taste_not_a_diet(home: MemoryHome) -> None:
    s = store_of(home)
    said(s, "I'm vegetarian.", ("diet", "vegetarian", ""))
    got = said(
        s,
        "I'm not vegetarian anymore, I started eating chicken again.",
        ("diet", "vegetarian", ""),
        ("diet", "chicken", ""),
    )
    assert got == ["food.likes: Likes chicken"]
    assert "diet.restrictions: No pork" in said(s, "I never eat pork.", ("diet", "pork", ""))


def test_one_item_per_thing_said(home: MemoryHome) -> None:
    got = said(
        store_of(home),
        "Every Monday I have a team standup at nine.",
        ("routine", "team standup", ""),
        ("exercise", "team standup", ""),
    )
    assert got == ["routine.weekly: Every Monday I have a team standup at nine"]


@pytest.mark.parametrize(
    ("said_", "item", "same"),
    [
        ("swim", "swimming", True),  # word endings folded
        ("wine", "red_wine", True),  # the more general name, same last word
        ("eat pork", "pork", True),
        ("red wine", "wine", True),
        ("tea", "tea_cake", False),  # not the same last word
        ("a fan of", "fan_fiction", False),
        ("sure", "surfing", False),
    ],
)
def test_a_thing_named_by_other_words(said_: str, item: str, same: bool) -> None:
    assert same_thing(said_, item) is same


def test_stopping_the_general_thing_ends_the_specific_one(home: MemoryHome) -> None:
    s = store_of(home)
    said(s, "I love red wine.", ("drink_like", "red wine", ""))
    assert said(s, "I've stopped drinking wine.") == []
    said(s, "I swim at the local pool.", ("exercise", "swimming", ""))
    assert said(s, "I don't swim anymore since the pool closed.") == []


def test_a_like_turning_into_a_dislike_moves_under_its_old_name(home: MemoryHome) -> None:
    s = store_of(home)
    said(s, "I love spicy food.", ("food_like", "spicy food", ""))
    assert said(s, "Spicy food doesn't agree with me anymore.", ("food_dislike", "spicy", "")) == [
        "food.dislikes: Dislikes spicy food"
    ]


def test_over_and_not_actually_end_a_fact(home: MemoryHome) -> None:
    s = store_of(home)
    said(s, "I love football.", ("like", "football", ""))
    said(s, "I'm allergic to penicillin.", ("allergy", "penicillin", ""))
    assert said(s, "I'm over football, haven't watched a match in years.") == [
        "health.allergies: Allergic to penicillin"
    ]
    assert (
        said(
            s,
            "The doctor says I'm not actually allergic to penicillin.",
            ("allergy", "penicillin", ""),
        )
        == []
    )


def test_back_home_ends_the_current_stay_even_with_nothing_read(home: MemoryHome) -> None:
    s = store_of(home)
    said(s, "I'm in Berlin until Friday.", ("whereabouts", "Berlin", ""))
    assert said(s, "My sister flew back home yesterday.") == [
        "whereabouts.current: In Berlin (until Fri 2026-03-06) @2026-03-06"
    ]
    assert said(s, "The trip got cut short, I flew back home yesterday.") == []


def test_a_stay_said_again_with_a_new_end_updates_its_expiry(home: MemoryHome) -> None:
    s = store_of(home)
    said(s, "I'm in Nairobi until Friday.", ("whereabouts", "Nairobi", ""))
    assert said(
        s,
        "My flight got delayed, so I'm stuck in Nairobi till Monday.",
        ("whereabouts", "Nairobi", ""),
    ) == ["whereabouts.current: In Nairobi (until Mon 2026-03-09) @2026-03-09"]


@pytest.mark.parametrize(
    ("kind", "value", "clause", "fixed"),
    [
        ("food_like", "Thai", "Ordered Thai food for dinner tonight.", None),  # had once
        ("drink_like", "milk", "I need to buy milk on the way home.", None),
        ("food_like", "sushi", "I tried sushi yesterday and loved it.", "food_like"),
        ("drink_like", "green tea", "I switched from coffee to green tea.", "drink_like"),
        ("food_like", "chicken", "I started eating chicken again.", "food_like"),
        ("food_like", "ramen", "I'm a huge fan of ramen.", "food_like"),  # not an event
        ("plan", "flight", "Our train got cancelled.", None),  # past, nothing ahead
        ("plan", "flight", "I booked a flight to Oslo for next week.", "plan"),
    ],
)
def test_a_thing_met_in_an_event_is_liked_only_when_a_taste_is_said(
    kind: str, value: str, clause: str, fixed: str | None
) -> None:
    assert fix_kind(kind, value, clause) == fixed


def test_a_relative_named_as_a_place_leaves_the_stay_the_users(home: MemoryHome) -> None:
    s = store_of(home)
    got = said(
        s,
        "Staying at my sister's in Leeds until the 20th so plan reminders around that",
        ("whereabouts", "Leeds", ""),
    )
    assert got == ["whereabouts.current: In Leeds (until Fri 2026-03-20) @2026-03-20"]
    got = said(s, "in Seoul until the 5th for my cousin's wedding", ("whereabouts", "Seoul", ""))
    assert got == ["whereabouts.current: In Seoul (until Thu 2026-03-05) @2026-03-05"]


def test_someone_elses_fact_said_beside_the_users_own(home: MemoryHome) -> None:
    s = store_of(home)
    got = said(
        s,
        "no pork please, and my husband can't handle anything too spicy",
        ("diet", "pork", ""),
    )
    assert got == ["diet.restrictions: No pork"]
    assert said(
        s,
        "Dave from the climbing gym is lactose intolerant.",
        ("condition", "lactose intolerant", ""),
    ) == ["diet.restrictions: No pork"]


def test_a_stays_end_said_in_the_next_sentence(home: MemoryHome) -> None:
    planned = plan(
        [Extracted(kind="whereabouts", value="Lima")],
        ["landed in Lima!!", "here until march 18 for my friend's thesis defense"],
        store_of(home).load_all(),
        WED,
    )
    assert [o.expiry for o in planned.operations if isinstance(o, AppendOp)] == ["2026-03-18"]


def test_a_thing_put_in_place_of_a_stored_one_keeps_its_kind(home: MemoryHome) -> None:
    s = store_of(home)
    said(s, "I'm allergic to strawberries.", ("allergy", "strawberries", ""))
    got = said(
        s,
        "sorry, raspberries, not strawberries. strawberries are fine",
        ("allergy", "raspberries", ""),
        ("allergy", "strawberries", ""),
    )
    assert got == ["health.allergies: Allergic to raspberries"]


def test_a_weekly_habit_said_to_be_over_is_removed(home: MemoryHome) -> None:
    s = store_of(home)
    said(s, "I do pilates on Thursdays.", ("routine", "pilates on Thursdays", ""))
    assert said(s, "not doing Thursday pilates any more, the class got cancelled") == []


def test_a_pets_name_said_in_the_next_sentence(home: MemoryHome) -> None:
    planned = plan(
        [Extracted(kind="pet", value="cat", name="Tofu")],
        ["we got a second cat!", "she's a tabby called Tofu"],
        store_of(home).load_all(),
        WED,
    )
    assert [o.value.item for o in planned.operations] == ["pet_cat_tofu"]


@pytest.mark.parametrize(
    ("text", "place", "stored"),
    [
        ("I'm at the supermarket.", "supermarket", False),  # a moment, not a stay
        ("Sipping a flat white in the sun, bliss.", "the sun", False),
        ("I'm in Lisbon.", "Lisbon", True),  # a named place
        ("At a cabin in the woods this week.", "cabin in the woods", True),  # with an end
        ("im in lisbon rn", "lisbon", True),  # typed in lower case: its case says nothing
    ],
)
def test_a_stay_needs_a_named_place_or_an_end(
    home: MemoryHome, text: str, place: str, stored: bool
) -> None:
    got = said(store_of(home), text, ("whereabouts", place, ""))
    assert bool(got) is stored


@pytest.mark.parametrize("value", ["everything", "all food", "anything", "stuff"])
def test_a_value_that_names_no_thing_is_not_written(home: MemoryHome, value: str) -> None:
    got = said(store_of(home), f"I'm allergic to {value} lol.", ("allergy", value, ""))
    assert got == []


def test_a_time_of_day_is_a_value(home: MemoryHome) -> None:
    text = "My alarm goes off at 5:30 on weekdays."
    assert said(store_of(home), text, ("routine", "5 30", "")) == [f"routine.daily: {text[:-1]}"]


@pytest.mark.parametrize(
    ("text", "facts", "want"),
    [
        (
            "I'm a software engineer at a fintech startup, mostly backend stuff.",
            [("work", "software engineer", ""), ("routine", "backend stuff", "")],
            ["personal.facts: Works as software engineer"],
        ),
        (
            "I freelance as a graphic designer, mostly logos and packaging.",
            [("work", "graphic designer", ""), ("routine", "freelance", "")],
            ["personal.facts: Works as graphic designer"],
        ),
        (  # the habit says its own when: it stays
            "My brother Sam lives in Leeds, we talk every day.",
            [("family", "brother", "Sam"), ("routine", "talk every day", "")],
            [
                "personal.facts: Brother: Sam",
                "routine.daily: My brother Sam lives in Leeds, we talk every day",
            ],
        ),
        (  # no other fact read: the habit is the sentence's own
            "I swim at the local pool before work.",
            [("routine", "swim", "")],
            ["routine.daily: I swim at the local pool before work"],
        ),
    ],
)
def test_a_habit_read_beside_another_fact_needs_its_own_when(
    home: MemoryHome, text: str, facts: list[tuple[str, str, str]], want: list[str]
) -> None:
    assert said(store_of(home), text, *facts) == want


def test_a_plan_needs_its_time_in_the_part_that_says_it() -> None:
    clause = "I got laid off on Monday, so I'm job hunting now."
    assert fix_kind("routine", "job hunting", clause) is None
    assert fix_kind("routine", "baby", "We're expecting our first baby in October.") == "plan"


@pytest.mark.parametrize(
    ("text", "value", "want"),
    [
        (
            "For the next ten days I'm off sugar completely.",
            "sugar",
            "diet.restrictions: No sugar (until Sat 2026-03-14) @2026-03-14",
        ),
        (
            "Training for a race, so no alcohol until the race on the 22nd.",
            "alcohol",
            "diet.restrictions: No alcohol (until Sun 2026-03-22) @2026-03-22",
        ),
        (
            "I'm doing Whole30 until the end of March.",
            "Whole30",
            "diet.restrictions: Whole30 (until Tue 2026-03-31) @2026-03-31",
        ),
    ],
)
def test_a_diet_kept_for_a_while_ends_when_it_says(
    home: MemoryHome, text: str, value: str, want: str
) -> None:
    assert said(store_of(home), text, ("diet", value, "")) == [want]


def test_a_fact_of_the_in_laws_is_theirs(home: MemoryHome) -> None:
    text = "My in-laws are vegetarian and they're here till Friday, so I'm cooking veggie."
    assert said(store_of(home), text, ("diet", "vegetarian", "")) == []


def test_a_value_read_with_its_own_negation_ends_the_held_thing(home: MemoryHome) -> None:
    store = store_of(home)
    said(store, "I'm vegan.", ("diet", "vegan", ""))
    got = said(
        store, "no longer vegan, I eat eggs and cheese again", ("diet", "no longer vegan", "")
    )
    assert not any("vegan" in line.lower() for line in got)


def test_a_fragment_saying_when_belongs_to_the_sentence_before() -> None:
    assert clause_of("yoga", ["Yoga.", "Every sunday.", "Non-negotiable."]) == "Yoga. Every sunday."
    assert clause_of("yoga", ["Yoga.", "I love it so much really."]) == "Yoga."


def test_left_one_place_now_in_another_is_the_new_stay(home: MemoryHome) -> None:
    store = store_of(home)
    said(store, "I'm in Madrid for a bit", ("whereabouts", "Madrid", ""))
    got = said(store, "left Madrid this morning, now in Valencia", ("whereabouts", "Valencia", ""))
    assert [line for line in got if line.startswith("whereabouts")] == [
        "whereabouts.current: In Valencia"
    ]


def test_moved_on_to_a_place_is_a_stay_not_a_home(home: MemoryHome) -> None:
    got = said(store_of(home), "moved on to Hoi An", ("whereabouts", "Hoi An", ""))
    assert got == ["whereabouts.current: In Hoi An"]


def test_back_home_after_a_stay_ahead_is_not_home_now(home: MemoryHome) -> None:
    text = "in Berlin until Friday for a conference, then back home"
    got = said(store_of(home), text, ("whereabouts", "Berlin", ""))
    assert got == ["whereabouts.current: In Berlin (until Fri 2026-03-06) @2026-03-06"]


def test_a_medicines_short_name_ends_it(home: MemoryHome) -> None:
    store = store_of(home)
    said(store, "on doxycycline for a while", ("medication", "doxycycline", ""))
    got = said(store, "doctor said I can stop the doxy early, infection cleared up")
    assert not any("doxycycline" in line for line in got)


def test_a_plan_cancelled_is_removed_with_nothing_read(home: MemoryHome) -> None:
    store = store_of(home)
    said(store, "dentist on friday", ("plan", "dentist", ""))
    assert any(line.startswith("schedule.upcoming") for line in lines(store))
    got = said(store, "dentist cancelled, they'll call to reschedule whenever")
    assert not any(line.startswith("schedule.upcoming") for line in got)


def test_a_plan_is_named_by_its_head_without_its_day(home: MemoryHome) -> None:
    store = store_of(home)
    said(store, "camping on saturday", ("plan", "camping saturday", ""))
    assert any(line.startswith("schedule.upcoming") for line in lines(store))
    got = said(store, "camping's off this weekend, the forecast is biblical")
    assert not any(line.startswith("schedule.upcoming") for line in got)


def test_the_when_of_another_fact_is_no_habit_of_its_own(home: MemoryHome) -> None:
    got = said(
        store_of(home),
        "ICU nurse here, three 12-hour days a week, usually mon tue wed",
        ("work", "ICU nurse", ""),
        ("routine", "three 12-hour days a week", ""),
    )
    assert [line.split(":")[0] for line in got] == ["personal.facts"]


def test_days_said_short_make_a_weekly_habit(home: MemoryHome) -> None:
    got = said(
        store_of(home),
        "joined a gym and I'm going mon wed fri before work",
        ("routine", "gym", ""),
    )
    assert [line.split(":")[0] for line in got] == ["routine.weekly"]


def test_two_pets_said_to_be_friends_are_no_relatives(home: MemoryHome) -> None:
    got = said(
        store_of(home),
        "i've got a rabbit called Clover and a guinea pig called Fudge, they're best mates",
        ("pet", "rabbit", "Clover"),
        ("pet", "guinea pig", "Fudge"),
        ("family", "best mates", "Clover and Fudge"),
    )
    assert sorted(got) == [
        "personal.facts: Guinea pig named Fudge",
        "personal.facts: Rabbit named Clover",
    ]


def test_a_class_cancelled_ends_the_plan_not_the_liking(home: MemoryHome) -> None:
    store = store_of(home)
    said(store, "I love pottery", ("like", "pottery", ""))
    got = said(store, "pottery class is cancelled for good, the studio's closing down")
    assert got == ["preferences.likes: Likes pottery"]


def test_off_one_medicine_onto_another_keeps_the_new_one(home: MemoryHome) -> None:
    store = store_of(home)
    said(store, "I take lisinopril", ("medication", "lisinopril", ""))
    got = said(
        store,
        "gp switched me off lisinopril onto amlodipine, that dry cough was driving me mad",
        ("medication", "amlodipine", ""),
        ("medication", "lisinopril", ""),
    )
    assert got == ["health.medications: Takes amlodipine"]


def test_gone_off_a_food_with_the_dislike_in_the_next_sentence(home: MemoryHome) -> None:
    store = store_of(home)
    said(store, "I love olives", ("food_like", "olives", ""))
    got = said(
        store,
        "weirdly i've gone right off olives?? used to eat them out the jar, now i can't stand them",
        ("food_dislike", "olive", ""),
    )
    assert got == ["food.dislikes: Dislikes olives"]


def test_a_relatives_diet_and_an_interjection_read_with_a_value(home: MemoryHome) -> None:
    store = store_of(home)
    said(store, "my girlfriend is called Lena", ("family", "girlfriend", "Lena"))
    got = said(
        store, "lena went vegan last month so i'm cooking plant based", ("diet", "vegan", "")
    )
    assert not any(line.startswith("diet") for line in got)
    got = said(
        store,
        "sorry PISTACHIOS not cashews, it's pistachios that make me itch, i'm allergic",
        ("allergy", "sorry PISTACHIOS", ""),
    )
    assert "health.allergies: Allergic to PISTACHIOS" in got


def test_a_day_corrected_and_the_own_name_respelled(home: MemoryHome) -> None:
    store = store_of(home)
    said(store, "I swim on tuesdays", ("routine", "swim", ""))
    said(store, "my name is Pria", ("name", "Pria", ""))
    said(store, "sorry thursday not tuesday. tuesdays r my late shift lol")
    got = said(store, "argh autocorrect. PRIYA. with a y")
    assert "routine.weekly: I swim on Thursdays" in got and "personal.facts: Name: Priya" in got
    assert said(store, "Priyanka from work says hi") == got


def test_a_plan_called_off_by_any_of_its_words(home: MemoryHome) -> None:
    store = store_of(home)
    said(
        store,
        "dad's 80th is on saturday, we're doing a big lunch at the pub",
        ("plan", "dad's 80th", ""),
    )
    assert any(line.startswith("schedule.upcoming") for line in lines(store))
    got = said(store, "lunch is off, dad's got covid, we'll do it another time")
    assert not any(line.startswith("schedule.upcoming") for line in got)


def test_a_day_corrected_moves_the_habit_line_not_the_sport(home: MemoryHome) -> None:
    store = store_of(home)
    said(
        store,
        "I swim every tuesday before work",
        ("routine", "swim", ""),
        ("exercise", "swimming", ""),
    )
    got = said(store, "sorry thursday not tuesday. tuesdays r my late shift lol")
    assert "routine.weekly: I swim every Thursday before work" in got


@pytest.mark.parametrize(
    ("text", "fact", "line"),
    [
        (
            "booking a table for friday - I'm not a beer person at all",
            ("drink_dislike", "beer", ""),
            "drink.dislikes: Dislikes beer",
        ),
        (
            "I'll always go for a glass of red, so somewhere with a decent wine list pls",
            ("drink_like", "red", ""),
            "drink.likes: Likes red",
        ),
        (
            "coeliac here so i have to be super strict about gluten",
            ("diet", "gluten", ""),
            "diet.restrictions: Gluten",
        ),
        (
            "wrist is in a splint until the end of the month so no climbing for me",
            ("condition", "wrist", ""),
            "health.conditions: Wrist (until Tue 2026-03-31) @2026-03-31",
        ),
        (
            "signed up for the berlin marathon on sept 27th!! need a plan",
            ("plan", "berlin marathon", ""),
            "schedule.upcoming: Signed up for the berlin marathon on sept 27th @2026-09-27",
        ),
        (
            "we're living with my in-laws in Leeds while our house gets renovated",
            ("home", "Leeds", ""),
            "whereabouts.current: In Leeds",
        ),
        (
            "im in Seoul for my year abroad, the food here is unreal",
            ("whereabouts", "seoul", ""),
            "whereabouts.current: In Seoul",
        ),
        (
            "thursday night is pub quiz night with the lads, non negotiable 😂 so no plans then",
            ("routine", "quiz", ""),
            "routine.weekly: Thursday night is pub quiz night with the lads",
        ),
    ],
)
def test_ways_of_saying_found_in_r31(
    home: MemoryHome, text: str, fact: tuple[str, str, str], line: str
) -> None:
    assert line in said(store_of(home), text, fact)


def test_flying_back_early_from_a_stay_ends_it(home: MemoryHome) -> None:
    store = store_of(home)
    said(store, "in Rome till the 20th", ("whereabouts", "Rome", ""))
    got = said(
        store,
        "had to fly back early from Rome, my mum's in hospital. home now",
        ("whereabouts", "rome", ""),
    )
    assert not any(line.startswith("whereabouts") for line in got)


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        (
            "theo has a dairy allergy btw, nursery needs a letter about it from us",
            ("allergy", "dairy", "theo"),
        ),
        (
            "my best mate Priya just told me she's moving to Canada 😭 she's gluten free",
            ("diet", "gluten free", ""),
        ),
        (
            "just this once answer in french pls, I'm sending it to a colleague in Lyon",
            ("communication", "answer in french", ""),
        ),
    ],
)
def test_someone_elses_fact_and_a_one_off_ask_store_nothing(
    home: MemoryHome, text: str, fact: tuple[str, str, str]
) -> None:
    assert said(store_of(home), text, fact) == []


def test_a_named_ones_weekly_habit_is_still_the_writers_time(home: MemoryHome) -> None:
    got = said(
        store_of(home),
        "Ellie's got swimming lessons every saturday at 10 now so we can't do saturday mornings",
        ("routine", "swimming lessons", "Ellie"),
    )
    assert any(line.startswith("routine.weekly") and "wimming" in line for line in got)


def test_a_name_read_for_an_animal_and_a_person_is_the_animals(home: MemoryHome) -> None:
    got = said(
        store_of(home),
        "dog walker cancelled AGAIN so Pepper (my beagle) is under the desk lol",
        ("pet", "dog walker", "Pepper"),
        ("pet", "beagle", "Pepper"),
    )
    assert got == ["personal.facts: Beagle named Pepper"]
