"""A life event ends a state held though its words are not said: the baby born ends a
pregnancy, "caved" ends the diet rule it names, a dry month over ends "No alcohol"."""

from __future__ import annotations

import pytest

from memagent.core import MemoryHome
from memagent.memory.profile.milestones import (
    eating_again,
    off_coffee,
    pregnancy_over,
    rule_given_up,
)
from profile_support import profile_lines, seed, store_of
from profile_support import said_on as said


@pytest.mark.parametrize(
    ("text", "over"),
    [
        ("baby arrived on sunday!!! 👶 we're exhausted and so happy", True),
        ("baby boy arrived on monday! his name is Noah", True),
        ("I gave birth to a little girl last night", True),
        ("the baby is kicking a lot today", False),
        ("my sister's baby arrived", True),  # the cost: whose baby is not read
        ("can't wait for the baby to arrive", False),
    ],
)
def test_the_baby_come_ends_a_pregnancy(home: MemoryHome, text: str, over: bool) -> None:
    seed(home, "I'm pregnant, due in May.", ("condition", "pregnant", ""))
    ops = pregnancy_over([text], store_of(home).load_all())
    assert bool(ops) is over


def test_nothing_to_end_without_a_pregnancy_held(home: MemoryHome) -> None:
    assert pregnancy_over(["baby arrived on sunday!"], store_of(home).load_all()) == []


def test_caved_ends_the_rule_it_names_and_only_that(home: MemoryHome) -> None:
    seed(home, "no caffeine for me", ("diet", "caffeine", ""))
    seed(home, "no pork for me", ("diet", "pork", ""))
    ops = rule_given_up(["caved. back on coffee, can't live without it"], store_of(home).load_all())
    assert [op.value.item for op in ops] == ["caffeine"]


def test_a_dry_month_over_ends_no_alcohol(home: MemoryHome) -> None:
    seed(home, "no alcohol at all till august", ("diet", "alcohol", ""))
    assert any("alcohol" in line.lower() for line in profile_lines(home))
    resources = store_of(home).load_all()
    ops = rule_given_up(["so dry july is officially over lol"], resources)
    assert [op.value.item for op in ops] == ["alcohol"]
    assert rule_given_up(["dry july is going great"], resources) == []


def test_eating_meat_again_ends_the_diet_that_kept_it_out(home: MemoryHome) -> None:
    seed(home, "I'm vegetarian", ("diet", "vegetarian", ""))
    seed(home, "no pork for me", ("diet", "pork", ""))
    resources = store_of(home).load_all()
    ops = eating_again(["welp I've started eating meat again after 8 years"], resources)
    assert [op.value.item for op in ops] == ["vegetarian"]
    assert eating_again(["back on cheese again, can't help it"], resources) == []  # no vegan held
    assert eating_again(["I eat meat, always have"], resources) == []


def test_no_more_coffee_ends_liked_coffees_but_a_break_does_not(home: MemoryHome) -> None:
    seed(home, "I love a flat white", ("drink_like", "flat white", ""))
    seed(home, "I love rooibos", ("drink_like", "rooibos", ""))
    resources = store_of(home).load_all()
    ops = off_coffee(["no more coffee for me, it's wrecking my sleep"], resources)
    assert [op.value.item for op in ops] == ["flat_white"]
    assert off_coffee(["no coffee for me this week"], resources) == []
    assert eating_again(["i've been eating meat again since christmas"], resources) == []


def test_back_on_the_coffee_ends_the_rule_against_it(home: MemoryHome) -> None:
    seed(home, "i'm off coffee for january", ("diet", "coffee", ""))
    resources = store_of(home).load_all()
    ops = rule_given_up(["actually scrap that, failed already, back on the coffee"], resources)
    assert [op.value.item for op in ops] == ["coffee"]
    assert rule_given_up(["back on the bike next week"], resources) == []


@pytest.mark.parametrize(
    "text", ["3 weeks smoke free today!!! can you make me a tracker", "stopped smoking in march"]
)
def test_smoke_free_ends_smoking_however_it_was_held(home: MemoryHome, text: str) -> None:
    said(home, "I'm a smoker, a cig every couple hours", ("condition", "smoker", ""))
    said(home, "love a cig with my coffee", ("like", "cig", ""))
    said(home, "I love hiking", ("like", "hiking", ""))
    assert said(home, text) == ["preferences.likes: Likes hiking"]
