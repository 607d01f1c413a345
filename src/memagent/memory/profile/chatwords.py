"""Chat spelling read as written English, before a pattern or the model reads a sentence.

Why: a 1.5B model, and the screen's patterns, read "im allergic", "cant stand" and "me
sister's gone vegan" worse than "I'm allergic", "can't stand" and "my sister's gone
vegan". Only spellings with one reading are changed: the pronoun, contractions without
their apostrophe, chat's days ("tmrw"), and "me" for "my" before a relative or a pet
("me n the missus", "walkin me dogs").

Contract: `as_written(sentence)` returns the sentence with those spellings made standard
and nothing else changed.
"""

from __future__ import annotations

import re

from memagent.memory.profile.relations import ANIMALS, RELATION_WORDS

_CHAT_SPELLING = {
    "i": "I",
    "im": "I'm",
    "ive": "I've",
    "i'm": "I'm",
    "i've": "I've",
    "i'd": "I'd",
    "i'll": "I'll",
    "dont": "don't",
    "cant": "can't",
    "wont": "won't",
    "doesnt": "doesn't",
    "didnt": "didn't",
    "isnt": "isn't",
    "wasnt": "wasn't",
    "havent": "haven't",
    "tmrw": "tomorrow",
    "tmr": "tomorrow",
    "tmrow": "tomorrow",
    "tmoro": "tomorrow",
    "2moro": "tomorrow",
    "2morrow": "tomorrow",
    "tonite": "tonight",
    "2nite": "tonight",
    "wknd": "weekend",
    "wat": "what",
    "wot": "what",
    "wats": "what's",
    "wots": "what's",
    "wen": "when",
    "u": "you",
    "shes": "she's",
    "hes": "he's",
    "theyre": "they're",
    "youre": "you're",
    "thats": "that's",
    "whats": "what's",
    "theres": "there's",
}
_CHAT_WORD = re.compile(rf"(?<![\w'])(?:{'|'.join(map(re.escape, _CHAT_SPELLING))})(?![\w'])")


_MINE = (*RELATION_WORDS, *ANIMALS, "mate", "mates", "pal", "buddy", "boss", "gaffer", "friend")
_ME_AS_MY = re.compile(
    r"(?<![\w'])(?:(?P<verb>\w+)\s+)?(?P<me>me)\s+(?=(?:(?:little|old|big|two|three)\s+)?"
    rf"(?:{'|'.join(sorted(map(re.escape, _MINE), key=len, reverse=True))})"
    r"(?:s|'s)?(?![\w-]))",
    re.IGNORECASE,
)
_TAKES_ME = re.compile(
    r"give|gave|tell|told|send|sent|show|showed|bring|brought|call|called|teach|taught|owe|"
    r"pass|hand|lend|let",
    re.IGNORECASE,
)


_DROPPED_G = re.compile(
    r"(?<![\w'])((?:do|go|tak|mak|com|gett|work|driv|look|liv|hav|say|try|stay|plann|think|feel|"
    r"kipp|struggl|avoid|kill|ask|cover|train|eat|drink|runn|walk|cook|play|start|finish|chas|"
    r"send|mov|head|visit|wait|sleep|fix|build|paint|fitt|travell|fly|leav|pick|los|miss|watch|"
    r"talk|text|ring|bring|sort|sav|spend|pay|buy|sell|rent|book|learn|teach|study|car|nurs|"
    r"swimm|cycl|jogg|lift|climb|danc|sing|bak|shop|clean|wash|fast|hat|lov|suffer|recover|"
    r"box)in)'?(?![\w'])",
    re.IGNORECASE,
)
"""Chat's dropped g ("drivin", "kippin", "strugglin"): the verb, written out."""


def _me_as_my(m: re.Match[str]) -> str:
    verb = m.group("verb")
    if verb is not None and _TAKES_ME.fullmatch(verb):
        return m.group(0)
    return m.group(0)[: m.start("me") - m.start()] + ("My " if m.group("me")[0] == "M" else "my ")


def as_written(sentence: str) -> str:
    """`sentence` with chat spelling of the pronoun and of contractions made standard ("i
    love ghibli films, im obsessed" → "I love ghibli films, I'm obsessed"), and chat's
    "me" for "my" before a relative or a pet ("me sister's gone vegan" is the sister's
    fact), so a pattern or the model reads lower-case chat as it reads the rest. A "me"
    a verb takes stays ("gave me kids' books")."""
    chat = _CHAT_WORD.sub(lambda m: _CHAT_SPELLING[m.group(0)], sentence)
    chat = _DROPPED_G.sub(lambda m: m.group(1) + "g", chat)
    return _ME_AS_MY.sub(_me_as_my, chat)
