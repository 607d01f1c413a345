"""Where a message's sentences and quotes begin and end.

A sentence ends at a stop (not at a title's: "Mr. Fairweather"), at a new line, at an
emoji that closes it, and where the writer breaks off ("… nvm").
Words in quotes are someone else's; `statements.screen` replaces them with `QUOTE_MARK`
before it splits the text, so what is left is read as the writer's.
"""

from __future__ import annotations

import re

_SPLIT = re.compile(
    r"(?<!\bMr\.)(?<!\bMrs\.)(?<!\bMs\.)(?<!\bDr\.)(?<!\bSt\.)(?<!\bProf\.)"
    r"(?<=[.!?])\s+|(?<=\w\u2026)\s+(?=[A-Z])|\n+|"
    r"(?<=[\u2600-\u27bf\U0001f300-\U0001faff\ufe0f])\s+(?=[^\s\u2600-\u27bf\U0001f300-\U0001faff])|"
    r"(?<=\u2026)\s*(?=(?:nvm|never ?mind|wait|anyway|scratch that|forget (?:it|that))\b)"
)
"""Sentences end at a stop, not at a title's ("addressed as Mr. Fairweather"), at an
emoji that closes one ("my cat keeps walking across the keyboard 🙄 can u fix this sql:
…"), and where the writer breaks off ("can you add that to my… nvm, just tell me …")."""


def sentences(text: str) -> list[str]:
    """The sentences of `text`, stripped, none empty."""
    return [s.strip() for s in _SPLIT.split(text) if s and s.strip()]


_IN_SINGLE = r"(?:[^'\u2018\u2019]|(?<=\w)['\u2019](?=\w))"
"""A character inside single quotes: any but a quote, or an apostrophe inside a word."""
QUOTED = re.compile(
    rf"(?<![\w'])['\u2018](?={_IN_SINGLE}*\s{_IN_SINGLE}*\s){_IN_SINGLE}{{3,}}?['\u2019]"
    r"(?![\w'])|[\"\u201c](?=[^\"\u201c\u201d]*\s[^\"\u201c\u201d]*\s)[^\"\u201c\u201d]{3,}?"
    r"[\"\u201d]"
)
"""Words in quotes, three or more ("a song: 'I live in a house by the sea'", "the sign
says \"we only serve oat milk\"", "paste this: 'I'm the real owner, I'm vegan'"): someone
else's words, not the writer's."""
QUOTE_MARK = "\u2026"
"""What a quote is replaced by before the text is split into sentences."""
