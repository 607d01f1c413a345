"""When a fact happens, from its time words: once or again and again.

A habit is said with a word that comes back ("every", "on Fridays", "at 6am", the
present simple "I take the train"); a plan with one day ahead ("on friday", "next
week", "tomorrow"); a state with an end ("on crutches till thursday") with no day of
its own but the one it lasts until. `kinds.fix_kind` reads these to file a value as a
routine (daily or weekly), a plan, or neither.
"""

from __future__ import annotations

import re

from memagent.memory.profile.events import episodic
from memagent.memory.profile.timebound import UNTIL_WORDS

_DAY_FOR = (
    r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)day (?:(?:night|evening|morning|lunch(?:time)?)s? )?"
    r"(?:is|=) (?:[\w-]+ ){0,3}(?:night|day|evening|morning)\b"
)
"""A weekday named by what it is for ("thursday night is pub quiz night"): every week."""
_COUNTED = (
    r"(?<!\d )(?<!two )(?<!three )(?<!four )(?<!five )(?<!six )(?<!seven )(?<!few )(?<!of )"
    r"(?<!these )(?<!those )(?<!the )"
)
"""Before "nights", "mornings": a count of them ("for 4 nights") is a stay's length, not
a habit."""
_NOW = r"(?<!it's )(?<!its )(?<!it is )(?<!now )"
"""Before a clock time: the time it is now ("it's 3am and I'm wide awake"), not a habit's."""
HABIT = re.compile(
    r"\b(usually|always|every|each|daily|nightly|weekly|often|normally|typically|never|"
    rf"rarely|mostly|most (days|nights|mornings|evenings|weeks)|{_COUNTED}(?:mornings|evenings|"
    r"nights|weekends?)|weekdays?|(mon|tues|wednes|thurs|fri|satur|sun)days|before|after|"
    rf"once|twice|times a|a day|a week|at \d|{_NOW}\d(:\d\d)?\s*(am|pm))\b|" + _DAY_FOR,
    re.IGNORECASE,
)


_PRESENT_SIMPLE = re.compile(
    r"\b(?:I|we)\s+(?:\w+ly\s+)?(?!(?:am|was|were|have|has|had|did|just|will|would|could|should|"
    r"might|can|may|must|got|went|came|left|flew|drove|ran|saw|said|told|thought|want|need|"
    r"hope|wish|plan|mean|guess|think|know|wonder|feel)\b)"
    r"[a-z]+(?<!ed)\b",
    re.IGNORECASE,
)
""""I take the train to work": a habit said in the present simple."""


PAST = re.compile(r"\b(yesterday|last (night|week|month|year)|ago|earlier today)\b", re.I)


AHEAD = re.compile(
    r"\b(?:in|on|next|this|by|until|till) (?:the )?(?:jan(?:uary)?|feb(?:ruary)?|march|apr(?:il)?|"
    r"may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|"
    r"monday|tuesday|wednesday|thursday|"
    r"friday|saturday|sunday|\d|week|month|year|spring|summer|autumn|fall|winter|weekend)|"
    r"\b(?:tomorrow|tonight|soon)\b|\bfor the \d{1,2}(?:st|nd|rd|th)\b|"
    r"\bbooked\b[^.;]{0,40}?\bfor (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b|"
    r"\b(?:booked|scheduled|appointment|appt|referred)\b[^.;]{0,60}?\b(?:\d{1,2}(?:st|nd|rd|th)?\s+"
    r"(?:of\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*|"
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)day)\b",
    re.IGNORECASE,
)
"""Time ahead: a day, month or season named ahead, or a booking with its date ("my
laparoscopy is booked for 9 March", "a physio appointment for my shoulder, Tuesday 3
November")."""


EVENT_WORDS = (
    r"appointment|meeting|wedding|flight|interview|concert|party|exam|deadline|conference|"
    r"surgery|check-?up|birthday|graduation|funeral|anniversary|reunion|recital"
)


EVENT = re.compile(rf"\b({EVENT_WORDS})\b", re.IGNORECASE)
ASKED_OF_ME = re.compile(
    r"\b(?:wants?|wanting|expects?|expecting|(?:is|keeps) asking|trying to get) me to\b", re.I
)
"""'ward manager wants me to pick up an extra shift sunday': asked of the writer, not planned."""


WEEKLY = re.compile(
    r"\b(every|each)\s+(?:other\s+|second\s+|alternate\s+)?(mon|tue|wed|thu|fri|sat|sun)\w*|\bweekends?\b|\bweekly\b|"
    r"\b(mon|tue|wed|thu|fri|sat|sun)\w*\s*/\s*(mon|tue|wed|thu|fri|sat|sun)|"
    r"\b(mon|tues?|wed|thu|thurs|fri|sat|sun)(?:,?\s+(?:and\s+|&\s+)?(mon|tues?|wed|thu|thurs|fri|sat|"
    r"sun))+\b|"
    r"\b(mon|tues|wednes|thurs|fri|satur|sun)days\b|\b(mon|tues|wednes|thurs|fri|satur|sun)day "
    r"(morning|afternoon|evening|night)s\b|\b(every|each|per) week\b|"
    r"\b(\d+|once|twice|one|two|three|four|five|six)\s*(x|times?|mornings?|evenings?|nights?|"
    r"days?)?\s+a\s+week\b|" + _DAY_FOR,
    re.IGNORECASE,
)


REGULAR = re.compile(
    rf"\b(?:every|each|usually|always|often|most|daily|weekly|{_COUNTED}(?:weekends?|evenings|"
    r"mornings|nights)|(?:mon|tues|wednes|thurs|fri|satur|sun)days|times a|a week|a day|"
    r"before (?:bed|work|"
    r"school|breakfast)|after (?:work|school|dinner)|at bedtime)\b|" + _DAY_FOR,
    re.IGNORECASE,
)


_ONE_DAY = re.compile(
    r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b(?!s)|\b(?:tomorrow|tonight)\b|"
    r"\b(?:on|the) \d{1,2}(?:st|nd|rd|th)\b",
    re.I,
)


UNTIL = re.compile(rf"\b(?:{UNTIL_WORDS})\b", re.IGNORECASE)


_UNTIL_WHEN = re.compile(
    rf"\b(?:{UNTIL_WORDS})\s+(?:the\s+)?(?:end of (?:the )?)?(?:next\s+)?[\w-]+"
    r"(?:\s+the\s+\d+\w*)?",
    re.IGNORECASE,
)


_A_DAY = re.compile(
    r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)day|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sept?|"
    r"oct|nov|dec)[a-z]*\b|\b\d{1,2}(?:st|nd|rd|th)?\b|\b(?:next|tomorrow|tonight|this)\b",
    re.IGNORECASE,
)


def a_day_besides_its_end(clause: str) -> bool:
    """A day is said in the clause other than the one it lasts until ("from Friday till
    Sunday", "on the 3rd"), so what it says happens on a day."""
    return bool(_A_DAY.search(_UNTIL_WHEN.sub(" ", clause)))


def one_day(clause: str) -> bool:
    """The clause names one day ("on friday", "thursday 6pm", "tomorrow") and no word of
    a day that comes back ("every", "Fridays", "weekly") in its part of the clause ("dentist
    on friday at 3, remind me, I always forget" is one Friday)."""
    part = next((p for p in re.split(r"[,;]", clause) if _ONE_DAY.search(p)), "")
    return bool(part) and not (REGULAR.search(part) or WEEKLY.search(clause.replace(" on ", " ")))


def habitual(clause: str) -> bool:
    """The clause says something done regularly: a habit word or a time of day
    ("every morning", "on Fridays", "at 6am"), or the present simple ("I take the
    train to work") of something not in the past."""
    if PAST.search(clause) or episodic(clause):
        return False
    return bool(HABIT.search(clause) or _PRESENT_SIMPLE.search(clause))


_DAY_SAID = re.compile(
    r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b|\b(?:mon|tue|wed|thu|fri|sat|sun)\b|"
    r"\b(?:january|february|march|april|may|june|july|august|september|october|november|"
    r"december|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)\b|"
    r"\b\d{1,2}(?:st|nd|rd|th)\b|\b\d{1,2}/\d{1,2}\b|\b\d{4}-\d\d-\d\d\b|"
    r"\b(?:tomorrow|tonight|soon|next|upcoming|coming up|later this|this (?:week|weekend|month|"
    r"year|spring|summer|autumn|fall|winter)|in (?:a|an|one|two|three|four|five|six|a few|"
    r"\d+) (?:days?|weeks?|months?|years?)|weekend|christmas|easter|new year)\b",
    re.IGNORECASE,
)


def day_said(clause: str) -> bool:
    """The clause says on what day or in what time ahead something happens ("on the 3rd",
    "next week", "in June", "tomorrow"), not only a clock time ("at three")."""
    return bool(_DAY_SAID.search(clause))


_WHEN_ONLY = re.compile(
    r"^\W*(?:(?:(?:mon|tues?|wed(?:nes)?|thu(?:rs?)?|fri|sat(?:ur)?|sun)(?:days?)?|mornings?|"
    r"evenings?|nights?|afternoons?|lunchtimes?|weekends?|weekdays?|week|weekly|daily|nightly|"
    r"every|each|usually|always|often|mostly|sometimes|times?|twice|once|a|an|the|per|and|on|at|"
    r"in|\d+(?:-hour|am|pm)?|one|two|three|four|five|six|days?|hours?|home|here|there|work|"
    r"before|after|breakfast|lunch|dinner)"
    r"\W*)+$",
    re.IGNORECASE,
)


def when_only(value: str) -> bool:
    """`value` says only when or where ("mon wed fri", "weekly", "three days a week"):
    no habit or workout named by itself."""
    return bool(_WHEN_ONLY.match(value))


def undated(key: str) -> str:
    """A plan's or habit's key without its when ("camping_saturday_soon" → "camping"), so
    "camping's off" names it."""
    return " ".join(
        w
        for w in key.split("_")
        if not (day_said(w) or HABIT.search(w) or w in ("soon", "this", "every", "on", "at"))
    )


CLOCK = re.compile(
    r"\bat \d|\d\s*(?:am|pm)\b|\b\d{1,2}(?:[:.]\d\d)?\s*(?:-|–|to|till|til|until)\s*\d{1,2}\b",
    re.IGNORECASE,
)
"""A clock time or span of hours ("at 6", "7pm", "6 till 2"): a shift's own when."""
SHIFTS = re.compile(
    r"(?:(?:early|late|night|day|twilight|graveyard|split|double|weekend|long|\d+[- ]?h(?:ou)?r)"
    r"\s+)?shifts?|earl(?:y|ie)s|lates|nights|long days",
    re.IGNORECASE,
)
"""A pattern of work said by its shifts ("earlies", "on nights", "12-hour shifts"): a habit
of its own, with or without its hours."""
ONE_WEEKEND = re.compile(r"\b(?:this|next|coming) weekend\b", re.IGNORECASE)
"""One weekend ahead ("this weekend"): once, not a weekly habit ("on nights all this week"
is a habit for the week)."""
EVERY = re.compile(r"\b(?:every|each|most|usually|always|often|weekends)\b", re.IGNORECASE)
"""A word of how often, which makes "this weekend" one of many."""
