"""Life events that end a state the profile holds, said without the state's own words.

"baby arrived on sunday!!!" ends "Pregnant" though it never says "pregnant"; "caved,
back on coffee" ends "No caffeine"; "dry july is officially over" ends "No alcohol";
"started eating meat again" ends "Vegetarian"; "3 weeks smoke free today" ends "Smoker".
Neither the model, which reads what a sentence says, nor the negation rules, which
look for the held item's words, see these: the event itself is the cue.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from memagent.memory.profile.changes import FOOD, GENERAL, HEALTH, ROUTINE, items, remove
from memagent.memory.profile.item_keys import match_key, tokens
from memagent.memory.profile.models import Resource
from memagent.memory.profile.operations import AnyOp

_BORN = re.compile(
    r"\b(?:baby|(?:little )?(?:boy|girl)|son|daughter|twins|bub)\b[^.!?]{0,30}?"
    r"\b(?:arrived|was born|were born|is here|are here|came early|came)\b|"
    r"\bgave birth\b|\bhad (?:the|our|my|a) (?:baby|little one)\b|\bwelcomed (?:our|a|my) \w+",
    re.IGNORECASE,
)
"""The baby has come: the pregnancy is over."""
_MONTHS = (
    r"jan(?:uary)?|feb(?:ruary)?|march|april|may|june|july|aug(?:ust)?|sept?(?:ember)?|"
    r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
_CHALLENGE = re.compile(
    rf"\b(?:dry|sober) (?:{_MONTHS})\b[^.!?]{{0,30}}?\b(?:over|done|finished|ended|broken|failed|"
    rf"off)\b|\bdryathlon\b[^.!?]{{0,30}}?\b(?:over|done|finished)\b",
    re.IGNORECASE,
)
"""A named month without alcohol said to be over ("dry july is officially over lol")."""
_GAVE_IN = re.compile(
    r"\b(?:caved|cracked|gave in|fell off the wagon|broke my (?:diet|fast|streak)|"
    r"cheated on my diet|back on (?:the )?(?:coffee|caffeine|sugar|booze|alcohol|wine|beer|"
    r"meat|dairy|carbs|bread|chocolate|sweets|fizzy drinks|coke))\b",
    re.IGNORECASE,
)
"""A rule kept given up ("caved. back on coffee")."""
_EATING_AGAIN = re.compile(
    r"\b(?:(?:started|start|starting|back to|back on|went back to|gone back to|going back to)\s+"
    r"(?:eating\s+|having\s+)?|(?:I'?m|I am|I|I'?ve been|I have been|been)\s+(?:now\s+)?"
    r"(?:eating|eat|having)\s+)"
    r"(?P<food>meat|chicken|beef|pork|bacon|steak|lamb|fish|seafood|salmon|tuna|prawns|"
    r"dairy|cheese|eggs|milk)\b[^.!?]{0,25}?\bagain\b",
    re.IGNORECASE,
)
"""'started eating meat again after 8 years': the diet that kept the food out is over."""
_ENDED_BY = {
    "meat": ("vegan", "vegetarian", "pescatarian", "pescetarian", "plant"),
    "fish": ("vegan", "vegetarian", "plant"),
    "dairy": ("vegan", "plant", "dairy"),
}
_FOOD_GROUP = {
    **dict.fromkeys(("chicken", "beef", "pork", "bacon", "steak", "lamb"), "meat"),
    **dict.fromkeys(("seafood", "salmon", "tuna", "prawns"), "fish"),
    **dict.fromkeys(("cheese", "eggs", "milk"), "dairy"),
}
_CAFFEINATED = {match_key(w) for w in ("coffee", "espresso", "latte", "tea", "coke")}


def pregnancy_over(sentences: Sequence[str], resources: Mapping[str, Resource]) -> list[AnyOp]:
    """The removal of a held pregnancy when a sentence says the baby has come."""
    if not any(_BORN.search(s) for s in sentences):
        return []
    return [
        remove(HEALTH, "health.conditions", i.item)
        for i in items(resources, HEALTH, "health.conditions")
        if re.search(r"pregnan", f"{i.item} {i.display or ''}", re.IGNORECASE)
    ]


def rule_given_up(sentences: Sequence[str], resources: Mapping[str, Resource]) -> list[AnyOp]:
    """The removal of a diet rule the writer says they gave in on: the one the sentence
    names ("caved. back on coffee" with "No caffeine" or "No coffee" held), else, when
    one month without alcohol is said to be over, the held rule on alcohol."""
    held = items(resources, FOOD, "diet.restrictions")
    out: list[AnyOp] = []
    for s in sentences:
        if _CHALLENGE.search(s):
            alcohol = [i for i in held if re.search(r"alcohol|booze|drink", i.item, re.I)]
            out += [remove(FOOD, "diet.restrictions", i.item) for i in alcohol]
        elif _GAVE_IN.search(s):
            said = {match_key(t) for t in tokens(s)}
            named = [i for i in held if {match_key(t) for t in tokens(i.item)} & said]
            caffeine = "caffeine" if said & _CAFFEINATED else ""
            named += [i for i in held if caffeine and caffeine in i.item and i not in named]
            out += [remove(FOOD, "diet.restrictions", i.item) for i in named]
    return out


def eating_again(sentences: Sequence[str], resources: Mapping[str, Resource]) -> list[AnyOp]:
    """The removal of a held diet that a food the writer eats again rules out ("started
    eating meat again" ends "Vegetarian" and "Vegan"; "back on cheese again" ends "Vegan")."""
    out: list[AnyOp] = []
    for s in sentences:
        for m in _EATING_AGAIN.finditer(s):
            food = m.group("food").lower()
            ended = _ENDED_BY[_FOOD_GROUP.get(food, food)]
            out += [
                remove(FOOD, "diet.restrictions", i.item)
                for i in items(resources, FOOD, "diet.restrictions")
                if any(i.item.startswith(d) for d in ended)
            ]
    return out


_OFF_COFFEE = re.compile(
    r"\b(?:no more|quit|quitting|stopped|given up|gave up|giving up|off|cut out|done with|"
    r"no longer drinking|not drinking)\s+(?:the\s+|drinking\s+)?(?:coffee|caffeine)\b",
    re.IGNORECASE,
)
_FOR_A_WHILE = re.compile(
    r"\b(?:for (?:a|an|one|two|three|a few|\d+) (?:days?|weeks?|months?)|this (?:week|month)|"
    r"until|till|for now|for lent|for (?:dry )?january)\b",
    re.IGNORECASE,
)
_COFFEES = re.compile(
    r"\b(?:coffee|flat whites?|lattes?|espressos?|cappuccinos?|americanos?|macchiatos?|mochas?|"
    r"cortados?|cold brew|iced coffee)\b",
    re.IGNORECASE,
)


def off_coffee(sentences: Sequence[str], resources: Mapping[str, Resource]) -> list[AnyOp]:
    """The removal of liked coffees when the writer gives up coffee ("no more coffee for
    me" ends "Likes flat white", which never says "coffee")."""
    if not any(_OFF_COFFEE.search(s) and not _FOR_A_WHILE.search(s) for s in sentences):
        return []  # "off coffee for a week": a break, the taste stays
    return [
        remove(FOOD, "drink.likes", i.item)
        for i in items(resources, FOOD, "drink.likes")
        if _COFFEES.search(f"{i.item.replace('_', ' ')} {i.display or ''}")
    ]


_QUIT_SMOKING = re.compile(
    r"\b(?:smoke|nicotine|cig(?:arette)?)[- ]free\b|"
    r"\b(?:quit|stopped|given up|gave up|packed in|off the)\s+(?:smoking|vaping|the cigs|cigs|"
    r"cigarettes|fags|the fags|the vape|vapes)\b|\bno longer (?:a )?(?:smoke|smoker|smoking)\b",
    re.IGNORECASE,
)
_SMOKING = re.compile(r"\b(?:smok\w*|cig\w*|fags?|vap\w*|nicotine|tobacco)\b", re.IGNORECASE)
_WHERE_SMOKING_IS_HELD = (
    (HEALTH, "health.conditions"),
    (ROUTINE, "routine.daily"),
    (GENERAL, "preferences.likes"),
    (GENERAL, "personal.facts"),
)


def smoke_free(sentences: Sequence[str], resources: Mapping[str, Resource]) -> list[AnyOp]:
    """The removal of smoking, however it was held (a condition "Smoker", a habit, a
    liked "cig"), when the writer has quit ("3 weeks smoke free today!!!", "stopped
    smoking"): the model reads nothing from a line that only counts the days."""
    if not any(_QUIT_SMOKING.search(s) for s in sentences):
        return []
    return [
        remove(file, path, i.item)
        for file, path in _WHERE_SMOKING_IS_HELD
        for i in items(resources, file, path)
        if _SMOKING.search(f"{i.item.replace('_', ' ')} {i.display or ''}")
    ]
