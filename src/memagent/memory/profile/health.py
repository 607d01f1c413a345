"""What counts as a health fact: a condition said as one, an allergy said as one (not as
a joke), a medicine with its dose, a procedure on a day, a passing illness or a feeling
that is none. `kinds.fix_kind` asks these of a value the model read."""

from __future__ import annotations

import re

from memagent.memory.profile.negation import subclause

DIET_CONDITION = re.compile(r"(?:an? )?(?:coeliac|celiac)(?: disease)?|lactose intoleran\w+", re.I)


PROCEDURE = re.compile(
    r"\b(?:test|tests|scan|surgery|operation|procedure|appointment|check-?up|biopsy|x-?ray|"
    r"jab|vaccine|vaccination|booster)$",
    re.IGNORECASE,
)
"""A medical appointment or procedure is a date in the calendar, not a condition or medicine."""


DOSE = re.compile(r"\d+(?:\.\d+)?\s*(?:mg|mcg|µg|ml|g|iu|units?|tablets?|pills?)", re.I)


PASSING_ILLNESS = re.compile(
    r"^\W*(?:(?:a|an|the|bad|stinking|nasty|horrible|awful|terrible|slight|mild|heavy|rotten|"
    r"streaming|killer)\s+)*(?:cold|flu|hangover|headache|sore throat|cough|sniffles|bug|"
    r"stomach bug|jet ?lag|sunburn|runny nose|fever|tummy ache|stomach ache)\W*$",
    re.IGNORECASE,
)
"""An illness of a week or a day ("a stinking cold", "a hangover"): no lasting condition."""


ALLERGY_WORDS = re.compile(
    r"allerg|alerg|anaphyla|epipen|\bhives\b|\bswell(?:s|ing)? up\b|throat (?:swell|close|closes)|"
    r"\bhay ?fever\b|"
    r"\breact(?:s|ion)? (?:badly )?to\b",
    re.IGNORECASE,
)


GENERIC = re.compile(r"^(an? )?(allerg(y|ies|ic)|intoleran(ce|t)|condition|medication)$", re.I)
"""A 'value' that names the kind of fact, not the fact ("condition: allergy")."""


_HEALTH_WORD = re.compile(
    r"itis\b|osis\b|\bdisease|disorder|syndrome|allerg|intoleran|diabet|asthma|migraine|"
    r"\bpain\b|(?:\b|head|tooth|back|stomach|tummy|belly|ear)aches?\b|injur|deficien|anxiety|"
    r"depress|adhd|autis|\bibs\b|hypertension|blood pressure|cholesterol|coeliac|celiac|crohn|"
    r"arthritis|eczema|psoriasis|epilep|insomnia|apnoea|apnea|\bhearing\b|\bdeaf|(?:\b|colou?r)blind\b|"
    r"(?:\b|eye)sight\b|\bvision\b|\bknees?\b|\bback\b|\bhips?\b|\bshoulders?\b|pregnan|"
    r"\bsober|\brecover|cancer|tumou?r|fracture|\bbroken\b|sprain|concussion|covid|\bflu\b|"
    r"\bcold\b|infection|\bvirus|\bcondition\b|chronic|dyslex|ptsd|\bocd\b|bipolar|thyroid|"
    r"anaem|anem|\bheart|\bkidney|\bliver\b|\blungs?\b|\bstomach|\bgut\b|reflux|ulcer|\bgout|"
    r"lupus|\bms\b|fibromyalgia|\bfever|\bhives\b|\brash\b|\bsinus|\bsmok|\bvap(?:e|ing)\b|"
    r"nicotine|vertigo|tinnitus|endometriosis|pcos|menopaus|anorexi|bulimi|\bcopd\b|emphysema|"
    r"angina|dementia|parkinson|alzheimer|\bstroke\b|glaucoma|cataract|hernia|incontinen|"
    r"haemophil|hemophil|sickle cell|hay ?fever",
    re.IGNORECASE,
)


_LAUGH = re.compile(
    r"\b(?:lol|lmao|haha\w*|jk|kidding)\b|[\U0001f602\U0001f923\U0001f61c\U0001f643]", re.I
)


_JOKE = re.compile(
    r"\W*(?:meetings?|work|people|paperwork|effort|adulting|exercise|emails?|admin|housework|"
    r"chores|responsibility|homework|bad vibes)\W*$",
    re.IGNORECASE,
)
"""An allergy said as a joke: a laugh beside it, or a thing no one is allergic to."""


def joke_allergy(value: str, clause: str) -> bool:
    """An allergy said as a joke: a laugh after it ("allergic to meetings lol") or a thing
    no one is allergic to ("allergic to adulting")."""
    return bool(_LAUGH.search(_after(value, clause)) or _JOKE.match(value))


def _after(value: str, clause: str) -> str:
    """`value` and what follows it in its part of `clause` ("meetings lol")."""
    part = subclause(value, clause)
    at = part.lower().find(value.lower())
    return value if at < 0 else part[at:]


FEELING = re.compile(
    r"\W*(?:dreading|worried|worrying|nervous|anxious about|excited|looking forward|"
    r"stress(?:ed|ing) about|bricking it|panicking|gutted|buzzing)\b",
    re.IGNORECASE,
)


_NOT_HEALTH = re.compile(r"\b(?:laid off|fired|promoted|redundant|dumped|engaged)\b", re.I)


def health_said(value: str, clause: str) -> bool:
    """A condition is said as one: a word of health in it ("IBS", "a bad knee", "type 1
    diabetic"), or said the way a condition is ("I have X", "diagnosed with X", "I'm X"),
    and not a life event ("laid off")."""
    if _NOT_HEALTH.search(value):
        return False
    if _HEALTH_WORD.search(value):
        return True
    if re.match(r"\W*[a-z]+ing\b", value, re.I):
        return False  # "im learning japanese": something done, not had
    v = re.escape(value)
    # "I'm diabetic", "I'm type 1 diabetic" say a condition; "Im digital nomad" says none
    named = len(value.split()) == 1 or re.search(rf"{v}\s+(?:{_HEALTH_WORD.pattern})", clause, re.I)
    i_am = rf"\b(?:I'?m|I am|am)\s+(?:\w+ly\s+)?{v}\b|" if named else ""
    return bool(
        re.search(
            rf"\b(?:have|has|had|got|with|from|diagnosed with|suffer\w* from|get|gets|"
            rf"getting|chronic)\s+(?:(?:a|an|some|mild|severe|bad|terrible|bit of|touch of)\s+)?"
            rf"{v}\b|{i_am}"
            rf"\b{v}\s+here\b(?!\s+(?:is|are|was|were|has))|"
            rf"\b{v}(?:'s| is| was)? (?:still )?(?:in an? (?:splint|cast|brace|sling|boot|"
            rf"support)|strapped|bandaged|in plaster)\b|"
            rf"\b(?:splint|cast|brace|sling) on (?:my|the) {v}\b",
            clause,
            re.IGNORECASE,
        )
    )


def dosed(value: str, clause: str) -> bool:
    """`value` is said as a medicine taken: "on 20mg citalopram", "I take metformin",
    "switched me from sertraline to fluoxetine", "prescribed X"."""
    v = re.escape(value)
    return bool(
        re.search(
            rf"\b(?:take|takes|taking|took|on|prescribed|from|to|started|stopped)\s+"
            rf"(?:\d+\s?mg\s+(?:of\s+)?|some\s+|a\s+course of\s+)?{v}\b",
            clause,
            re.IGNORECASE,
        )
    ) and not re.search(rf"\b(?:my|for|of)\s+{v}\b", clause, re.IGNORECASE)


_DIABETES_TYPE = re.compile(r"\btype[- ]?(1|2|one|two|i{1,2})\b", re.IGNORECASE)


def with_type(value: str, clause: str) -> str:
    """Diabetes read without the type said beside it ("im type 1 diabetic" read as
    "diabetes"): "type 1 diabetes", which is what matters for what one can eat."""
    m = _DIABETES_TYPE.search(clause)
    if m is None or not re.search(r"diabet", value, re.IGNORECASE) or _DIABETES_TYPE.search(value):
        return value
    number = {"one": "1", "two": "2", "i": "1", "ii": "2"}.get(m.group(1).lower(), m.group(1))
    return f"type {number} diabetes"
