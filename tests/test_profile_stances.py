"""A like or dislike the model read is kept only when the statement takes that stance:
a thing met in passing is not a taste (`memory.profile.stances`)."""

from __future__ import annotations

import pytest

from memagent.core import MemoryHome
from memagent.memory.profile.stances import around, stance_unsaid
from profile_support import said_on as said


@pytest.mark.parametrize(
    ("kind", "value", "statement"),
    [
        (
            "food_like",
            "crisps",
            "im in the hospital corridor eating crisps from the vending machine",
        ),
        ("food_like", "toffee", "dreading the dentist, had a filling fall out eating a toffee"),
        (
            "food_like",
            "okonomiyaki",
            "his sofa is tiny but the okonomiyaki place downstairs makes up for it",
        ),
        ("like", "facetime", "he's eating a donut on facetime to torture me"),
        ("food_dislike", "office pizza", "I'm coeliac so the office pizza thing is always awkward"),
        (
            "drink_dislike",
            "chewing",
            "liquid diet for the rest of this week. i miss chewing so much",
        ),
        ("exercise", "walk", "been on sertraline a year and today went for a walk at lunch"),
        ("exercise", "running", "I listen to it on the commute and I've run out of episodes"),
        ("food_like", "easter egg", "ate way too much chocolate. like an entire easter egg"),
        ("food_like", "soap", "coriander was in everything and it tastes like soap"),
        ("food_like", "salmon", "I'd like the salmon please, what wine goes with it"),
        ("food_like", "crisps", "wife went into labour, im in the corridor eating crisps"),
    ],
)
def test_a_thing_met_is_no_taste(kind: str, value: str, statement: str) -> None:
    assert stance_unsaid(kind, value, statement, statement)


@pytest.mark.parametrize(
    ("kind", "value", "statement"),
    [
        ("food_like", "khachapuri", "Khachapuri is my new obsession honestly"),
        ("food_like", "prawns", "prawns are my absolute fav, i'd put them in everything"),
        ("drink_like", "oat milk lattes", "I drink oat milk lattes."),
        ("like", "stamps", "I collect vintage stamps."),
        ("drink_like", "flat white", "oat flat white, every morning"),
        ("drink_like", "red wine", "red wine person. white gives me a headache"),
        ("food_dislike", "mushrooms", "mushrooms are a texture thing for me. hate them"),
        ("food_dislike", "coriander", "I can't stand coriander"),
        ("food_like", "spicy food", "Spicy food doesn't agree with me anymore."),
        ("allergy", "kiwi", "turns out i'm allergic to kiwi"),
        ("exercise", "swimming", "I swim three times a week"),
        ("exercise", "half marathon", "training for a half marathon in april"),
        ("exercise", "climbing", "finally back to climbing after the injury"),
        ("condition", "asthma", "had asthma since I was a kid"),
        ("food_like", "pizza", "I really like pizza"),
        ("food_like", "ramen", "like, I adore ramen"),
        ("like", "kpop", "im into kpop lately"),
        ("drink_like", "flat whites", "flat whites are basically my whole personality"),
        ("like", "F1", "I'm a massive F1 nerd so explain it in F1 terms"),
        ("like", "bouldering", "got into bouldering this year"),
    ],
)
def test_a_stance_said_or_another_kind_is_kept(kind: str, value: str, statement: str) -> None:
    assert not stance_unsaid(kind, value, statement, statement)


def test_the_planning_drops_a_snack_met_but_keeps_the_fact_beside_it(home: MemoryHome) -> None:
    got = said(
        home,
        "type 1 diabetic here so the dessert menu was a whole negotiation. had the panna cotta",
        ("condition", "type 1 diabetic", ""),
        ("food_like", "panna cotta", ""),
    )
    assert got == ["health.conditions: Type 1 diabetic"]


def test_a_held_taste_named_without_a_stance_is_left_to_the_planning(home: MemoryHome) -> None:
    said(home, "I love mushrooms", ("food_like", "mushrooms", ""))
    got = said(home, "mushrooms don't agree with me anymore", ("food_like", "mushrooms", ""))
    assert not any("ushroom" in line and "likes" in line for line in got)


def test_a_stance_is_read_beside_the_value_not_across_a_long_message() -> None:
    sentences = [
        "I love my job, honestly.",
        "Today was mad though.",
        "Had to eat crisps from the vending machine at 3pm.",
        "Anyway the meeting went fine.",
    ]
    near = around(sentences[2], sentences)
    assert near == sentences[2]  # four sentences: a long message, the value's own sentence
    assert around(sentences[2], sentences[1:]) == " ".join(sentences[1:4])
    assert stance_unsaid("food_like", "crisps", sentences[2], near)
    assert not stance_unsaid("food_like", "crisps", sentences[2], " ".join(sentences))
    assert around("chess!", ["chess!", "I play online most nights"]) == (
        "chess! I play online most nights"
    )
    assert around("not one of them", sentences) == " ".join(sentences)


def test_in_a_long_message_a_stance_is_read_in_the_value_s_own_sentence() -> None:
    sentences = [
        "Next time I have people over for brunch I want to do shakshuka in the big pan.",
        "Every recipe online serves 2.",
        "I love having people round.",
        "Can you scale it for 6?",
    ]
    assert around(sentences[0], sentences) == sentences[0]
    short = sentences[:2]
    assert around(short[1], short) == " ".join(short)


def test_a_rabbit_hole_is_a_taste() -> None:
    text = "I've gone completely down the kombucha rabbit hole."
    assert not stance_unsaid("drink_like", "kombucha", text, text)


@pytest.mark.parametrize(
    ("kind", "value", "text"),
    [
        ("food_like", "shakshuka", "I want to do shakshuka in the pan, especially the eggs."),
        ("food_dislike", "sugar", "I'm now vibrating from sugar. I want to learn the terms."),
        ("food_dislike", "pasta", "We have people over and I'll do pasta."),
    ],
)
def test_words_inside_other_words_say_no_stance(kind: str, value: str, text: str) -> None:
    assert stance_unsaid(kind, value, text, text)


@pytest.mark.parametrize(
    ("kind", "value", "text"),
    [
        ("food_dislike", "olives", "I can't stand olives"),
        ("food_dislike", "olives", "I dont eat olives"),
        ("food_dislike", "coffee", "I'm so over coffee"),
    ],
)
def test_an_aversion_said_is_still_read(kind: str, value: str, text: str) -> None:
    assert not stance_unsaid(kind, value, text, text)
