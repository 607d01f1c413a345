"""Whether a sentence tells of an event or a passing state, not how things stand.

"Ordered Thai food for dinner", "Feeling a bit under the weather", "I need to buy
milk": a model made to read a fact in such a sentence reads a one-off as a
lasting fact. `episodic` tells them apart from lasting states by their tense,
their time words and their shape, mechanically; a stay or plan with an end
("I'm in Osaka for a week") is not one.
"""

from __future__ import annotations

import re
from datetime import date

from memagent.memory.profile.timebound import time_bound

_IRREGULAR_PAST = (
    "had|did|was|were|got|went|came|made|took|ate|drank|forgot|found|gave|heard|kept|knew|"
    "lost|met|paid|put|said|sat|slept|stood|thought|told|won|wrote|felt|left|brought|bought|"
    "caught|taught|sent|built|began|broke|chose|drove|fell|flew|grew|held|ran|rode|rang|sang|"
    "sold|spoke|swam|threw|understood|woke|wore|spent|saw|became|let|cut|hit|set|shut"
)
_PAST_EVENT = re.compile(
    rf"\b(?:I|we|he|she|they|it)(?: just| only| finally| already| almost| nearly| once)?\s+"
    rf"(?:\w+ly\s+)?"
    rf"(?:{_IRREGULAR_PAST}|[a-z]+ed)\b|\b[a-z]+ed (?:out|up|off|well|badly)\b|"
    r"\b(?:yesterday|last (?:night|week|weekend)|this (?:morning|afternoon|evening)|earlier|"
    r"right now|at the moment|today|tonight|just now)\b|^\W*just (?!so\b)|"
    r"\b(?:had|drunk|eaten) (?:\d+|two|three|four|five|six|a few|several) \w+ (?:already|so far)\b",
    re.IGNORECASE,
)
_STATIVE_PARTICIPLE = (
    "based|married|retired|engaged|divorced|widowed|separated|located|allergic|interested|"
    "obsessed|related|qualified|certified|registered|employed|unemployed|self-employed|"
    "vaccinated|diagnosed|addicted|attached|devoted|committed|involved|experienced|skilled|"
    "talented|gifted|educated|licensed|trained|raised|born|named|called"
)
_DROPPED_SUBJECT = re.compile(
    r"^\W*(?:(?:just|finally|already|then|also|almost|nearly|accidentally|totally)\s+)?"
    rf"(?:{_IRREGULAR_PAST}|(?!(?:{_STATIVE_PARTICIPLE})\b)[a-z]{{3,}}ed|"
    r"(?!(?:morning|evening|nothing|something|anything|everything|spring|string|thing|king|"
    r"ceiling|wedding|pudding|building|clothing|sibling|during|living|working|being|"
    r"ring|wing|swing|sing|bring|ping)\b)[a-z]{2,}ing(?!.*\b(?:is|are)\b))\b",
    re.IGNORECASE,
)
"""A sentence that opens with its verb, the writer left unsaid, in the past tense or
the progressive ("Ordered Thai food for dinner", "Feeling a bit under the weather"):
how a diary tells an event or a passing moment. A participle that says how someone
is ("Based in Leeds", "Married, two kids") is not one."""
_PASSING_STATE = re.compile(
    r"(?:^\W*|\b(?:I'?m|I am|I feel|I'?m feeling|feeling)\s+)"
    r"(?:so|kind of|sort of|a (?:little )?bit|a little|pretty|super|quite|slightly|"
    r"totally|utterly|really|very|extremely|incredibly|rather)\s+"
    r"(?!(?:into|of|a|an|the|much|many|good|bad|big|huge|keen|fond|allergic|intolerant|I|I'?m|"
    r"I'?ve|we|we'?re|we'?ve|my|our|you|he|she|they|it|its|it's|that|this|there|basically|"
    r"anyway|yeah|um|then|now|after|since|when|for|last|today|yesterday|far)\b)"
    r"[a-z]+\b",
    re.IGNORECASE,
)
"""A degree word before how the writer is ("I'm kind of stressed", "So sleepy",
"Pretty nervous"): a gradable state felt now, not a fact that lasts."""
_NEED = re.compile(
    r"^\W*(?:I\s+)?(?:really\s+|still\s+|just\s+)?need(?:ed)?\s+(?:to|a|an|some|more)\b"
    r"(?!.*\b(?:every|always|usually|daily|each)\b)",
    re.IGNORECASE,
)
"""A need of the moment ("I need to buy milk", "Need a name for a character")."""
_REPORTED = re.compile(
    r"[\"\u201c\u201d]\s*\w[^\"\u201c\u201d]*[\"\u201c\u201d]|"
    r"\b(?!I\b)[A-Za-z]+\s+(?:said|says|saying|claims?|claimed|claiming|reckons?|reckoned|"
    r"told (?:me|us)|tells (?:me|us))\b"
    r"(?!\s+(?:that\s+)?(?:I|I'm|I've|my)\b)",
    re.IGNORECASE,
)
"""Quoted or reported words ("The sign said \"no dogs\"", "My doctor says…"): what
someone else said, not a fact the writer states about themselves."""
_WRITER_PAST = re.compile(
    rf"\b(?:I|we)(?:\s+\w+ly|\s+(?:just|only|finally|already|almost|nearly|also))?\s+"
    rf"(?:{_IRREGULAR_PAST}|[a-z]+ed)\b",
    re.IGNORECASE,
)
_THEIR_PAST = re.compile(
    r"^\W*(?:\w+\W+){0,2}?(?:my|our|the|his|her|their|a|an)\s+(?:[\w'-]+\s+){0,2}?"
    rf"(?:{_IRREGULAR_PAST}|(?!(?:{_STATIVE_PARTICIPLE})\b)[a-z]{{3,}}ed)\b(?!\s+me\b)",
    re.IGNORECASE,
)
"""A past event with a thing or another person as its subject ("Our flight got
delayed", "The cat knocked my mug off the table"); one done to the writer ("My
doctor put me on a low-FODMAP diet") leaves the writer in a state, and is not."""
_STAYING = re.compile(r"\b(?:I'?m|I am|we'?re|we are|here|staying|stay)\b", re.IGNORECASE)
_ONGOING = re.compile(r"\b(?:I'?m|I am|we'?re|we are)\s+(?:\w+ly\s+)?[a-z]+ing\b", re.IGNORECASE)
_ANY_DAY = date(2000, 1, 3)
_REGULAR = re.compile(
    r"\b(?:daily|every (?:day|morning|evening|night|week|weekend)|each (?:day|morning|evening|"
    r"night|week)|(?:every|each) (?:mon|tues|wednes|thurs|fri|satur|sun)day|"
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)days|weekly|most (?:days|mornings|evenings|nights)|"
    r"(?:twice|once|\d+ times) a (?:day|week))\b",
    re.IGNORECASE,
)
"""A word of a thing done again and again: an ongoing "-ing" said with it is a habit."""
_NEW_STATE = re.compile(
    r"\b(?:now|these days|nowadays)\b|\b(?:in|on|next|this|by) (?:the )?(?:january|february|"
    r"march|april|may|june|july|august|september|october|november|december|monday|tuesday|"
    r"wednesday|thursday|friday|saturday|sunday|week|month|year|spring|summer|autumn|fall|"
    r"winter|weekend|\d{1,2}(?:st|nd|rd|th)\b)|\btomorrow\b",
    re.IGNORECASE,
)
"""A state that holds from now on, or an event ahead: not a passing moment."""
_POSSESSING = re.compile(r"\b(?:I|we)(?:'ve| have) got\b", re.IGNORECASE)


def episodic(sentence: str) -> bool:
    """`sentence` tells of an event or a passing state (the past tense, "today",
    "right now", "I'm waiting for the bus"), not how things stand lastingly: a
    model made to read a fact in it would read a one-off as a fact. A stay or plan
    with an end date ("I'm in Osaka for a week") is not episodic, unless the time is
    when a past event happened ("I cleaned the garage over the weekend").

    Also episodic: a sentence that opens with its verb in the past or progressive
    (`_DROPPED_SUBJECT`), a felt state with a degree word (`_PASSING_STATE`), a
    need of the moment (`_NEED`), and quoted or reported words (`_REPORTED`)."""
    if _REPORTED.search(sentence) or _NEED.search(sentence):
        return True
    if _PASSING_STATE.search(sentence):
        return True
    bound = time_bound(re.sub(r"\b(today|tonight)\b", "", sentence, flags=re.I), _ANY_DAY)
    regular = _REGULAR.search(sentence)
    opening = _DROPPED_SUBJECT.search(sentence)
    habit = regular and opening is not None and opening.group(0).lower().endswith("ing")
    if opening and not (bound or _NEW_STATE.search(sentence) or habit):
        return True  # "Going to gym at 6am daily" is a habit, "Went to the gym daily" is not
    if bound and not (_WRITER_PAST.search(sentence) and not _STAYING.search(sentence)):
        return False
    if _NEW_STATE.search(sentence):
        return False  # "I'm teaching chemistry now", "our first baby in October"
    said = _POSSESSING.sub("I have", sentence)
    ongoing = _ONGOING.search(said) and not regular
    return bool(_PAST_EVENT.search(said) or ongoing or _THEIR_PAST.search(said))
