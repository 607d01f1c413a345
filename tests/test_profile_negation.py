"""Negation is judged per value, in the part of the sentence that says it."""

from __future__ import annotations

import pytest

from memagent.memory.profile.negation import (
    cancelled_things,
    disliked,
    disliked_after,
    ended,
    is_negated,
    negated_things,
    subclause,
    unhated,
)


@pytest.mark.parametrize(
    ("value", "kind", "clause", "over"),
    [
        ("coffee", "drink_like", "Actually I prefer tea now, not coffee.", True),
        ("tea", "drink_like", "Actually I prefer tea now, not coffee.", False),
        ("blue cheese", "food_dislike", "I'm not a fan of blue cheese.", False),
        ("kiwi", "allergy", "Turns out I'm not allergic to kiwi after all.", True),
        ("sushi", "food_like", "No more sushi for me.", True),
        ("golf", "like", "I gave up golf.", True),
        ("vegetarian", "diet", "I'm not vegetarian anymore, I eat chicken again.", True),
        ("chicken", "food_like", "I'm not vegetarian anymore, I eat chicken again.", False),
        ("pork", "diet", "I don't eat pork anymore.", False),  # the restriction itself
        ("alcohol", "diet", "I don't drink alcohol.", False),
        ("sushi", "food_like", "I don't like sushi anymore.", True),
        ("ibuprofen", "medication", "I stopped taking ibuprofen.", True),
        ("sertraline", "medication", "my doctor switched me from sertraline to fluoxetine", True),
        ("fluoxetine", "medication", "my doctor switched me from sertraline to fluoxetine", False),
        ("keto", "diet", "keto's done, I'm eating normally again", True),
        ("egg", "allergy", "Good news, I've grown out of my egg allergy", True),
        ("Cornwall", "whereabouts", "off to Cornwall this weekend", False),  # not "off X"
        ("sugar", "food_like", "I'm off sugar for good", True),
        ("bouldering", "exercise", "done with bouldering for good honestly", True),
        ("aqua aerobics", "exercise", "I've had to give up the aqua aerobics", True),
        ("aqua aerobics", "exercise", "I want to give up the aqua aerobics", False),  # not yet
        ("headaches", "condition", "headaches finally gone", True),
        ("migraines", "condition", "my migraines are gone now", True),
        ("coffee", "drink_like", "my coffee is gone cold", False),  # a moment, not an end
        ("headaches", "condition", "I get headaches", False),
        ("bullet points", "communication", "you can stop with the bullet points now", True),
        ("bullet points", "communication", "don't stop with the bullet points", False),
    ],
)
def test_a_fact_is_over_only_where_its_own_words_say_so(
    value: str, kind: str, clause: str, over: bool
) -> None:
    assert ended(value, kind, clause) is over


def test_the_subclause_of_a_value() -> None:
    said = "I love coffee but I hate tea, and I quit sugar."
    assert subclause("swimming laps", "not running anymore, I swim laps instead") == (
        "I swim laps instead"
    )
    assert subclause("tea", said) == "I hate tea"
    assert subclause("sugar", said) == "I quit sugar."
    assert subclause("cocoa", said) == said


def test_a_direct_negation_names_the_value_first() -> None:
    assert is_negated("vegetarian", "I'm not vegetarian any more", directly=True)
    assert not is_negated("blue cheese", "I'm not a fan of blue cheese", directly=True)
    assert is_negated("kiwi", "I'm not allergic to kiwi")


def test_dislikes_are_read_in_their_own_part() -> None:
    assert disliked("tea", "I love coffee but I can't stand tea.")
    assert not disliked("coffee", "I love coffee but I can't stand tea.")


@pytest.mark.parametrize(
    ("sentence", "things"),
    [
        ("The doctor says I'm not actually allergic to penicillin.", ["allergic to penicillin"]),
        ("I'm over football, haven't watched a match in years.", ["football"]),
        ("I don't swim anymore since the pool closed.", ["swim"]),
        ("I've stopped drinking wine.", ["wine"]),
        ("I love swimming.", []),
        ("you can drop the formal tone lol", ["formal tone lol"]),
        ("packed in smoking at new year", ["smoking at new"]),
        ("ditched the gym membership", ["gym membership"]),
        ("I was never actually gluten intolerant", ["gluten intolerant"]),
        ("I never eat pork", []),
    ],
)
def test_what_a_statement_says_is_over(sentence: str, things: list[str]) -> None:
    assert negated_things([sentence]) == things


@pytest.mark.parametrize(
    ("clause", "after"),
    [
        ("I've gone off mushrooms, can't stand them now", True),
        ("gone off mushrooms and I hate it", True),
        ("I've gone off mushrooms, can't stand my boss", False),
        ("I've gone off mushrooms", False),
        ("can't stand them, mushrooms I mean", False),
    ],
)
def test_a_later_dislike_by_pronoun(clause: str, after: bool) -> None:
    assert disliked_after("mushrooms", clause) is after


@pytest.mark.parametrize(
    ("value", "kind", "clause"),
    [
        ("asthma", "condition", "My asthma went away as I grew up."),
        ("eczema", "condition", "The eczema cleared up last year."),
        ("red bull", "drink_like", "Haven't touched Red Bull since new year."),
        ("marathon", "plan", "pulling out of the marathon, my shin is wrecked"),
    ],
)
def test_more_ways_a_fact_is_over(value: str, kind: str, clause: str) -> None:
    assert ended(value, kind, clause)


def test_what_one_has_not_touched_is_over() -> None:
    assert "Red Bull" in " ".join(negated_things(["Haven't touched Red Bull since new year."]))


@pytest.mark.parametrize(
    ("sentence", "thing"),
    [
        ("dentist got cancelled, they'll call me to rebook", "dentist"),
        ("The concert was called off.", "The concert"),
    ],
)
def test_what_was_cancelled_is_over(sentence: str, thing: str) -> None:
    assert thing in negated_things([sentence])


@pytest.mark.parametrize(
    ("text", "things"),
    [
        ("doctor said I can stop the doxy early", ["doxy early"]),
        ("Stop taking the ibuprofen", ["ibuprofen"]),
        ("I can't stop the music", []),  # "can't stop" ends nothing
        ("I want to stop the noise", []),
        ("dentist cancelled, they'll call to reschedule", ["dentist"]),
    ],
)
def test_stopping_a_thing_and_a_bare_cancellation(text: str, things: list[str]) -> None:
    assert negated_things([text]) == things


@pytest.mark.parametrize(
    ("text", "things"),
    [
        ("finished the prednisolone course this morning", ["prednisolone"]),
        ("finished my course of omeprazole", ["omeprazole"]),
        ("finished my coffee", []),  # a cup, not a course
        ("dairy's back on the menu!", ["dairy"]),
    ],
)
def test_a_course_finished_and_a_thing_back_on_the_menu(text: str, things: list[str]) -> None:
    assert negated_things([text]) == things


@pytest.mark.parametrize(
    ("sentence", "over"),
    [
        ("Don't hate the treadmill anymore, it's been a lifesaver", True),
        ("I don't mind spiders any more", True),
        ("I don't eat pork any more", False),  # the restriction, not a dislike ended
        ("I don't like sushi anymore", False),  # a like ended, not a dislike
    ],
)
def test_a_dislike_said_to_be_over(sentence: str, over: bool) -> None:
    assert unhated(negated_things([sentence])) is over


@pytest.mark.parametrize(
    ("text", "thing"),
    [
        ("hung up the running shoes for good, my knees can't take it", "running shoes"),
        ("honestly I've fallen out of love with F1 this season", "F1"),
        ("jacked in the joinery, knees are done", "joinery"),
        ("camping's off this weekend, the forecast is biblical", "camping"),
        ("lunch is off, dad's got covid", "lunch"),
    ],
)
def test_more_ways_to_say_a_thing_is_over(text: str, thing: str) -> None:
    assert any(t.lower().startswith(thing.lower()) for t in negated_things([text]))


def test_someone_off_sick_is_not_over() -> None:
    assert not any("boss" in t for t in negated_things(["my boss is off sick today"]))


def test_they_cancelled_names_the_plan_the_sentence_opens_with() -> None:
    said = "dentist just rang, hygienist is off sick so they've cancelled and i have to rebook"
    assert cancelled_things([said]) == ["dentist"]
    assert cancelled_things(["we had to cancel"]) == []


@pytest.mark.parametrize(
    ("value", "kind", "clause", "over"),
    [
        ("smoke", "condition", "update, 3 weeks smoke free today!!!", True),
        (
            "citalopram",
            "medication",
            "gp's switched me to sertraline, the citalopram was awful",
            True,
        ),
        (
            "sertraline",
            "medication",
            "gp's switched me to sertraline, the citalopram was awful",
            False,
        ),
        ("gym", "exercise", "cancelled my gym membership today, money's too tight", True),
        ("gym", "exercise", "cancelled gym tonight, too tired", False),
        ("sugar", "diet", "three weeks sugar free", False),
    ],
)
def test_free_of_switched_from_and_a_membership_cancelled_are_ends(
    value: str, kind: str, clause: str, over: bool
) -> None:
    assert ended(value, kind, clause) is over


def test_not_a_beer_person_is_a_dislike() -> None:
    assert disliked("beer", "I'm not a beer person at all")
    assert not disliked("beer", "I'm a beer person")
