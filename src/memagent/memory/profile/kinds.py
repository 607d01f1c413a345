"""What kind of fact a value is, as the statement's words say, and whose fact it is.

The model names a kind for each value it copies; a 1.5B model often names the
wrong one ("can't stand cilantro" as an allergy, a dog's name as a like, a diet
as a condition). Where the words decide it, Python does (`fix_kind`): "allergic"
must be said for an allergy; a drink is a drink; "no pork for me" is a diet rule,
not a taste; a like said with "hate" is a dislike; a name after "my dog is
called" is the dog's; a routine with an appointment in it is a plan, one said
with a weekday is weekly. `about_someone_else` tells a fact about another person
("Tom is allergic to…", "my sister is vegan") from one about the writer ("we"
includes the writer; a relative's wedding is a date in the writer's plans).
"""

from __future__ import annotations

import re

from memagent.memory.profile.negation import disliked, ended, subclause

OPPOSITE = {
    "food_like": "food_dislike",
    "food_dislike": "food_like",
    "drink_like": "drink_dislike",
    "drink_dislike": "drink_like",
    "like": "dislike",
    "dislike": "like",
}

OTHER_PERSON = re.compile(
    r"\b(my|our|his|her|their)\s+(\w+\s+)?(wife|husband|partner|boyfriend|girlfriend|son|"
    r"daughter|kids?|child(ren)?|mom|mum|mother|dad|father|sister|brother|friend|boss|"
    r"colleague|coworker|roommate|neighbou?r|grandma|grandpa|aunt|uncle|cousin|baby|"
    r"dog|cat|puppy|kitten|pet|parrot|rabbit|hamster|horse|fish)\b|"
    r"^\s*(he|she|they|his|her|their)\b",
    re.IGNORECASE,
)
_DIET = re.compile(
    r"\b(vegan|vegetarian|pescatarian|halal|kosher|keto|paleo|gluten[- ]free|dairy[- ]free)\b",
    re.IGNORECASE,
)
_DRINKS = re.compile(
    r"\b(coffee|tea|latte|lattes|espresso|cappuccino|flat white|beer|wine|water|juice|"
    r"milk|soda|cola|cocktails?|whisky|whiskey|matcha|kombucha|smoothies?|lemonade)\b",
    re.IGNORECASE,
)
EVENT_WORDS = (
    r"appointment|meeting|wedding|flight|interview|concert|party|exam|deadline|conference|"
    r"surgery|check-?up|birthday|graduation|funeral|anniversary|reunion|recital"
)
_EVENT = re.compile(rf"\b({EVENT_WORDS})\b", re.IGNORECASE)
_RELATIVES_EVENT = re.compile(rf"\b(my|our) [\w-]+(?: [\w-]+)?'s (\w+ )?({EVENT_WORDS})\b", re.I)
"""A relative's wedding or birthday is a date in the user's own calendar."""
_NAMED_SUBJECT = re.compile(
    r"^(?!(?:I|We|You|It|This|That|There|Here|Our|My|Today|Now|Actually|Also)\b)"
    r"([A-Z][a-z]+)(\s+[A-Z][a-z]+)?\s+(is|was|has|had|likes|loves|lives|works|hates|"
    r"eats|drinks|can'?t|cannot|doesn'?t|does|will|just|and|takes|goes|plays|'s)\b"
)
_FIRST_PERSON = re.compile(
    r"\b(i|i'm|im|i've|i'd|i'll|me|myself|we|we're|we've|we'll|us)\b", re.IGNORECASE
)
_ALLERGY_WORDS = re.compile(r"allerg|anaphyla|epipen", re.IGNORECASE)
_RESTRICTS = re.compile(
    r"\b(no|not|don'?t|do not|never|avoid\w*|without|cut(ting)? out|off|free|allergic|"
    r"intoleran\w*|can'?t|cannot|won'?t|skip\w*|diet|restrict\w*|limit\w*)\b",
    re.IGNORECASE,
)
"""Words that make a food a rule kept (a diet restriction) rather than a taste."""
_GENERIC = re.compile(r"^(an? )?(allerg(y|ies|ic)|intoleran(ce|t)|condition|medication)$", re.I)
"""A 'value' that names the kind of fact, not the fact ("condition: allergy")."""
_WEEKLY = re.compile(
    r"\b(every|each|on)\s+(mon|tue|wed|thu|fri|sat|sun)\w*|\bweekends?\b|\bweekly\b|"
    r"\b(mon|tues|wednes|thurs|fri|satur|sun)days\b|\bonce a week\b|\btwice a week\b",
    re.IGNORECASE,
)
NAME_AFTER = re.compile(
    r"\b(?:called|named|name is|name's)\s+([A-Z][\w'-]*)|"
    r"\b(?:[Mm]y|[Oo]ur)\s+(\w+)\s+([A-Z][a-z][\w'-]*)\b"
)


def about_someone_else(clause: str, kind: str) -> bool:
    """A fact about another person or a pet, where the user is not the subject
    ("we" includes the user; a relative's wedding is a date in the user's plans)."""
    if kind in ("pet", "family") or (kind == "plan" and _RELATIVES_EVENT.search(clause)):
        return False
    if OTHER_PERSON.search(clause) and not _FIRST_PERSON.search(clause):
        return True
    return bool(_NAMED_SUBJECT.match(clause.strip())) and not _FIRST_PERSON.search(clause)


def fix_kind(kind: str, value: str, clause: str) -> str | None:
    """The kind the statement's words say a fact the model read as `kind` is (None:
    no fact at all)."""
    if _GENERIC.match(value) and kind in ("condition", "medication", "allergy"):
        return None
    if kind == "allergy" and not _ALLERGY_WORDS.search(clause):
        kind = "food_dislike" if disliked(value, clause) else "condition"
        if kind == "condition" and not re.search(r"intoleran|celiac|coeliac", clause, re.I):
            kind = "food_dislike"
    if kind in ("condition", "like", "food_like", "allergy") and _DIET.search(value):
        kind = "diet"
    if kind == "condition" and re.search(r"\btak(e|es|ing)\b", clause, re.I):
        kind = "medication"
    if kind == "routine" and _EVENT.search(clause):
        kind = "plan"
    if kind in ("food_like", "food_dislike", "like", "dislike") and _DRINKS.search(value):
        kind = "drink_" + kind.removeprefix("food_")
    if (
        kind == "diet"
        and not _DIET.search(value)
        and not _RESTRICTS.search(subclause(value, clause))
    ):
        kind = "food_like"  # "I started eating chicken again": a taste, not a rule kept
    if kind in ("food_dislike", "drink_dislike") and re.search(
        rf"\bno (?!more\b)(\w+ ){{0,2}}{re.escape(value)}\b", clause, re.I
    ):
        kind = "diet"  # "no pork for me": a rule kept, not a taste
    liked = kind in ("food_like", "drink_like", "like")
    if liked and disliked(value, clause) and not ended(value, kind, clause):
        kind = OPPOSITE[kind]
    if kind in ("like", "food_like") and value[:1].isupper() and NAME_AFTER.search(clause):
        m = NAME_AFTER.search(clause)
        if m and value in m.group(0):
            kind = (
                "pet"
                if OTHER_PERSON.search(clause)
                and re.search(
                    r"dog|cat|pupp|kitt|pet|parrot|rabbit|hamster|horse|fish", clause, re.I
                )
                else "family"
            )
    if kind == "routine" and _WEEKLY.search(clause):
        return "routine_weekly"
    return kind
