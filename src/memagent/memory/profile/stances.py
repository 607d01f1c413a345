"""Whether a statement takes a stance on a thing the model read as liked or disliked.

Why: made to list a fact, the 1.5B model lists what a line mentions as what the writer
likes: the crisps eaten from a vending machine while waiting at a hospital, the toffee a
filling came out on, the okonomiyaki below a friend's flat, "the office pizza thing is
always awkward". What tells a taste from a thing met is not the thing but the words
around it: a taste is said with a word of liking or of habit ("love", "my go-to", "a
coffee person", "every morning", "I drink oat milk lattes"), a dislike with a word of
aversion ("hate", "can't stand", "gross", "avoid", "n't"). Without one anywhere in the
statement, a like or dislike the model read is not stored. A like the statement ends
("spicy food doesn't agree with me anymore") is left to the planning that ends it.

Contract: `stance_unsaid(kind, value, clause, statement)` is True when `kind` is a like
or dislike and `statement` says no stance on it, so the fact is dropped; False for every
other kind. The planner passes as `statement` the sentence that says the value and the
ones either side (`around`): in a long, rambling message a "love" three sentences away
says nothing of the crisps eaten here.
"""

from __future__ import annotations

import re

from memagent.memory.profile.negation import ended
from memagent.memory.profile.occasions import REGULAR, habitual

LIKED = ("food_like", "drink_like", "like")
DISLIKED = ("food_dislike", "drink_dislike", "dislike")

LIKING_WORDS = (
    r"lik|lov|enjoy|adore|favou?rite|fan\b|into\b|go-to|prefer|obsess|addict|switch|start|"
    r"took up|taken up"
)
"""Word starts that say a liking or its start ("love", "into", "my go-to", "took up"), for a
pattern that opens with `\b`; `kinds` reads a taste by them too."""
_TASTE_SAID = re.compile(
    rf"\b(?:{LIKING_WORDS}|fave?s?\b|crav|(?:my|our) (?:thing|weakness|jam|staple)\b|get into|"
    r"best\b|can'?t (?:get enough|live without|resist|beat)|nothing (?:beats|is better|better)|"
    r"is life\b|lover\b|drinker\b|snob\b|person\b|comfort|hooked|happy place|of choice\b|"
    r"nerd\b|geek\b|buff\b|junkie\b|fiend\b|personality\b|rabbit hole\b|"
    r"(?:could|would|'d) (?:eat|drink|live on|play|watch)|live on\b|happily|"
    r"it'?s all about|come (?:a)?round|always|usually|never say no|can'?t say no|from now on|"
    r"only\b)",
    re.IGNORECASE,
)
"""Words of taste or habit."""
_NOT_A_LIKING = re.compile(
    r"(?:^|(?<=[.,!?;:(]))\s*like\b|"
    r"\b(?:(?:look|feel|taste|sound|seem|smell)(?:s|ed|ing)?|just|more|something|anything|stuff|"
    r"things|people|someone|was|is|it'?s|be|i'?m|you'?re|we'?re|would|i'?d|we'?d)\s+like\b|"
    r"\blike\s+(?:literally|an? (?:entire|whole)|\d)|"
    r"(?<=\w )(?<!'m )(?<!\bam )(?<!'re )(?<!\bare )(?<!\breally )(?<!\bso )(?<!\btotally )"
    r"(?<!\bbig )(?<!\bgetting )(?<!\bgot )(?<!\bget )(?<!\bbeen )(?<!\bvery )"
    r"(?<!\bsuper )(?<!\bim )\binto\b",
    re.IGNORECASE,
)
""""like" as a comparison or a filler ("tastes like soap", "ate way too much. like an
entire easter egg"), a wish ("I'd like the salmon"), "into" as a way in ("went into
labour"): no liking."""
_AVERSION = re.compile(
    r"\b(?:not?|never|cannot|avoid\w*|off|sick of|tired of|(?:'m|am|so|totally|well) over|"
    r"hat\w*|dislik\w*|loath\w*|"
    r"detest\w*|awful|horrible|terrible|bad|worst|gross|vile|yuck|yuk|ew+|nasty|disgust\w*|"
    r"revolting|soap\w*|sick|gag\w*|allerg\w*|intoleran\w*|gives? me|without|skip\w*|"
    r"pass on|ruin\w*|overrated|meh|bland|rank|urgh|ugh|slimy|texture|dont|cant|wont|didnt|"
    r"doesnt|isnt|wasnt|aint)\b|n't\b",
    re.IGNORECASE,
)
"""Words of aversion."""


_KEPT_UP = re.compile(
    r"\b(?:train\w*|runner|swimmer|cyclist|climber|lifter|member\w*|class\w*|club|league|"
    r"team|marathon|half|[0-9]+k\b|couch to|pb\b|personal best|lessons?|coach\w*|session\w*|"
    r"gym|again|back (?:to|into|on)|getting (?:into|back)|keen|hobby|since)",
    re.IGNORECASE,
)
"""Words of an exercise kept up rather than done once ("training for a half", "I'm a
swimmer", "back to climbing")."""
_RUN_OUT = re.compile(
    r"\brun(?:ning)? (?:out|late|low|into|over|errands)\b|\bran (?:out|into)\b", re.IGNORECASE
)


def around(clause: str, sentences: list[str]) -> str:
    """The sentence `clause` opens with and the one either side of it: where a stance on
    what it says is told ("chess! I play online most nights"; "caved. back on coffee ☕
    can't live without it"), and not a taste word from another part of a long message."""
    at = next((n for n, s in enumerate(sentences) if clause.startswith(s)), None)
    if at is None:
        return " ".join(sentences)
    if len(sentences) >= LONG_MESSAGE or sum(map(len, sentences)) > LONG_MESSAGE_CHARS:
        return sentences[at]  # a long message's sentences each say their own thing
    return " ".join(sentences[max(0, at - 1) : at + 2])


LONG_MESSAGE = 4
LONG_MESSAGE_CHARS = 400
"""Kept sentences, or characters, from which a stance is read in the value's own sentence."""


def stance_unsaid(kind: str, value: str, clause: str, statement: str) -> bool:
    """`kind` is a like, a dislike or an exercise and `statement` says no taste, aversion
    or habit of `value` (module doc): "went for a walk at lunch" is a walk had, not an
    exercise the writer does; `clause` is the part that says `value`, read for a habit."""
    if kind in DISLIKED:
        return not _AVERSION.search(statement)
    if kind == "exercise":
        if _RUN_OUT.search(statement) and re.match(r"\W*run", value, re.I):
            return True  # "I've run out of episodes"
        said_kept = _TASTE_SAID.search(statement) or _KEPT_UP.search(statement)
        return not (said_kept or REGULAR.search(statement) or habitual(clause))
    if kind not in LIKED:
        return False
    said = _NOT_A_LIKING.sub(" ~", statement)
    if _TASTE_SAID.search(said) or REGULAR.search(statement) or habitual(clause):
        return False
    return not ended(value, kind, clause)
