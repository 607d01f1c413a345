"""Whose fact a sentence states: the writer's, another person's or no one's.

A 1.5B model copies a fact about a sister, a colleague or the weather as if the
writer had said it of themselves. The words settle most of it: another person
as the subject ("my neighbour plays drums", "Dave from the climbing gym is
lactose intolerant", "Tom's dad eats no meat") makes it theirs; "I", "we" or
"my" makes it the writer's ("we" includes the writer); a relative named as a
place or an occasion ("staying at my sister's", "my cousin's wedding") leaves
the writer the subject; a sentence with no subject ("Latex allergy here") is
the writer's.
"""

from __future__ import annotations

import re

from memagent.memory.profile.item_keys import match_key
from memagent.memory.profile.occasions import EVENT_WORDS
from memagent.memory.profile.statements import SIGN_OFF

OTHER_PERSON = re.compile(
    r"\b(my|our|his|her|their)\s+(\w+\s+)?(wife|husband|partner|boyfriend|girlfriend|son|"
    r"daughter|kids?|child(ren)?|mom|mum|mother|dad|father|sister|brother|friend|boss|mate|pal|"
    r"buddy|gaffer|"
    r"colleague|coworker|roommate|neighbou?r|grandma|grandpa|aunt|uncle|cousin|baby|"
    r"dog|cat|puppy|kitten|pet|parrot|rabbit|hamster|horse|fish)\b|"
    r"^\s*(he|she|they|his|her|their)\b",
    re.IGNORECASE,
)
FIRST_PERSON = re.compile(
    r"\b(i|i'm|im|i've|i'd|i'll|me|myself|we|we're|we've|we'll|us)\b", re.IGNORECASE
)
_RELATIVES_EVENT = re.compile(rf"\b(my|our) [\w-]+(?: [\w-]+)?'s (\w+ )?({EVENT_WORDS})\b", re.I)
"""A relative's wedding or birthday is a date in the user's own calendar."""
_NAMED_SUBJECT = re.compile(
    r"^(?!(?:I|We|You|It|This|That|There|Here|Our|My|Today|Now|Actually|Also)\b)"
    r"([A-Z][a-z]+)(\s+[A-Z][a-z]+)?(?:\s+(?:from|at|in|of|on) (?:the |my |our )?[\w-]+"
    r"(?: [\w-]+)?)?\s+"
    r"(?:(?:only|never|always|really|still|usually|also|totally|absolutely|literally|"
    r"apparently|basically|mostly|often|hardly)\s+)?"
    r"(is|was|has|had|likes|loves|lives|works|hates|eats|drinks|can'?t|cannot|doesn'?t|does|"
    r"will|just|and|takes|goes|plays|went|got|became|started|moved|said|says|told|thinks|'s)\b"
)
_THEIRS_SUBJECT = re.compile(
    r"^\W*(?!I\b)[A-Z][a-z]+['\u2019]s\s+[a-z]+(?:\s+[a-z]+)?(?:,[^,]{1,40},)?\s+"
    r"(?:is|was|has|had|likes|loves|eats|drinks|keeps|lives|works|hates|can'?t|doesn'?t|does)\b"
)
"""A named person's someone as the subject ("Wrenna's teacher, Mrs Okonkwo-Hale, is vegan")."""
_THIRD_SUBJECT = re.compile(
    r"^\W*(?:(?:the|a|an|this|that|these|those|some|its)\s+)?(?!not\b|no\b)[a-z][\w'-]*"
    r"(?:\s+(?!(?:is|are|was|were)\b)[a-z][\w'-]*){0,3}\s+"
    r"(?:is|are|was|were|went|goes|go|has|have|had|got|gets|cost|costs|seem|seems|look|looks|"
    r"will|can|could|said|says|lives|works|has(?:n'?t)?|have(?:n'?t)?|is(?:n'?t)|was(?:n'?t)|"
    r"did(?:n'?t)?|does(?:n'?t)?|won'?t)\b|^\W*(?:it'?s|it is|it was)\b",
    re.IGNORECASE,
)
"""A sentence whose subject is a thing or a person other than the writer ("The weather
in Oslo is terrible", "Coffee prices went up again", "Peanuts are legumes")."""


_AT_THEIRS = re.compile(
    r"\b(?:at|to|from|with|for|near|by|in)\s+(?:my|our)\s+(?:[\w-]+\s+)?[\w-]+(?:'s|s')"
    r"(?:\s+(?:place|house|home|flat|apartment|farm|wedding|birthday|party|funeral|graduation))?|"
    r"\b(?:staying|living|stopping|crashing)\s+with\s+(?:my|our)\s+(?:[\w-]+\s+)?[\w-]+|"
    r"\bvisiting\s+(?:my|our|the)\s+(?:[\w-]+\s+)?[\w-]+",
    re.IGNORECASE,
)
"""A relative named as a place or an occasion ("staying at my sister's in Leeds", "in
Seoul for my cousin's wedding", "my parents' place", "staying with my aunt in Aberfeldy"):
the writer is still the subject."""


_PEOPLE = (
    r"wife|husband|partner|boyfriend|girlfriend|son|daughter|kids?|mom|mum|mother|dad|father|"
    r"sister|brother|friend|boss|colleague|coworker|co-worker|roommate|flatmate|housemate|"
    r"neighbou?r|landlord|landlady|grandma|grandpa|aunt|uncle|cousin|in-laws|parents|children|ex|"
    r"mate|pal|buddy|teammate|classmate|manager|teacher|tutor|coach|trainer|nurse|doctor|vicar|"
    r"client|patient|other half|missus|missis|hubby|wifey|fella|bf|gf|nan|nana|gran|granny|"
    r"grandad|sis|bro|mam|mammy|gaffer"
)
_THEIR_SUBJECT = re.compile(
    r"^\W*(?:(?:and|but|so|now|then|also|plus|that|apparently|honestly|in [a-z]+|over there),?\s+)*"
    r"(?:(?:my|our|the)\s+(?:best\s+|new\s+|old\s+|[a-z]+\s+)?"
    rf"(?:{_PEOPLE})"
    r"(?:\s+[A-Z]\w+)?\b(?!['\u2019]s\b(?!\s+(?:not|never|no longer|also|always|allergic|vegan|"
    r"vegetarian|pescatarian|gluten|lactose|diabetic|coeliac|celiac|been|got|into|obsessed|"
    r"mad|crazy|big|gone|going|just|now|getting|become|started|stopped|quit|moved|moving|"
    r"finally|off|on|having|had|in)\b))|"
    r"(?:the|my|our)\s+(?:[\w-]+\s+)?[\w-]+['\u2019]s\s+"
    rf"(?:{_PEOPLE})\b(?!['\u2019]s)|"
    r"(?:he|she|they|both(?: of them)?|the two of them|neither of them)\b)",
    re.IGNORECASE,
)
"""A part of a sentence whose subject is another person ("my neighbour plays drums", "now
she judges my bagels", "both hate the vet", "my charge nurse is coeliac", "the kids eat
normal bread", "the vicar's wife makes the best lemon drizzle", "and also that he takes
insulin")."""


_LATER_CLAUSE = re.compile(r"\b(?:which|who|whom|whose|because|cos|coz|so|but)\b", re.I)


_VERB_FIRST = re.compile(
    r"^\W*(?:(?:just|finally|still|also|so|and|been|currently|now)\s+)?"
    r"(?!(?:\w*thing|morning|evening|king|spring|string|ring|wedding|building|ceiling|pudding|"
    r"clothing|sibling|darling|wing|meeting|feeling|cousin|bin|skin|margin)\b)"
    r"(?:[a-z]{2,}(?:ing|in')|"
    r"(?:goin|lookin|doin|workin|stayin|visitin|headin|flyin|drivin)\b|got|had|took|heading|"
    r"off to|back (?:in|to|at|from))\b",
)
"""Chat drops the "I": a clause that opens with its verb ("lookin after my gran in Kilkenny",
"got leave booked to see my mum") is the writer's, whoever else it names."""


def their_subject(part: str) -> bool:
    """`part` (of a sentence) is said of another person, who is its subject, and not of
    the writer ("my neighbour plays drums at midnight", "my friend Jonas just got a puppy")."""
    opened = re.sub(r"^\W*(?:(?:and|but|so|then|also|now)\W+)+", "", part, flags=re.I)
    head = _LATER_CLAUSE.split(opened, maxsplit=1)[0]  # "she hates garlic which is all I cook"
    return bool(_THEIR_SUBJECT.match(part)) and not FIRST_PERSON.search(head)


_TASTE_VERDICT = re.compile(
    r"^\W*(?:the\s+)?(?!(?:my|our|his|her|their)\b)(?:[\w'-]+\s+){0,2}?[\w'-]+\s+(?:is|are|tastes?)\s+(?:so\s+|just\s+|absolutely\s+|"
    r"honestly\s+|literally\s+|way\s+)?(?:gross|disgusting|vile|nasty|revolting|rank|overrated|"
    r"underrated|delicious|tasty|yummy|the best|life|my jam|heaven|bae)\b",
    re.IGNORECASE,
)
"""A food or drink as the subject of a verdict on its taste ("beer is gross idc what anyone
says", "coffee is life"): the writer's taste, though no "I" is said."""
_TASTES = ("food_like", "food_dislike", "drink_like", "drink_dislike")
_TIME_SUBJECT = re.compile(
    r"^\W*(?:(?:my|our)\s+)?(?:(?:mon|tues|wednes|thurs|fri|satur|sun)days?|weekends?|mornings?|"
    r"evenings?|nights?|lunchtimes?)(?:\s+(?:mornings?|afternoons?|evenings?|nights?))?\s+"
    r"(?:are|is|=)\b",
    re.IGNORECASE,
)
"""A time as the subject ("friday nights are pizza and movie night", "Sundays are for the
allotment"): the writer's habit, said of when it happens."""


def about_someone_else(clause: str, kind: str) -> bool:
    """A fact about another person or a pet, where the user is not the subject
    ("we" includes the user; a relative's wedding is a date in the user's plans),
    or about no one: a sentence that does not name the writer at all and has
    another subject ("The weather in Oslo is terrible"); one with no subject
    ("Camping in the Highlands until Sunday", "Latex allergy here") is the writer's."""
    if kind in ("pet", "family", "name") or (kind == "plan" and _RELATIVES_EVENT.search(clause)):
        return False  # a name read is the writer's own ("it's Jo by the way": `own_name_said`)
    if kind == "home" and re.match(r"\W*home(?: is|'s)\b", clause, re.IGNORECASE):
        return False  # "Home is Loughborough": the writer's
    if kind in _TASTES and _TASTE_VERDICT.search(clause):
        return False
    if kind in ("routine", "routine_weekly") and _TIME_SUBJECT.search(clause):
        return False
    clause = _AT_THEIRS.sub("", clause)
    if their_subject(clause):
        return True
    if FIRST_PERSON.search(clause) or _VERB_FIRST.match(clause):
        return False
    if OTHER_PERSON.search(clause):
        return True
    if kind == "communication":
        return False
    return about_no_one(clause)


def about_no_one(clause: str) -> bool:
    """`clause` does not name the writer (no I, me, we, my, our) and has another
    subject ("The kids next door have a new puppy"); "Latex allergy here", with no
    subject, is the writer's."""
    if FIRST_PERSON.search(clause) or re.search(r"\b(my|mine|our|ours)\b", clause, re.I):
        return False  # "Shellfish is my weakness"
    return bool(
        _NAMED_SUBJECT.match(clause.strip())
        or _THIRD_SUBJECT.match(clause)
        or _THEIRS_SUBJECT.match(clause)
    )


NAME_SAID = r"(?:^|[,;:!.]\s*|\b(?i:hi|hey|hiya|hello)\W+)(?i:the )?[Nn]ame'?s"
""""name's" opening what is said, before the writer's own name ("hiya, name's Declan"); not
a pet's ("my dog's name's Rex")."""


def own_name_said(value: str, clause: str) -> bool:
    """`value` is said as the writer's own name ("I'm Priyanka", "my name's Sam", "call
    me Jo", "Sam here"), not any capitalised word near a name: a pet's ("and a second
    one, Dash"), a colleague's ("my coworker Dan's profile"), a pasted field's."""
    v = re.escape(value)
    named = (
        rf"\b(?:my (?:full |real |proper |actual )?name(?: is|'s|,)|(?<!her )(?<!his )(?<!their )"
        rf"(?<!'s )name is|call me|calls me|"
        rf"go by|known as)\s+{v}\b"
    )
    if re.search(named, clause, re.IGNORECASE):
        return True
    signed = (
        rf"{NAME_SAID}\s+{v}\b|"
        rf"^\W*{SIGN_OFF}\W+{v}\W*$"
    )
    if re.search(signed, clause, re.IGNORECASE):
        return True
    plain = (
        rf"\b(?:I'?m|I am|im|this is|it'?s)\s+({v})\b|"
        rf"^\W*(?:(?:hi|hey|hello),?\s+)?({v})\s+here\b"
    )
    m = re.search(plain, clause, re.IGNORECASE)
    return m is not None and (m.group(1) or m.group(2))[:1].isupper()


_NAME_LEADS = re.compile(
    r"^\W*(?:and |but |so |oh |ok |well )?([A-Za-z][a-z'-]+?)(?:'s)?\s+"
    r"(?:(?:just|also|now|finally|recently|\w+ly)\s+)?"
    r"(?:went|goes|is|was|has|had|got|gets|became|becomes|turned|started|starts|quit|stopped|"
    r"does|doesn't|can't|cannot|won't|loves|hates|likes|eats|drinks|needs|wants|takes)\b",
    re.IGNORECASE,
)


def led_by_a_name(part: str, names: set[str]) -> bool:
    """`part` opens with the name of a pet or person the profile holds (`names`: match
    keys), as chat types it ("lena went vegan last month"): it is said of them."""
    m = _NAME_LEADS.match(part)
    return m is not None and match_key(m.group(1)) in names


def said_of_them(value: str, clause: str) -> bool:
    """`value` follows "he"/"she"/"they" and their verb, with no "I" or "my" between
    ("… told me she's moving 😭 she's gluten free"), or a verb that goes on from theirs
    ("she lives at 14 Elm Road, works nights at the Royal"), or is theirs by its word ("my
    collie is struggling with her back legs"): theirs, though the writer is named earlier in
    the clause."""
    v = re.escape(value)
    return bool(
        re.search(
            rf"\b(?:he|she|they)(?:'s|'re|\s+(?:is|are|was|were|has|have|had|went|goes|gets|"
            rf"got))\s+(?:(?!(?:I|my|me|we|our)\b)[\w-]+\s+){{0,3}}?{v}\b|"
            rf"\b(?:he|she)\s+[a-z]+s\b(?:(?!\b(?:I|im|my|me|we|our)\b)[^.;!?]){{0,60}}?"
            rf",\s*[a-z]+s\s+(?:(?!(?:I|my|me|we|our)\b)[\w-]+\s+){{0,3}}?{v}\b|"
            rf"\b(?:his|her|their)\s+(?:[\w-]+\s+)?{v}\b|"
            rf"(?:\b(?:called|named)\s+(?-i:[A-Z][a-z]+),?|\b(?-i:[A-Z][a-z]+),)\s+"
            rf"(?:has|had|gets|got)\s+(?:an?\s+)?(?:[\w-]+\s+){{0,2}}?{v}\b",
            clause,
            re.IGNORECASE,
        )
    )
