"""Where a message's sentences and quotes begin and end.

A sentence ends at a stop (not at a title's: "Mr. Fairweather"), at a new line, at an
emoji that closes it, and where the writer breaks off ("… nvm"); speech typed out without
stops is read in parts at its breaks ("… and then …", "anyway the thing is …").
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


RUN_ON_CHARS = 300
"""A 'sentence' longer than this, said in the first person, is speech run on without stops."""
_RUN_ON_BREAK = re.compile(
    r"\s+(?=(?:and then|anyway|oh and|so yeah|so anyway|but anyway|the thing is|also|plus|"
    r"because|cos|but|so|and I|and my|and we|and (?:can|could|would) you)\b)|"
    r",\s+(?=(?:and|but|so|I|I'm|we|my)\b)",
    re.IGNORECASE,
)
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|my|me|we|our)\b", re.IGNORECASE)
_PIECE_CHARS = 120


def _run_on(piece: str) -> list[str]:
    """A long first-person run-on (a voice note typed out: "so yeah we got back on sunday and
    then … anyway the thing is I have type 2 diabetes now …") in parts at its breaks, joined
    back while a part stays short; anything else whole."""
    if len(piece) <= RUN_ON_CHARS or not _FIRST_PERSON.search(piece):
        return [piece]
    out: list[str] = []
    lead = ""  # a break word alone ("anyway", "oh") opens the part after it
    for part in (p.strip(" ,") for p in _RUN_ON_BREAK.split(piece)):
        if len(part) < 25:
            lead = f"{lead}{part} " if part else lead
        elif out and len(out[-1]) + len(lead) + len(part) < _PIECE_CHARS:
            out[-1], lead = f"{out[-1]} {lead}{part}", ""
        else:
            out, lead = [*out, f"{lead}{part}"], ""
    if lead:
        out = [*out[:-1], f"{out[-1]} {lead.strip()}"] if out else [lead.strip()]
    return out


def sentences(text: str) -> list[str]:
    """The sentences of `text`, stripped, none empty; a long run-on spoken sentence in parts."""
    return [p for s in _SPLIT.split(text) if s and s.strip() for p in _run_on(s.strip())]


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
