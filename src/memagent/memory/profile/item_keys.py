"""Item keys: the stored slug and the looser key that decides "same item".

A profile must never hold the same fact twice because the model spelled it
differently, so `append` compares `match_key`s: case, spacing, punctuation and
simple English plurals are folded away ("Kung-Pao Chicken!" and "kung pao
chickens" are one item). The stored `item` stays a readable slug
(`kung_pao_chicken`); `match_key` is only ever compared, never shown.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_SEPARATORS = re.compile(r"[\W_]+", re.UNICODE)
_VOWELS = frozenset("aeiou")


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens of `text` (NFKC, case-folded, punctuation dropped)."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return [t for t in _SEPARATORS.split(folded) if t]


def slug(text: str) -> str:
    """The stored form of an item key: `"Kung Pao Chicken!"` → `kung_pao_chicken`."""
    return "_".join(tokens(text))


_ALIASES = {"veggie": "vegetarian", "vego": "vegetarian", "celiac": "coeliac"}
"""Chat's and other spellings of one diet word: "not veggie any more" ends "Vegetarian"."""


def _stem(token: str) -> str:
    token = _ALIASES.get(token, token)
    plural = False
    if len(token) > 3:
        if token.endswith("ies"):
            token, plural = token[:-3] + "i", True
        elif token.endswith("es"):
            token, plural = token[:-2], True
        elif token.endswith("s") and not token.endswith("ss"):
            token, plural = token[:-1], True
    if not plural and len(token) >= 3 and token.endswith("e"):
        token = token[:-1]
    if len(token) > 2 and token.endswith("y") and token[-2] not in _VOWELS:
        token = token[:-1] + "i"
    return token


@lru_cache(maxsize=65536)
def match_key(text: str) -> str:
    """The key two items are compared by; equal keys mean "the same item"."""
    return "_".join(_stem(t) for t in tokens(text))


_ENDINGS = frozenset({"ning", "ing", "ner", "ners", "mming", "mer", "s", "es", "ed"})


def said_word(word: str, said: set[str]) -> bool:
    """`word` (a match key) is among `said`, or shares a long enough stem with one
    of them ("intolerance"/"intolerant", "swimming"/"swim")."""
    if word in said:
        return True
    for other in said:
        short = min(len(word), len(other))
        common = next(
            (i for i, (a, b) in enumerate(zip(word, other, strict=False)) if a != b), short
        )
        rest = (word if len(word) > len(other) else other)[common:]
        if common == short >= 3 and rest in _ENDINGS:
            return True
        if common >= 4 and common >= 0.75 * short:
            return True
    return False


def abbreviates(said: str, key: str) -> bool:
    """`said` is a short name of the item `key` ("the doxy" for `doxycycline`): its first
    word has four letters or more and begins the item's first word."""
    word = (tokens(said.lower().removeprefix("the ")) or [""])[0]
    first = (tokens(key) or [""])[0]
    return len(word) >= 4 and first != word and first.startswith(word)
