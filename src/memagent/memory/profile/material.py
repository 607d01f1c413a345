"""The material a request or question brings with it, which is not the writer's life.

A line that asks the assistant for something often carries what the work is about:
"Write a role description for our new Senior Nurse Practitioner. They will … be fluent
in Polish", "Can you scale this recipe? It's for the school fete, not for me:\\n- 400g
penne", "the client wants it in blue. the accent should be navy". A 1.5B model reads a
fact of the writer's in each. Beside a request or a question, a sentence that names no
one as "I", "we", "me" or "my" and opens with another subject (a person, a thing, "they",
"it") or is an item of a list is taken as that material; a sentence with no subject at
all ("allergic to nuts, so no satay") is still the writer's, as it is anywhere.
"""

from __future__ import annotations

import re

WRITER_WORDS = re.compile(
    r"\b(?:I|I'm|I've|I'd|I'll|im|ive|me|my|mine|myself|we|we're|we've|we'll|our|ours|us)\b",
    re.IGNORECASE,
)
"""The writer named as "I", "we", "me", "my" or "our", in any spelling chat uses."""
_LIST_ITEM = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s+\S")
_OTHER_LEAD = re.compile(
    r"^\W*(?!(?:home|name|job|work)\b)(?:(?:the|a|an|this|that|these|those|its|it|it's|they|"
    r"they're|their|he|he's|his|she|she's|her|there's|there is|there are)\b|"
    r"[a-z][\w-]*(?:\s+[a-z][\w-]*)?\s+(?:is|are|was|were|has|have|had|wants|needs|will|"
    r"must|should|can|says|said)\b|"
    r"(?!(?:just|now|also|still|only|really|always|never|finally|recently|then|so|and)\b)"
    r"(?![a-z]+ly\b)[a-z][\w-]*\s+[a-z]+ed\b|(?:keep|make) (?:it|them|this)\b)",
    re.IGNORECASE,
)
DIET_AND_HEALTH_WORDS = (
    r"allergic|intolerant|vegan|vegetarian|pescatarian|coeliac|celiac|diabetic|lactose|gluten"
)
"""Words a fact said without "I" opens with ("allergic to nuts", "vegan btw")."""
_SUBJECTLESS = re.compile(
    rf"^\W*(?:{DIET_AND_HEALTH_WORDS}|nut|peanut|off|on|back|based|living|moving|moved|staying|"
    r"working|had to|have to|gotta|got to|been|started|stopped|quit|gave up|given up|packed in|"
    r"finally|used to|gonna|can'?t stand|hate|love)\b",
    re.IGNORECASE,
)


_VERDICT = re.compile(
    r"\b(?:is|are) (?:life|bae|everything|elite|the best|unreal|god ?tier)\b", re.IGNORECASE
)
"""A taste said as a verdict ("irn bru is life"): the writer's, though "I" is not said."""


def request_material(sentence: str) -> bool:
    """`sentence`, kept beside a request or a question in the same message, is the
    request's material (module doc), not something the writer says of themselves."""
    if WRITER_WORDS.search(sentence) or _SUBJECTLESS.match(sentence) or _VERDICT.search(sentence):
        return False
    return bool(_LIST_ITEM.match(sentence) or _OTHER_LEAD.match(sentence))
