"""Which questions ask for a quantity, and which memories state one (memagent.index.answers)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memagent.index.answers import asks_quantity, states_quantity


@pytest.mark.parametrize(
    "query",
    [
        "How many fish are there in total in both of my aquariums?",
        "how much did I spend on each coffee mug?",
        "How old was I when Alex was born?",
        "How long have I been using my Fitbit?",
        "How often do I see my therapist, Dr. Smith?",
        "How far is the cabin from the lake?",
        "What percentage of leadership positions do women hold?",
        "What is the total number of episodes I've listened to?",
        "What time do I usually go to the gym?",
        "What age did Caroline move to Sweden?",
        "How many years older is my grandma than me?",
        "How many short stories have I written since I started writing?",
        "HOW\nMUCH money did I raise for charity?",
    ],
)
def test_quantity_questions(query: str) -> None:
    assert asks_quantity(query)


@pytest.mark.parametrize(
    "query",
    [
        # what the question wants is not a number
        "What did I name my cat?",
        "Where did I complete my Bachelor's degree?",
        "Who gave me a stand mixer as a birthday gift?",
        "When did Melanie paint a sunrise?",
        # a span between two moments comes from when things were said
        "How many days ago did I meet Emma?",
        "How many weeks passed between Maria adopting Coco and Shadow?",
        "How long ago was Caroline's 18th birthday?",
        "How long did I use my binoculars before I saw the goldfinches?",
        "After how many weeks did Tim reconnect with his friend?",
        "How many months since I moved?",
        # cue words inside other words
        "Somehow manyfold things happened",
        "",
        "   ",
    ],
)
def test_other_questions_do_not(query: str) -> None:
    assert not asks_quantity(query)


@pytest.mark.parametrize(
    "text",
    [
        "I just turned 32 last month.",
        "The tank has ten neon tetras and five gouramis.",
        "I paid $500 to attend.",
        "Prices went up 5% this year.",
        "We met twice in Berlin.",
        "A dozen eggs, please.",
        "It cost me €40.",
    ],
)
def test_memories_stating_a_quantity(text: str) -> None:
    assert states_quantity(text)


@pytest.mark.parametrize(
    "text",
    [
        "I'm thinking of adding some decorations to the tank.",
        "Can you recommend a good camera bag?",
        "Someone gave it to me, honestly.",  # "one" inside a word is no number
        "",
    ],
)
def test_memories_stating_none(text: str) -> None:
    assert not states_quantity(text)


def test_hostile_and_oversized_input_is_handled() -> None:
    assert not asks_quantity("a" * 100_000)
    assert not asks_quantity("\x00\ud800 how\x00many")
    assert asks_quantity("how many " + "x " * 50_000 + "ago")  # the cue is read, the tail not
    assert not states_quantity("word " * 100_000)
    assert states_quantity("word " * 100_000 + "7")
    assert not states_quantity("\x00\ud800\U0001f600")


_UNITS = r"(?:seconds?|minutes?|hours?|days?|nights?|weeks?|months?|years?|decades?)"
# The rule as one regex (a lazy gap between "how long" and its cue): the meaning
# `asks_quantity` keeps, in quadratic time on a hostile query.
_SPAN_AS_ONE_REGEX = re.compile(
    r"\bhow\s+(?:long|many\s+" + _UNITS + r")\b[^?.!\n]*?"
    r"\b(?:ago|since|passed|elapsed|between|before|after|until)\b"
    r"|\b(?:after|before|within)\s+how\s+(?:long|many)\b",
    re.IGNORECASE,
)
_QUANTITY_CUE = re.compile(
    r"\bhow\s+(?:many|much|old|long|far|often|tall|heavy)\b"
    r"|\bwhat\s+(?:percentage|percent|number|age|time)\b|\bnumber\s+of\b",
    re.IGNORECASE,
)
_PIECES = ["how", "long", "many", "days", "weeks", "ago", "since", "between", "after",
           "within", "much", "did", "I", "meet", "Emma", "agoo", "?", ".", "!", "\n", " ",
           "  ", "HOW", "Long"]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=40))
def test_span_rule_is_the_one_regex_in_linear_time(pieces: list[str]) -> None:
    """Clause by clause, the elapsed-time rule answers as the single regex did
    (its gap was retried from every "how long": ~40 ms on a hostile query)."""
    query = " ".join(pieces)
    said = _QUANTITY_CUE.search(query) is not None
    assert asks_quantity(query) == (said and _SPAN_AS_ONE_REGEX.search(query) is None)


def test_a_how_long_across_a_line_break_still_asks_a_span() -> None:
    # hypothesis found it: "how long" may span a line break, its cue is read on
    # from its end to the end of that clause
    assert not asks_quantity("how \n long ago")
    assert asks_quantity("how \n long. ago")


def test_a_query_repeating_how_long_is_read_in_one_pass() -> None:
    assert not asks_quantity("how long " * 400 + "ago")
    assert asks_quantity("how long " * 400 + "? ago")
    assert asks_quantity("how many days " * 300)  # no cue: a count of days, not a span
