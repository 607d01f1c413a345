from __future__ import annotations

import string

from hypothesis import given
from hypothesis import strategies as st

from memagent.memory.profile import match_key, slug

words = st.text(alphabet=string.ascii_lowercase, min_size=3, max_size=12).filter(
    lambda w: not w.endswith("s")
)
phrases = st.lists(words, min_size=1, max_size=4)


def test_slug_is_readable_snake_case() -> None:
    assert slug("Kung Pao Chicken!") == "kung_pao_chicken"
    assert slug("  crème   brûlée ") == "crème_brûlée"
    assert slug("!!!") == ""


def test_examples_that_are_the_same_item() -> None:
    pairs = [
        ("cookies", "cookie"),
        ("berries", "Berry"),
        ("tomatoes", "tomato"),
        ("dishes", "dish"),
        ("glasses", "glass"),
        ("Kung-Pao Chicken!", "kung pao chickens"),
        ("peanuts", "PEANUT"),
    ]
    for a, b in pairs:
        assert match_key(a) == match_key(b), (a, b)


def test_different_items_stay_different() -> None:
    assert match_key("tea") != match_key("tee")
    assert match_key("green tea") != match_key("tea")
    assert match_key("glass") != match_key("gas")


@given(phrases)
def test_case_spacing_and_punctuation_do_not_matter(ws: list[str]) -> None:
    base = " ".join(ws)
    variants = ["_".join(ws).upper(), "  " + "-".join(w.title() for w in ws) + "!? ", ",".join(ws)]
    for v in variants:
        assert match_key(v) == match_key(base)


@given(phrases, st.integers(min_value=0, max_value=3))
def test_a_simple_plural_is_the_same_item(ws: list[str], which: int) -> None:
    which %= len(ws)
    plural = [w + "s" if i == which else w for i, w in enumerate(ws)]
    assert match_key(" ".join(plural)) == match_key(" ".join(ws))


@given(st.text(max_size=60))
def test_match_key_has_no_spaces_and_ignores_slugging(text: str) -> None:
    key = match_key(text)
    assert " " not in key
    assert match_key(slug(text)) == key
