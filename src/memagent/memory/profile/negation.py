"""Whether a statement says a fact is over, and which things it negates.

Mechanical, no model. A negation belongs to the part of a sentence it is said
in, so each value is judged in its own sub-clause (split at commas, "but",
"so", "and I …"): in "Actually I prefer tea now, not coffee" only coffee is
over, and in "I'm not a fan of blue cheese" nothing is (the "not" is part of how
a dislike is said, not a negated fact).

- A fact is **over** when its value is the object of a negation ("no more
  sushi", "not (actually) allergic to kiwi", "quit coffee", "instead of X", "I'm
  over football", "I don't swim any more"), or, for a
  fact of a positive kind (a like, a habit, a medicine), when its sub-clause
  says something ended ("no longer", "any more", "stopped", "gave up").
- For a kind that is itself a negation (a diet restriction, a dislike), "I
  don't eat pork (any more)" *states* the fact; only a negated value ("I'm not
  vegetarian any more") ends it.
"""

from __future__ import annotations

import re

from memagent.memory.profile.item_keys import match_key, said_word, tokens

NEGATIVE_KINDS = frozenset({"diet", "food_dislike", "drink_dislike", "dislike"})
"""Kinds whose meaning is a negation: a "don't" states them rather than ends them."""

DISLIKE_CUE = re.compile(
    r"\b(don'?t|do not|doesn'?t|never) (really )?(like|love|enjoy|eat|drink)\b|\bhate[ds]?\b|"
    r"\bcan'?t stand\b|\bcannot stand\b|\bdislike\b|\bnot a fan of\b|\bloathe\b|\bdetest\b|"
    r"\bnot into\b|\bcan'?t bear\b|\b(?:vile|gross|disgusting|revolting|yuck|yuk|nasty|rank|"
    r"the worst)\b|"
    r"\b(?:not|never|never been) (?:really |much of )?an? [\w-]+ (?:person|fan|drinker|eater)\b",
    re.IGNORECASE,
)
ENDED = re.compile(
    r"\b(no longer|any ?more|stopped|quit|gave up|given up|no more|went off|gone off|"
    r"over it|grown out of|grew out of|outgrew|outgrown|went away|gone away|cleared up|"
    r"(?:finally|all|completely|totally|is|are|'s|'re|have|'ve) gone"
    r"(?=\W*$|\s+(?:now|for good|at last)\b)|"
    r"haven'?t touched|have not touched|pull(?:ing|ed)? out of|drop(?:ping|ped)? out of|"
    r"withdr(?:ew|awn|awing) from)\b",
    re.IGNORECASE,
)
_ABSTAIN = re.compile(
    r"\b(don'?t|do not|doesn'?t|never|no longer|can'?t|cannot) (eat|drink|touch|have|like|"
    r"love|enjoy|do)\b",
    re.IGNORECASE,
)
_RULED_OUT = re.compile(r"\b(?:is|are) (?:out|off the table|off the menu)\b", re.IGNORECASE)
SAID_NOT = re.compile(r"^(?:no longer|not (?:really |any ?more )?(?:an? )?)\s*(?=\w)", re.I)
"""A value read with its own negation ("no longer vegan"): the thing, which the clause ends."""
_NEGATED_THING = re.compile(
    r"\b(?:no more|not(?: actually| really| even| exactly| truly)?|instead of|rather than|"
    r"(?<=was )never(?: actually| really)?|(?<=were )never(?: actually| really)?|"
    r"no longer(?: \w+)?(?: to)?|stopped(?: \w+ing)?(?: the| my)?|gave up|given up|"
    r"had to give up(?: the| my)?|"
    r"(?<!n't )(?<!never )(?<!not )(?<!to )\bstop(?:ping)?(?: taking| with)?(?: the| my)|"
    r"quit(?: \w+ing)?|haven'?t touched(?: any)?|pull(?:ing|ed)? out of(?: the| my)?|"
    r"drop(?:ping|ped)? out of(?: the| my)?|drop(?:ping|ped)? (?:the|my)|"
    r"ditch(?:ing|ed)?(?: the| my)?|pack(?:ing|ed)? in(?: the| my)?|"
    r"jack(?:ing|ed)? in(?: the| my)?|hung up(?: the| my)|hang(?:ing)? up(?: the| my)|"
    r"(?:fallen|fell|falling) out of love with(?: the| my)?|"
    r"lost (?:all )?interest in(?: the| my)?|"
    r"off(?! to\b| for\b)|"
    r"(?:grown|grew) out of(?: my)?|outgrew(?: my)?|outgrown(?: my)?|"
    r"(?:I'?m|I am) (?:so |totally |completely |well |kind of |pretty much )?over|"
    r"(?:done|finished) with(?: the| my)?)"
    r"\s+((?:(?!(?:for|with|and|but|because|so|since|onto|into|completely|altogether|entirely|"
    r"totally|now|today|yesterday|again|at last)\b)[\w'-]+\s?){1,3})",
    re.IGNORECASE,
)
_NOT_ANY_MORE = re.compile(
    r"\b(?:don'?t|do not|doesn'?t|does not|can'?t|cannot|won'?t|never)\s+"
    r"((?:[\w'-]+\s){0,3}?[\w'-]+)\s+(?:any ?more|any longer|these days|now)\b",
    re.IGNORECASE,
)
""""I don't swim anymore": the verb and its object are what is over ("swim")."""
_LEFT_BEHIND = re.compile(
    r"\b(?:switched|changed|moved|went|swapped|converted)\s+(?:(?:me|us|him|her|them)\s+)?"
    r"(?:over\s+)?from\s+"
    r"((?:[\w'-]+\s){0,2}?[\w'-]+)\s+to\b"
    r"|((?:[\w'-]+\s){0,2}?[\w-]+?)(?:\s+(?:is|are)\s+|'s\s+)(?:out|off the table|off the menu|"
    r"over|done|finished)\b"
    r"|\bfinished (?:the |my )?course of (?:the )?([\w-]+)"
    r"|\bfinished (?:the |my )?([\w-]+) course\b"
    r"|((?:[\w'-]+\s){0,2}?[\w-]+?)(?:\s+(?:is|are)\s+|'s\s+)(?:all |fully |completely )?"
    r"(?:healed|mended|back on the menu)\b",
    re.IGNORECASE,
)
""""I switched from coffee to green tea", "my doctor switched me from X to Y", "running is
out for now", "keto's done": the first thing is over."""
_CANCELLED = re.compile(
    r"((?:[\w'-]+\s){0,2}?[\w-]+?)(?:'s|\s+(?:got|was|has been|is|'s been|been))\s+"
    r"(?:cancell?ed|called off|scrapped)\b"
    r"|^\W*((?:[\w'-]+\s){0,2}?[\w-]+?)\s+(?:cancell?ed|called off|scrapped)\b"
    r"|^\W*([\w-]+)\b[^.!?]{0,60}?\b(?:they'?ve|they have|they|we'?ve|we have|I'?ve|I have|"
    r"had to) (?:just )?(?:cancell?ed|called (?:it )?off)\b"
    r"|((?:[\w'-]+\s){0,2}?[\w-]+?)(?:\s+(?:is|are)\s+|'s\s+)(?:all |totally )?off"
    r"(?!\s+(?:to|for|work|sick|school|duty|today|now|the|my|her|his|its)\b)\b",
    re.IGNORECASE,
)
""""the concert was called off", "dentist cancelled", "camping's off this weekend": a plan or a
class over, not a liking."""
_SUBCLAUSE = re.compile(
    r"\s*[,;:\u2014\u2013]\s*(?:(?:and|but|so)\s+)?|\s+-\s+|"
    r"\s+(?:but|so|though|although|because|since|whereas)\s+|"
    r"\s+and\s+(?=(?:I|I'm|I've|I'd|now|then|we)\b)",
    re.IGNORECASE,
)


def parts(sentence: str) -> list[str]:
    """`sentence` split where a negation's reach ends (commas, "but", "so", "and I …")."""
    return [p for p in _SUBCLAUSE.split(sentence) if p and p.strip()]


def _keys(text: str) -> set[str]:
    return {match_key(t) for t in tokens(text)}


def subclause(value: str, clause: str) -> str:
    """The part of `clause` that says `value` (all its words, word endings folded:
    "swimming laps" is said in "I swim laps"), else the clause."""
    want = _keys(value)
    for part in _SUBCLAUSE.split(clause):
        said = _keys(part)
        if want and all(said_word(w, said) for w in want):
            return part
    return clause


_CONTRAST = re.compile(
    r"\bit(?:'s not| is not| isn'?t| was not| wasn'?t) (?:the |my )?"
    r"(?P<old>[\w'-]+(?: [\w'-]+){0,2}?)"
    r"(?P<clause> (?:I|that|which|what)\b[^,;.]{0,40})?,\s*"
    r"(?:but |it'?s |it is |it was |actually )+"
    r"(?:the |my )?(?P<new>[a-z][\w'-]*(?: [a-z][\w'-]*){0,2})(?=[,.;!]|$)",
    re.IGNORECASE,
)
_CONTRAST_AFTER = re.compile(
    r"\bit(?:'s| is| was) (?:the |my )?(?P<new>[\w'-]+(?: [\w'-]+){0,2}?)"
    r"(?P<clause> (?:I|that|which|what)\b[^,;.]{0,40})?,\s*(?:and )?not (?:the |my )?"
    r"(?P<old>[a-z][\w'-]*(?: [a-z][\w'-]*){0,2})(?=[,.;!]|$)",
    re.IGNORECASE,
)
""""It's mango I'm allergic to, not kiwi": the same correction, the right one first."""
_MINE = re.compile(
    r"^ I(?:'m| am)? (?:\w+ )?(?:like|love|react|allergic|eat|take|drink|prefer|meant|mean|"
    r"avoid|can'?t)",
    re.IGNORECASE,
)
_CORRECTING = re.compile(
    r"\b(?:correction|actually|sorry|I meant|turns out|my mistake|mixed (?:it |them )?up|"
    r"wrong|misspoke|not right)\b",
    re.IGNORECASE,
)


def contrasts(sentence: str) -> list[tuple[str, str]]:
    """(wrong, right) for "it isn't latex, it's nickel" or "it's nickel, not latex" in
    `sentence`; with a clause after the first only when it says what the writer does
    with it ("it isn't latex I react to, it's nickel") or the sentence says it corrects
    something: "it wasn't the coffee that kept me up, it was the tea" takes back no
    liking of coffee. The wrong one is taken back only when it is a held item word for
    word (`swaps.taken_back`)."""
    return [
        (m.group("old").strip(), m.group("new").strip())
        for pattern in (_CONTRAST, _CONTRAST_AFTER)
        for m in pattern.finditer(sentence)
        if not m.group("clause") or _MINE.match(m.group("clause")) or _CORRECTING.search(sentence)
    ]


_HATED = re.compile(r"^(?:really |actually )?(?:hate|dislike|loathe|detest|mind)\b", re.I)


def unhated(things: list[str]) -> bool:
    """One of `things` (`negated_things`) is a dislike said to be over ("I don't hate
    the treadmill any more"): the statement may end a held dislike."""
    return any(_HATED.match(t) for t in things)


def negated_things(sentences: list[str]) -> list[str]:
    """The things a statement says are over or wrong ("no more sushi", "not coffee")."""
    out: list[str] = []
    for s in sentences:
        for pattern in (_NEGATED_THING, _NOT_ANY_MORE, _LEFT_BEHIND, _CANCELLED):
            for m in pattern.finditer(s):
                out.append(next(g for g in m.groups() if g).strip())
    return out


def cancelled_things(sentences: list[str]) -> list[str]:
    """The things a statement says are cancelled: plans and classes, which end a plan or
    a habit and leave a liking alone ("pottery class is cancelled for good")."""
    return [
        next(g for g in m.groups() if g).strip() for s in sentences for m in _CANCELLED.finditer(s)
    ]


def is_negated(value: str, text: str, *, directly: bool = False) -> bool:
    """`value` is the object of a negation in `text` ("not coffee", "no more X");
    `directly`: right after the negation ("not vegetarian", not "not a fan of X")."""
    want = [match_key(t) for t in tokens(value)]
    for thing in negated_things([text]):
        got = [match_key(t) for t in tokens(thing)]
        if want and (got[: len(want)] == want if directly else set(want) <= set(got)):
            return True
    return False


_SWITCHED_TO = re.compile(
    r"\bswitch(?:ed|ing)? (?:me |him |her )?(?:over )?(?:from [\w-]+(?: \d+ ?mg)? )?(?:on)?to "
    r"((?:[\w-]+ ){0,2}[\w-]+)",
    re.IGNORECASE,
)
"""What a medicine was switched to ("gp's switched me to sertraline"): any other medicine the
statement names is the one left behind (`_LEFT_BEHIND` reads only "from X to Y")."""


def ended(value: str, kind: str, clause: str) -> bool:
    """`clause` says the fact (`kind`, `value`) is over (module doc)."""
    part = subclause(value, clause)
    if kind in NEGATIVE_KINDS and (_ABSTAIN.search(part) or _RULED_OUT.search(part)):
        return False  # "I don't eat pork any more", "pork is off the menu": the rule itself
    if is_negated(value, part, directly=kind in NEGATIVE_KINDS):
        return True
    if kind in ("condition", "medication") and re.search(
        rf"\b{re.escape(value)}[- ]free\b", part, re.IGNORECASE
    ):
        return True  # "3 weeks smoke free today", "pain-free since the op": over
    switched = _SWITCHED_TO.search(clause)
    if kind == "medication" and switched and value.lower() not in switched.group(1).lower():
        return True  # "gp's switched me to sertraline, the citalopram was making me flat"
    if kind in ("exercise", "like") and re.search(
        rf"\bcancel+(?:ed|ing)? (?:my|our|the) {re.escape(value)} (?:membership|subscription|"
        r"classes|lessons|sessions|pass)\b",
        clause,
        re.IGNORECASE,
    ):
        return True  # "cancelled my gym membership today": no more gym
    return kind not in NEGATIVE_KINDS and bool(ENDED.search(part))


def disliked(value: str, clause: str) -> bool:
    """`value` is said with a dislike ("can't stand X", "not a fan of X"), not one left
    behind ("used to hate olives")."""
    part = subclause(value, clause)
    return any(
        not re.search(r"\bused to\s+(?:really\s+)?$", part[: m.start()], re.IGNORECASE)
        for m in DISLIKE_CUE.finditer(part)
    )


_DISLIKED_BACK = re.compile(rf"(?:{DISLIKE_CUE.pattern})\s+(?:them|it|those|that)\b", re.IGNORECASE)


def disliked_after(value: str, clause: str) -> bool:
    """A later part of `clause` dislikes `value` by a pronoun ("I've gone off
    mushrooms, can't stand them now"): the end of a like is a dislike."""
    part = subclause(value, clause)
    at = clause.find(part)
    return part != clause and at >= 0 and bool(_DISLIKED_BACK.search(clause[at + len(part) :]))


def gone_without(value: str, clause: str) -> bool:
    """Whether `clause` says the writer goes without `value` ("off sugar", "no carbs
    until Friday") and not that they stopped doing so ("not off sugar any more")."""
    said = re.search(
        rf"\b(?:off|no|without|cut(?:ting)? out|giving up|given up|gave up|quit)\s+"
        rf"{re.escape(value)}\b",
        clause,
        re.IGNORECASE,
    )
    part = subclause(value, clause)  # "not drinking tea anymore, gave up caffeine": caffeine's
    return said is not None and not re.search(r"\bany ?more\b|\bno longer\b", part, re.I)
