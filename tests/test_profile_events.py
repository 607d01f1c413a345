"""An event, a mood, a need of the moment or someone's quoted words is episodic; a
lasting state, a participle that says how one is, or a stay with its end is not."""

from __future__ import annotations

import pytest

from memagent.memory.profile.events import episodic


@pytest.mark.parametrize(
    "sentence",
    [
        "I cleaned out the garage over the weekend.",  # a past event, dated: not a stay
        "Spent two hours on hold with the bank.",  # the writer left unsaid, past tense
        "Feeling a bit under the weather.",  # ... progressive
        "I'm kind of stressed about this deadline.",  # a degree word: felt now
        "Pretty nervous about tomorrow's presentation.",
        "Need a good name for a fantasy character.",  # a need of the moment
        "I need to buy milk on the way home.",
        'The sign said "no dogs allowed".',  # quoted words
        "Someone at work said the office is moving.",  # reported words
        "The waiter told us the chef is allergic to compliments.",
        "I almost forgot it's my turn to cook.",
        "Cleaned out the shed.",
        "The neighbours' dog chewed up our hose.",  # a past event with another subject
        "My sister's car broke down.",
        "actually don't, I've had 4 coffees already and my hands are shaking",  # a count so far
    ],
)
def test_events_moods_needs_and_quoted_words_are_episodic(sentence: str) -> None:
    assert episodic(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "Based in Leeds, working as a pharmacist.",  # a participle that says how one is
        "Married with two kids.",
        "Sparkling water is the only thing I drink at work.",  # -ing word, then 'is'
        "Reading sci-fi novels is my favourite way to relax.",
        "Camping in the Highlands until the end of the month.",  # a stay with an end
        "Red wine gives me migraines so I avoid it.",  # 'Red' is not a past tense
        "The doctor says I'm not actually allergic to penicillin.",  # said of the writer
        "I'm really into jazz.",
        "I'm in Berlin until Friday.",
        "I flew to Rome and I'm staying until Sunday.",  # past, but a stay now
        "Morning runs are my thing.",
        "My doctor put me on a low-salt diet.",  # done to the writer: a state now
        "My flight got delayed, so I'm stuck in Nairobi till Monday.",  # a stay
        "Going to gym at 6am daily before classes",  # an -ing said with a habit word
        "I'm running every morning before work",
    ],
)
def test_lasting_facts_are_not_episodic(sentence: str) -> None:
    assert not episodic(sentence)


def test_what_an_article_is_saying_is_reported() -> None:
    assert episodic("read an article saying coffee is good for your liver")


@pytest.mark.parametrize(
    "sentence", ["Went to the gym every day last year", "I'm running late", "Walked the dog today"]
)
def test_a_past_habit_or_a_moment_stays_episodic(sentence: str) -> None:
    assert episodic(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "So I sing with a community choir in Dundee on Thursday evenings, have done since before"
        " covid, alto section.",
        "So I've been doing Argentine tango classes every Monday night for about six months and "
        "I'm finally starting to feel less like a baby giraffe.",
    ],
)
def test_a_habit_opened_with_so_is_no_passing_state(sentence: str) -> None:
    assert not episodic(sentence)


@pytest.mark.parametrize("sentence", ["So sleepy today", "so tired lol", "I'm so stressed"])
def test_a_degree_word_still_says_a_passing_state(sentence: str) -> None:
    assert episodic(sentence)
