"""Facts read by rule, where the phrasing is fixed enough for a pattern.

A small model often lists nothing for "My dog is called Rex." or copies a
value from its instructions for "I don't eat red meat.", while the words say
plainly what they mean. So a few patterns run on every kept sentence, before
the model: a pet's or relative's name ("I have two daughters, Ana and Bea"), the
user's own name, where they live, their job (`jobs.job_said`: "I work as …", "I'm a teacher"),
an allergy ("I'm allergic to X", "a nut allergy"), a language they speak, "I
collect X", "I'm a big Arsenal fan", a trip ahead with a time ("I'm flying to Tokyo
next month"), "I don't eat/drink X" (a diet restriction), a diet kept until a day
("off sugar for the next ten days"), and how they want to be answered; a stay
said with its end or an arrival ("just landed in Tokyo"), a promotion, "6 months
sober", and tastes in set phrasings ("I love indian food", "can't do spicy food at
all"). What the rules read comes first; the model's facts fill in the rest (the
planner keeps one value per single-valued fact, and a taste a rule reads leaves the
model's other tastes standing).
Every value is copied from the sentence, so it is grounded by construction.
"""

from __future__ import annotations

import re
from datetime import date

from memagent.memory.profile import relations
from memagent.memory.profile.fact_schema import MAX_VALUE_CHARS, Extracted
from memagent.memory.profile.healthsaid import conditions_said, medicines_said
from memagent.memory.profile.item_keys import match_key
from memagent.memory.profile.jobs import job_said
from memagent.memory.profile.kinds import OPPOSITE
from memagent.memory.profile.languages import is_spoken
from memagent.memory.profile.lowplaces import lower_home, lower_stay
from memagent.memory.profile.statements import SIGN_OFF
from memagent.memory.profile.subjects import NAME_SAID
from memagent.memory.profile.timebound import time_bound

_ANIMALS = "|".join(relations.ANIMALS)
_RELATIVES = rf"(?:step-?)?(?:{'|'.join(relations.RELATIVES)})(?:-in-law)?"
_NAME = (
    r"((?:(?:Mr|Mrs|Ms|Miss|Dr|Sir|Lady|Lord|Captain|Prince|Princess|Professor|Doctor|"
    r"Little|Big|Baby)\.? )?[A-Z][a-zA-Z'-]+)"
)
"""A name, with its title ("Mr Whiskers", "Captain Fluff")."""
_CALLED = r"(?:is called|is named|'s name is|name is|called|named)"
_CHAT_PARTNER = r"(?:missus|missis|wifey|hubby|other half|fella|bf|gf)"
"""Chat's words for a partner, said with "the" as often as "my" ("me n the missus Rukhsana")."""

_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(rf"\b(?:[Mm]y|[Tt]he|[Oo]ur) ({_ANIMALS})(?:'s)? {_CALLED} {_NAME}"), "pet"),
    (
        re.compile(
            rf"\b(?:[Mm]y|a|an|our|1|one)(?: (?!called\b|named\b)[a-z-]+){{0,3}}? ({_ANIMALS})"
            rf"(?:,? an? \w+)?,? {_CALLED} {_NAME}"
        ),
        "pet",
    ),
    (re.compile(rf"\b(?:[Mm]y|[Oo]ur) ({_ANIMALS}) {_NAME}\b"), "pet"),
    (re.compile(rf"\b[Mm]y ({_RELATIVES})(?:'s)? {_CALLED} {_NAME}"), "family"),
    (re.compile(rf"\b(?:[Mm]y|[Oo]ur) ({_RELATIVES}),? {_NAME}\b"), "family"),
    (re.compile(rf"\b(?:[Mm]y|[Tt]he) ({_CHAT_PARTNER}),? {_NAME}\b"), "family"),
    (re.compile(rf"\brenamed (?:the|our|my) ({_ANIMALS})\b[^.;]*?\b{_NAME}"), "pet"),
    (re.compile(rf"\brenamed (?:the|our|my) ({_RELATIVES})\b[^.;]*?\b{_NAME}"), "family"),
]
_NAME_FIRST: list[tuple[re.Pattern[str], str]] = [
    (
        re.compile(
            rf"\b{_NAME} is (?:actually |really |now )?(?:my|our) ({_RELATIVES})"
            r"(?=\s*(?:[,.!;?)]|$|(?:actually|now|and|but|btw|by the way|too|not)\b))"
        ),
        "family",
    ),
]
"""A name said before its relation ("Arjun is my cousin actually")."""
_FULL_NAME = r"([A-Z][a-zA-Z'-]+(?: [A-Z][a-zA-Z'-]+)*)"
_OWN_NAME = re.compile(
    rf"\b(?:[Mm]y name is|[Mm]y name's|[Cc]all me|I'm called|I am called|I (?:actually )?go by) "
    rf"{_FULL_NAME}|"
    rf"\b(?:[Ee]veryone|[Pp]eople|[Ff]riends|[Mm]ost people|[Tt]hey) calls? me {_FULL_NAME}|"
    rf"{NAME_SAID} {_FULL_NAME}|"
    rf"^\W*{SIGN_OFF}\W+{_FULL_NAME}\W*$|"
    rf"\b(?:[Uu]se|[Ii]t'?s) my (?:full |real |proper |actual )?name,? {_FULL_NAME}|"
    r"^\W*(?:(?i:(?:oh\s+)?(?:hi|hello|hey|hiya|morning|evening)(?:\s+(?:there|dear|all|"
    r"everyone))?)\W+)?(?:I'?m|I am|Im) "
    r"(?!(?:Fine|Good|Okay|Ok|OK|Back|Here|Done|Sorry|Sure|Home|Ready|Tired|Sick|Free|Busy|Late|So|Not|In|At|On|Off|Out|Just|Still|Also|Really|New|Retired|Single|"
    r"Married|Pregnant|Vegan|Vegetarian|Allergic|Diabetic|Coeliac|Celiac|Gay|Straight|Deaf|"
    r"Blind|Autistic|English|Irish|Scottish|Welsh|British|American|Canadian|Australian|Indian|"
    r"Pakistani|Chinese|Japanese|Korean|French|German|Spanish|Italian|Polish|Dutch|Greek|"
    r"Turkish|Jewish|Muslim|Catholic|Christian|Hindu|Sikh|Buddhist|Atheist)\b)([A-Z][a-z'-]+)"
    r"(?=\W*$|\s*,?\s*(?:by the way|btw)\b|\s+and\s+I\b|"
    r",\s+(?:my|and|I|I'm|nice|from|sorry|your|aged?|\d))|"
    r"^\W*(?:(?i:hi|hello|hey|hiya|alright|yo|morning|evening)\W+)?(?i:it'?s|it is) "
    r"(?!(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day|Christmas|Easter|Ramadan|Eid|Diwali|"
    r"Halloween|New\b|January|February|March|April|May|June|July|August|September|October|"
    r"November|December|Me\b|Just\b|Only\b|Not\b)"
    r"([A-Z][a-z'-]+)(?=\s*,?\s*(?i:by the way|btw|here)\b|\s+(?:again|the [a-z]+)\b|"
    r",\s+(?:[a-z]+\s+)?(?:from|in|at)\b|,\s+(?:[a-z-]+ ){0,2}(?:here|again)\b)"
)
"""The user's name ("name's Declan", a letter signed "With thanks, Gerald"); what they are
called by others only when no name is given; a sentence
that opens with "I'm Ruth" (after a greeting at most), said alone, "by the way", or before
a comma and more about the writer ("I'm Margaret, my grandchildren call me Nana Mags"),
where the word is no nationality, faith or state ("I'm Irish, ...")."""
_HOME = re.compile(
    r"\bI ?(?:actually |now |currently |still )?(?:live|am living|'m living|'ve lived|'m based|"
    r"am based|"
    r"have lived|'ve been living|have been living|"
    r"'ve moved|have moved|moved|just moved|relocated|"
    r"'ve relocated|have relocated|just relocated)(?: down| up| back| out)? "
    r"(?:from [A-Z][\w'-]* )?(?:in|to) (?:the )?"
    r"([A-Z][\w'-]*(?: [A-Z][\w'-]*)*)|\b[Ww]e(?:'ve| have)? (?:just |finally |now )?(?:moved"
    r"(?: down| up| back| out)? to|live in|'re living in|are "
    r"living in|relocated to|'ve relocated to|have relocated to) (?:an? [\w -]{1,30}? in )?"
    r"(?:the )?([A-Z][\w'-]*(?: [A-Z][\w'-]*)*)|"
    r"\bmoved into (?:a|the|our|my) (?:new |little |lovely )?(?:flat|house|place|apartment|home|"
    r"bungalow|cottage|studio) in ([A-Z][\w'-]*(?: [A-Z][\w'-]*)*)|"
    r"^\W*(?:[Jj]ust )?[Mm]oved to ([A-Z][\w'-]*(?: [A-Z][\w'-]*)*)|"
    r"(?:^\W*|,\s*)(?:now |currently |been )?living in ([A-Z][\w'-]*(?: [A-Z][\w'-]*)*)|"
    r"\bI (?:rent|own|share|bought) an? (?:\w+ )?(?:flat|house|apartment|place|room|cottage|"
    r"studio) in ([A-Z][\w'-]*(?: [A-Z][\w'-]*)*)|"
    r"\b[Hh]ome(?: is|'s) (?:now )?(?:in )?([A-Z][\w'-]*(?: [A-Z][\w'-]*)*)|"
    r"\bI live in an? (?:small |little |tiny |quiet )?(?:village|town|suburb|hamlet) (?:just )?"
    r"(?:outside|near|north of|south of|east of|west of) ([A-Z][\w'-]*(?: [A-Z][\w'-]*)*)"
)
_NO_EAT = re.compile(
    r"\bI (?:don'?t|do not|never) (?:eat|drink|touch|do) "
    r"|\bI(?:'m| am) not (?:eating|drinking|having) "
    r"|(?:\bI(?:'ve| have)? |^\W*|,\s*)(?:cut out|cut down on|given up|gave up|avoid|"
    r"stay away from|steer clear of|keep off|stopped eating|stopped drinking) "
    r"(?=(?:all |any )?(?:caffeine|alcohol|booze|sugar|dairy|gluten|meat|red meat|carbs|pork|beef|"
    r"fish|eggs|wheat|lactose)\b)"
    r"|\bI(?:'ve| have)? (?:cut out|cut down on|given up|avoid|stay away from|steer clear of|"
    r"keep off|stopped eating|stopped drinking) "
)
"""Saying what one abstains from ("I don't do dairy", "I've cut out sugar", or without the
"I" before a thing one goes without: "gave up caffeine"): a diet rule; the thing is the
words after it, up to the clause's end."""
_ONLY_EAT = re.compile(
    r"\bI (?:only|strictly) eat (halal|kosher|vegan|vegetarian|plant-based)\b", re.I
)
"""'I only eat halal': the diet, said as what is eaten."""
_APPOINTMENT = re.compile(
    r"^\W*(?:(?:I'?ve got|I have|got|I'?ve|me|my) (?:an? |my |me )?)?((?:dentist|doctor|gp|physio|"
    r"hospital|vet|optician|hairdresser|barber|interview|mot|scan|mri|smear|blood test|"
    r"check-?up)(?: appointment| appt)?) (?=on the \d|on (?:mon|tues|wednes|thurs|fri|satur|sun)"
    r"day|tomorrow|tmrw|next (?:week|mon|tues|wednes|thurs|fri))",
    re.IGNORECASE,
)
"""'dentist on the 24th at 4', 'got me MOT tomorrow': an appointment said by its day."""
_DIET_FIRST = re.compile(
    r"^\W*(vegan|vegetarian|veggie|pescatarian|halal|kosher|coeliac|celiac)\b"
    r"(?=\s*(?:here|btw|so|and|but|[,.!]|myself|tbh|obvs))",
    re.IGNORECASE,
)
"""'pescatarian so fish is fine', 'coeliac here so gluten free is a must': said first."""
_ON_SHIFTS = re.compile(
    r"(?:\bI'?m |\bI am |\bbeen |^\W*)on (nights|earlies|lates|night shifts?|12s)\b", re.IGNORECASE
)
"""'on nights this week', 'been on earlies': a pattern of work, said by its shifts."""
_ABSTAINED = re.compile(
    r"(?:any |all |eating |drinking |the )?(?!(?:a|an|the|my|your|it|that|this|much|many|so)\b)"
    r"([a-z][a-z -]{1,30}?)"
    r"(?=[,.;!]|$| anymore| any more| completely| entirely| at all| now| these days| for )"
)
_COMMUNICATION = re.compile(
    r"\b(answers?|replies|reply|responses?|emojis?|bullet points?|explanations?|detail)\b",
    re.IGNORECASE,
)
_WANTS = re.compile(
    r"\b(keep|kept|make|use|prefer|rather|like|love|want|give me|always|never|don'?t|avoid|stop|"
    r"go into|more|less|no|please|pls)\b|\s>\s",
    re.IGNORECASE,
)
_KEPT = re.compile(
    r"\b(?:always|never|from now on|in future|going forward|every time|by default|generally|"
    r"whenever|each time|any ?more|stop|keep)\b",
    re.IGNORECASE,
)
_THIS_ANSWER = re.compile(
    r"\b(?:an?|the|this|that|one|proper|honest|quick|straight|short|real|evidence-based)\s+"
    r"(?:[\w-]+\s+)?(?:answer|reply|response|explanation)\b(?!s)|"
    r"\banswers? (?:underneath|below|at the (?:end|bottom)|separately|on (?:a )?separate)\b|"
    r"\b(?:how|what|when|whether) to (?:reply|answer|respond)\b|"
    r"\b(?:reply|replying|answer|answering|respond|responding) to (?:her|him|them|my|the|this|"
    r"a|an|it|people|customers?|clients?|emails?|texts?)\b",
    re.IGNORECASE,
)
"""One answer asked for ("Evidence-based answer please", "I'd like a proper answer rather than
the usual internet arguments", "answers underneath please"), or the writer's own replies to
someone ("I don't know how to reply without upsetting her"): no way of answering kept."""
_PART = re.compile(r"\s*[,;:]\s*|\s+(?:so|but|because|and then)\s+", re.IGNORECASE)
"""The parts of a sentence: a way to answer is the part that says it."""
_NO_FOR_ME = re.compile(
    r"^\W*no (?!more\b|longer\b)([a-z][a-z -]{1,30}?) for me\b|"
    r"\bI(?:'m| am) off ([a-z][a-z -]{1,30}?) for good\b",
    re.IGNORECASE,
)
""""No beef for me, it's a religious thing": a diet rule said without a verb."""

_ABSTAINABLE = (
    r"alcohol|booze|drinking|sugar|sweets|carbs|bread|meat|dairy|caffeine|coffee|chocolate|"
    r"junk food|takeaways?|gluten|snacks|crisps|fizzy drinks|soda|wine|beer"
)
_TEMP_DIET = re.compile(
    r"(?:\b(?:I'm|I am|I'll be|I will be|we're|we are|I've been|im)\s+(?:\w+\s+)?|^\W*)"
    r"(?:doing|on|trying|starting|following)\s+(?:a |an |the |my )?"
    r"(?P<diet>(?:[\w-]+ )?(?:diet|cleanse|detox|fast)|keto|whole ?30|paleo|atkins|"
    rf"dry january|veganuary|(?:no|zero)[- ](?:{_ABSTAINABLE}))\b|"
    r"(?:\b(?:I'm|I am|I'll be|we're|we are|im)\s+(?:\w+\s+)?off|^\W*(?:I'm\s+|im\s+)?giving up|"
    r"\bI(?:'m| am) giving up)\s+"
    rf"(?P<off>{_ABSTAINABLE})\b|"
    rf"(?:^\W*|[,;]\s*|\bso\s+|\band\s+)no\s+(?P<no>{_ABSTAINABLE})\s+(?:at all\s+)?(?:for me\s+)?"
    r"(?=until|till|for (?:the next|the rest of|\d+|a|an|one|two|three|four|five|six|seven|ten|"
    r"\w+ days)\b|"
    r"this|through)|"
    rf"^\W*off\s+(?P<bare>{_ABSTAINABLE})\b(?=[^.]*\b(?:until|till|for|through))|"
    r"(?:\bI'm\s+|\bI am\s+|\bwe're\s+|^\W*)(?P<fast>fasting)\b",
    re.IGNORECASE,
)
"""A diet kept for a while ("I'm doing Whole30 until the end of March", "off sugar for
the next ten days", "so no alcohol until the race on the 22nd", "fasting for Ramadan
until the 19th"): read only in a sentence that says when it ends, since the same words
without an end ("I'm on a diet") say too little to keep."""

_STAY = re.compile(
    r"(?:\bI(?:'m| am|'ll be| will be)|^\W*[A-Za-z][a-z]+ing\b)"
    r"(?: (?!(?:flying|going|heading|driving|moving|off|leaving)\b)[a-z][\w'-]*){0,5}? "
    r"(?:in|at|from|out of|visiting|around|through) (?:the |our |my )?"
    r"([A-Z][\w'-]*(?: [A-Z][\w'-]*)*)"
)
"""A stay somewhere, said with an end ("I'm stuck in Nairobi till Monday", "Working
remotely from Lisbon for the next ten days"): only read with a time bound."""
_AT_THEIRS = re.compile(
    r"\b(?:I'?m|I am|im|staying|stopping|sleeping|crashing)\s+(?:\w+\s+)?(?:at|with) "
    r"(my (?:mum|mom|mother|dad|father|parents|nan|gran|grandma|grandparents|sister|brother|"
    r"aunt|uncle|cousin|in-laws|friend|mate|boyfriend|girlfriend|partner)(?:'s|')?)",
    re.IGNORECASE,
)
""""Staying at my mum's till the 20th": a stay at a relative's, read only with an end."""
_ON_TRIP = re.compile(
    r"^\W*(?i:(?:I'm |I am |we're |we are )?(?:on|away on|out on) (?:a |an |my |our )?(?:[\w-]+ )?"
    r"(?:trip|visit|holiday|vacation|getaway|tour|assignment|secondment) (?:to|in) (?:the )?)"
    r"([A-Z][\w'-]*(?: [A-Z][\w'-]*)*|[a-z]{4,}(?= (?i:till|until|thru|through)\b))"
)
""""On a work trip to Accra through Thursday": there now, with an end (read only so)."""
_PLACE = re.compile(
    r"(?<!\bto )(?<!\bfor )(?:^|(?<=\s))(?:[Ii]n|at|near|from)\s+(?:the\s+|our\s+|my\s+)?"
    r"(?!(?:January|February|March|April|May|June|July|August|September|October|November|"
    r"December|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|I|The)\b)"
    r"([A-Z][\w'-]+(?: [A-Z][\w'-]+)*)"
)
"""A place named after "in", "at", "near" or "from" ("at a music festival in Roskilde till
Saturday", "Jury duty has me stuck in Fresno until the 12th"): a stay, when the sentence
says until when and is not about going somewhere."""
_GOING = re.compile(
    r"\b(?:flying|fly|going|heading|driving|travell?ing|off|moving|trip|visit\w*|meeting|"
    r"visiting|weekend in|next)\b",
    re.IGNORECASE,
)
_NAME_STOP = frozenset({"I", "The", "A", "An", "And", "But", "Now", "Is", "It"})
_NOT_NAMES = frozenset({"This", "That", "She", "He", "Who", "There", "Here", "What", "Which"})
"""Words a sentence may open "… is my sister" with that are no name."""
_NAMES = r"([A-Z][a-zA-Z'-]+(?:(?:,\s*|\s+and\s+|\s*&\s*)[A-Z][a-zA-Z'-]+)*)"
_COUNT = r"(?:a|an|one|two|three|four|five|\d)"
_ARE_NAMED = re.compile(
    rf"\b(?:[Mm]y|[Oo]ur) {_COUNT} ({_ANIMALS}|{_RELATIVES}|children|puppies|bunnies|ponies)s? "
    rf"are (?:called |named )?{_NAMES}"
)
""""Our two cats are Salt and Pepper"."""
_COUNTED_NAMED = re.compile(
    rf"^\W*(?:two|three|four|five|\d) ({_ANIMALS}|{_RELATIVES}|children|puppies|bunnies|ponies)s?"
    rf",?\s+{_NAMES}"
)
""""two budgies, Kiwi and Mango, they never shut up": the subject left unsaid."""
_HAVE_NAMED = re.compile(
    rf"\b(?:I|[Ww]e)(?: have|'ve got| have got| got| own|'ve) (?:{_COUNT} )?(?:\w+ )?"
    rf"({_ANIMALS}|{_RELATIVES}|children|puppies|bunnies|ponies)s?,?\s+"
    rf"(?:(?:called|named)\s+)?{_NAMES}"
)
_THING = r"([A-Za-z][A-Za-z -]{1,40}?)"
_THING_END = (
    r"(?=[,.;!?]|$| and (?:I|my|we)\b| but | so | too\b| as well| which | because | after all"
    r"| since | though)"
)
_SEVERITY = r"(?:severe|mild|bad|serious|slight|life-threatening)"
_ALLERGIC = re.compile(
    rf"\ballergic to (?!(?:it|them|that|this|something|anything|everything)\b)"
    rf"{_THING}{_THING_END}"
    rf"|(?:^\W*(?!(?:I|we|my|he|she|they|you)\b)|\b(?:a|an|my)\s+)(?:{_SEVERITY}\s+)?"
    rf"(?!(?:{_SEVERITY}|food|an?|my|no|proper|real|true|actual|genuine|official|the)\b)"
    r"([a-z][a-z -]{1,30}?) allergy\b"
    rf"|\ballergy to {_THING}{_THING_END}",
    re.IGNORECASE,
)
_NOT_ALLERGENS = frozenset({"as", "on", "in", "at", "an", "a", "the", "is", "it", "its", "it's"})
_INTOLERANT = re.compile(
    r"\b[a-z]+ intoleran(?:t|ce)\b|\b(?:celiac|coeliac) disease\b", re.IGNORECASE
)
_LIST = re.compile(r"\s*(?:,\s*(?:and|or)?|\band\b|\bor\b|&)\s*")
_SPEAK = re.compile(
    r"\bI (?:speak|can speak|'m fluent in|am fluent in) "
    r"([A-Z][a-z]+(?:(?:,| and| or|, and) [A-Z][a-z]+)*)|"
    r"\b([A-Z][a-z]+) is my (?:mother tongue|first language|native language)\b|"
    r"\b[Mm]y (?:mother tongue|first language|native language) is ([A-Z][a-z]+)\b"
)
_GREW_UP_SPEAKING = re.compile(
    r"\b(?:grew up|was raised|was brought up|raised|brought up) speaking ([A-Z][a-z]+)([^.;!?]*)"
)
"""'I grew up speaking Gujarati with my nani and English at school': each spoken language named."""
_FAN_OF = r"fan of (?:the )?([\w'-]+(?: [\w'-]+){0,2}?)(?=[,.;!]|$| and | but | since | with )"
_FAN_NAMED = r"([A-Z][\w'-]*(?: [A-Z][\w'-]*)*) (?:fan|supporter)\b"
_KEEN = r"(?i:big|huge|massive|great|die-hard|diehard|lifelong|long-time) "
_FAN = re.compile(
    rf"\bI(?:'m| am|'ve always been| have always been) (?i:an? )?(?:{_KEEN})?"
    rf"(?:{_FAN_OF}|{_FAN_NAMED})|^\W*(?i:an? )?{_KEEN}(?:{_FAN_OF}|{_FAN_NAMED})|"
    rf"^\W*(?i:an? )?{_KEEN}([a-z][\w'-]*(?: [a-z][\w'-]*)?) (?:fan|nerd|buff|lover)\b"
)
""""I'm a massive Arsenal fan", "Big fan of Ethiopian food": a liking."""
_WEAKNESS = re.compile(
    r"^\W*(?:[Oo]h,? )?(?!(?i:my|our|his|her|their|this|that|he|she|it|they|you)\b)"
    r"([a-zA-Z][\w' -]{1,30}?) (?:is|are) (?:honestly |probably |definitely )?my "
    r"(?:(?:absolute |all-time |all time )?(?:weakness|guilty pleasure|comfort food|"
    r"favou?rite (?:thing|food|drink|snack|treat|meal|dish|cuisine|tea|coffee|beer|wine|"
    r"hobby|pastime|sport|band|film|movie|show|book|game)s?|fave (?:food|drink|cuisine|hobby)|"
    r"(?:weekend |new |main |favou?rite )?(?:hobby|pastime|passion|obsession|happy place|jam|"
    r"thing)|"
    r"(?:tea|coffee|drink|beer|wine|poison|snack) of choice|go-to (?:drink|snack|meal|food|"
    r"order|dish)|favou?rite(?=\W*$)))\b"
)
""""Dark chocolate is my weakness": a liking (two sets said it, and a model reads a dislike)."""
_CUISINE = re.compile(
    r"\bI (?:really |absolutely |just |do |so )?(?:love|adore|like|enjoy) "
    r"((?:[a-z]+ )?[a-z]+) (?:food|cuisine)\b",
    re.IGNORECASE,
)
""""i really love indian food": a cuisine liked."""
_PARTNER_IS = re.compile(
    rf"\b[Mm]y ({_RELATIVES}) is (?:called |named )?"
    r"(?!(?:American|British|English|Scottish|Irish|Welsh|French|German|Italian|Spanish|"
    r"Portuguese|Dutch|Greek|Polish|Russian|Chinese|Japanese|Korean|Indian|Mexican|Canadian|"
    r"Australian|Brazilian|Swedish|Norwegian|Danish|Finnish|Turkish|Thai|Vietnamese|Filipino|"
    r"Nigerian|Kenyan|Egyptian|Israeli|Iranian|Pakistani|Jewish|Muslim|Catholic|Christian|Hindu|"
    r"Buddhist|Vegan|Vegetarian)\b)([A-Z][a-z'-]+)\b(?!['\u2019]s)"
)
""""my wife is Ingrid, we been married 30 years": a relative named."""
_CANT_DO = re.compile(
    r"\bI (?:also |just |really |honestly |absolutely )?(?:can'?t|cannot) (?:do|handle|stomach|"
    r"tolerate) (?!(?:this|that|it|them|these|those|any ?more)\b)"
    r"([a-z]+(?: (?!any ?more\b|at all\b)[a-z]+)?)(?=\s+at all\b|\W*$|[,.;!])"
    r"(?!.*\bany ?more\b)",
    re.IGNORECASE,
)
""""i also can't do spicy food at all": a dislike."""
_DONT_LIKE = re.compile(
    r"\bI (?:really |even |just |honestly )?(?:don'?t|do not) (?:even |really |actually )?"
    r"(?:like|enjoy|care for) (?!to\b|it\b|that\b|this\b|them\b|when\b|how\b|being\b)"
    r"([a-z]+(?: (?!at all\b|much\b|either\b|any ?more\b)[a-z]+)?)"
    r"(?=\s+(?:at all|much|either|tbh|lol)\b|\W*$|[,.;!])(?!.*\bany ?more\b)",
    re.IGNORECASE,
)
""""ironic bc i don't even like coffee": a dislike."""
_DIET_NOW = re.compile(
    r"\b(?:I'?m|I am|we'?re|went|gone|going|turned|become|became|been)\s+"
    r"(?:(?:now|fully|strictly|totally|completely|properly|mostly|full-time|officially)\s+)?"
    r"(vegan|vegetarian|veggie|pescatarian|pescetarian|plant-based)\b"
    r"(?! (?:food|restaurant|place))",
    re.IGNORECASE,
)
""""Went fully vegan over christmas", "I'm pescatarian": the diet one keeps now."""
_INJURY = re.compile(
    r"\b(?:I(?:'ve| have)?\s+)?(broke|broken|sprained|fractured|twisted|dislocated|tore|torn)"
    r"\s+(?:my\s+)?(ankle|wrist|arm|leg|foot|toe|finger|hand|knee|elbow|shoulder|collarbone|"
    r"rib|ribs|nose|hip|back|thumb|acl|hamstring)\b",
    re.IGNORECASE,
)
""""sprained my ankle at netball", "broke my arm skiing": an injury is a condition (a while)."""
_NOW_IN = re.compile(
    r"^\W*(?:I'?m |I am |im |we'?re )?(?:currently|presently|right now|for now) "
    r"(?:in|at|staying in|working from) ([A-Z][\w'-]*(?: [A-Z][\w'-]*)*)|"
    r"\bI'?m (?:in|staying in) ([A-Z][\w'-]*(?: [A-Z][\w'-]*)*) (?:for a (?:bit|while)|for now|at "
    r"the moment)\b"
)
""""currently in Hanoi, working remotely from here for a bit": there now, no end said."""
_ARRIVED = re.compile(
    r"(?:^\W*|\b(?i:I|we|I've|we've|I have|we have)\s+)(?i:just\s+|finally\s+)?"
    r"(?i:landed|arrived|touched down)\s+(?i:in)\s+(?:the\s+)?([A-Z][\w'-]*(?: [A-Z][\w'-]*)*)"
    r"(?![^.!?]*\b(?i:last (?:year|month|week|summer|winter|spring|autumn)|ago|in \d{4})\b)"
)
""""we just landed in Tokyo!": there now, though no end is said."""
_PROMOTED = re.compile(
    r"\bpromoted to (?:a |an |the )?((?:[a-z][\w-]* ){0,2}?[a-z][\w-]*?)"
    r"(?=\W*$|[,.;!]|\s+(?:today|yesterday|this|last|at|in|on|and|from)\b)",
    re.IGNORECASE,
)
""""got promoted to senior dev today": the job now."""
_SOBER_NOW = re.compile(
    r"\b(?:\d+|a|one|two|three|six) (?:days?|weeks?|months?|years?) sober\b|\bsober (?:for|since) |"
    r"\bI'?m (?:\w+ )?(?:sober|teetotal)\b(?! (?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec))|"
    r"\bI don'?t drink (?:alcohol )?any ?more\b|\bI(?:'ve)? (?:quit|stopped|gave up) (?:drinking|"
    r"alcohol|booze)\b",
    re.IGNORECASE,
)
""""6 months sober", "I don't drink alcohol anymore": a lasting rule of no alcohol."""
_COLLECT = re.compile(r"\bI collect ([a-z][\w -]{2,40}?)(?=[,.;!]|$| and | but )")
_TRAVEL = re.compile(
    r"\bI(?:'m| am) (?:flying|going|heading|travell?ing|driving|off|moving|relocating) to "
    r"([A-Z][\w'-]*(?: [A-Z][\w'-]*)*)"
    r"(?=.*\b(?:next|tomorrow|on|in|this|later|soon|for|at the end)\b)"
)


def _clip(text: str) -> str:
    """`text` cut to a value's length at a word's end (a cut word would not be said)."""
    said = " ".join(text.split())
    if len(said) > MAX_VALUE_CHARS:
        said = said[: MAX_VALUE_CHARS + 1].rsplit(" ", 1)[0]
    return said.strip(" ,.;!")


_PARTS = re.compile(r"\s*[,;]\s*|\s+and\s+(?=(?:I|I'm|we|we're)\b)")


def _bound_part(sentence: str, day: date) -> str:
    """The part of `sentence` that says the end ("I'm Priyanka, a nurse in Edinburgh, and
    I'm staying at my mum's till the 20th": the stay is the last part's, not Edinburgh)."""
    parts = [p for p in _PARTS.split(sentence) if p]
    return next((p for p in reversed(parts) if time_bound(p, day) is not None), sentence)


_AT_A_PLACE = re.compile(
    r"\b(?:at|in) (?:the|a|an|my|our) ((?:[a-z]+ )?(?:house|cabin|cottage|farm|villa|chalet|"
    r"campsite|hotel|airbnb|hostel|resort|retreat|caravan|lodge)(?: (?:in|near|by) (?:the )?"
    r"[A-Za-z][\w'-]+)?)\b",
    re.IGNORECASE,
)
""""This weekend I'm at the lake house": a stay at a place no capital names."""


def _stay_place(s: str) -> str | None:
    """The place of a stay said in `s` (one said with an end: the caller checks)."""
    stay = _STAY.search(s)
    trip = _ON_TRIP.search(s)
    if stay is not None:  # "staying at the Hilton in Abu Dhabi": the city, not the hotel
        city = re.search(rf"{re.escape(stay.group(1))} in ([A-Z][\w'-]*(?: [A-Z][\w'-]*)*)", s)
        return _clip((city or stay).group(1))
    if trip is not None:
        return _clip(trip.group(1))
    if not _GOING.search(s.split(",")[0]) and (place := _PLACE.search(s)):
        return _clip(place.group(1))
    if low := lower_stay(s):
        return low
    theirs = _AT_THEIRS.search(s)
    if theirs is not None:
        return _clip(theirs.group(1))
    lodging = _AT_A_PLACE.search(s)
    return _clip(lodging.group(1)) if lodging is not None else None


def rule_facts(sentences: list[str], today: date | None = None) -> list[Extracted]:
    """The facts fixed patterns read in `sentences`, said on `today` (default: the
    clock's day; it decides whether a time word still lies ahead), see the module doc."""
    day = today or date.today()
    out: list[Extracted] = []
    for s in sentences:
        for pattern, kind in _RULES:
            for m in pattern.finditer(s):
                name = m.group(2)
                if name not in _NAME_STOP:
                    out.append(Extracted(kind=kind, value=m.group(1).lower(), name=name))
        for pattern, kind in _NAME_FIRST:
            for m in pattern.finditer(s):
                if m.group(1) not in _NAME_STOP and m.group(1) not in _NOT_NAMES:
                    out.append(Extracted(kind=kind, value=m.group(2).lower(), name=m.group(1)))
        own = _OWN_NAME.search(s)
        name = next((g for g in own.groups() if g), None) if own is not None else None
        if name is not None and name not in _NAME_STOP:
            out.append(Extracted(kind="name", value=name))
        home = next(reversed(list(_HOME.finditer(s))), None)  # "…said Porto but I live in Braga"
        if home is not None:
            out.append(Extracted(kind="home", value=_clip(next(g for g in home.groups() if g))))
        elif low := lower_home(s):
            out.append(Extracted(kind="home", value=low))
        work = job_said(s)
        if work is not None:
            out.append(Extracted(kind="work", value=_clip(work)))
        bounded = time_bound(s, day) is not None
        if bounded:
            stay = _stay_place(_bound_part(s, day)) or _stay_place(s)
            if stay is not None:
                out.append(Extracted(kind="whereabouts", value=stay))
        if bounded:
            for m in _TEMP_DIET.finditer(s):
                diet = re.sub(r"^(?:no|zero)[- ]", "", next(g for g in m.groups() if g), flags=re.I)
                out.append(Extracted(kind="diet", value=_clip(diet)))
        if not re.search(r"any ?more|no longer", s, re.IGNORECASE):
            for no in _NO_EAT.finditer(s):
                thing = _ABSTAINED.match(s, no.end())
                if thing is not None:
                    out.append(Extracted(kind="diet", value=_clip(thing.group(1))))
        out += [Extracted(kind="diet", value=m.group(1).lower()) for m in _ONLY_EAT.finditer(s)]
        out += [Extracted(kind="routine", value=m.group(1).lower()) for m in _ON_SHIFTS.finditer(s)]
        out += [Extracted(kind="plan", value=m.group(1).lower()) for m in _APPOINTMENT.finditer(s)]
        for m in _DIET_FIRST.finditer(s):
            said = m.group(1).lower()
            out.append(
                Extracted(kind="condition" if said in ("coeliac", "celiac") else "diet", value=said)
            )
        for m in _NO_FOR_ME.finditer(s):
            out.append(Extracted(kind="diet", value=_clip(m.group(1) or m.group(2))))
        for m in _PROMOTED.finditer(s):
            out.append(Extracted(kind="work", value=_clip(m.group(1))))
        if _SOBER_NOW.search(s):
            out.append(Extracted(kind="diet", value="alcohol"))
        for m in _INTOLERANT.finditer(s):
            out.append(Extracted(kind="condition", value=_clip(m.group(0))))
        out += [Extracted(kind="medication", value=v.lower()) for v in medicines_said(s)]
        out += [Extracted(kind="condition", value=_clip(v)) for v in conditions_said(s)]
        for m in (*_HAVE_NAMED.finditer(s), *_ARE_NAMED.finditer(s), *_COUNTED_NAMED.finditer(s)):
            relation = relations.singular(m.group(1))
            kind = "pet" if relation in relations.ANIMALS else "family"
            for name in relations.split_names(m.group(2)):
                if name not in _NAME_STOP:
                    out.append(Extracted(kind=kind, value=relation, name=name))
        for m in _ALLERGIC.finditer(s):
            said = next(g for g in m.groups() if g)
            out.extend(
                Extracted(kind="allergy", value=_clip(v))
                for v in _items(said)
                if not set(v.lower().split()) & _NOT_ALLERGENS  # "on my chart as an allergy"
            )
        for m in _SPEAK.finditer(s):
            said = next(g for g in m.groups() if g)
            out.extend(Extracted(kind="language", value=v) for v in _items(said))
        for m in _GREW_UP_SPEAKING.finditer(s):
            named = [m.group(1), *re.findall(r"\b[A-Z][a-z]+\b", m.group(2))]
            out.extend(Extracted(kind="language", value=v) for v in named if is_spoken(v))
        for m in _WEAKNESS.finditer(s):
            food = re.search(r"\b(?:food|snack|treat|meal|dish|cuisine|order)\b", m.group(0), re.I)
            drink = re.search(r"\b(?:drink|tea|coffee|beer|wine|poison)\b", m.group(0), re.I)
            kind = "food_like" if food else "drink_like" if drink else "like"
            out.append(Extracted(kind=kind, value=_clip(m.group(1))))
        for m in _DIET_NOW.finditer(s):
            diet = (
                m.group(1)
                .lower()
                .replace("veggie", "vegetarian")
                .replace("pescetarian", "pescatarian")
            )
            if not re.search(r"\b(?:not|no longer|n't|if|would|might)\b", s[: m.start()], re.I):
                out.append(Extracted(kind="diet", value=diet))
        for m in _INJURY.finditer(s):
            how = {"broke": "broken", "tore": "torn"}.get(m.group(1).lower(), m.group(1).lower())
            out.append(Extracted(kind="condition", value=f"{how} {m.group(2).lower()}"))
        arrived = _ARRIVED.search(s)
        if arrived is not None and not bounded and arrived.group(1) not in _NAME_STOP:
            out.append(Extracted(kind="whereabouts", value=_clip(arrived.group(1))))
        now_in = _NOW_IN.search(s)
        if now_in is not None and not bounded:
            out.append(
                Extracted(kind="whereabouts", value=_clip(now_in.group(1) or now_in.group(2)))
            )
        for m in (*_COLLECT.finditer(s), *_FAN.finditer(s)):
            out.append(Extracted(kind="like", value=_clip(next(g for g in m.groups() if g))))
        for m in _CUISINE.finditer(s):
            out.append(Extracted(kind="food_like", value=f"{m.group(1).lower()} food"))
        for m in (*_CANT_DO.finditer(s), *_DONT_LIKE.finditer(s)):
            out.append(Extracted(kind="dislike", value=_clip(m.group(1).lower())))
        for m in _PARTNER_IS.finditer(s):
            relation = relations.singular(m.group(1).lower())
            out.append(Extracted(kind="family", value=relation, name=m.group(2)))
        travel = _TRAVEL.search(s)
        if travel is not None:
            out.append(Extracted(kind="plan", value=_clip(travel.group(1))))
        parts = [p for p in _PART.split(s) if _COMMUNICATION.search(p)]
        parts = [p for p in parts if _KEPT.search(s) or not _THIS_ANSWER.search(p)]
        if parts and _WANTS.search(s):
            part = next((p for p in parts if _WANTS.search(p)), parts[0])
            said = re.sub(
                r"^(please|pls|also|and|oh|(?:can|could|would|will) you(?: please)?)\b,?\s*",
                "",
                part.strip().rstrip("?"),
                flags=re.I,
            )
            out.append(Extracted(kind="communication", value=_clip(said)))
    return out


def _items(said: str) -> list[str]:
    """`"cats and dogs"` → `["cats", "dogs"]`."""
    return [v.strip() for v in _LIST.split(said) if v and v.strip()]


_LISTED = frozenset(OPPOSITE)
"""Tastes: one said by a fixed phrasing leaves the model's others of its kind standing."""


def merge(rules: list[Extracted], model: list[Extracted]) -> list[Extracted]:
    """The rules' facts, then the model's, less those of a kind the rules already
    read (a pet's or relative's name, home, work, name, diet restriction, allergy
    and way of answering are the rules' when they have them) and those whose value
    a rule read as another kind ("flying to Tokyo next month" is a plan, not a stay)."""
    tastes = {
        match_key(f.value): f.kind.replace("dislike", "like")
        for f in model
        if f.kind.startswith(("food_", "drink_"))
    }
    rules = [  # "big fan of sourdough": the model's food or drink is the surer list
        f.model_copy(update={"kind": tastes[match_key(f.value)]})
        if f.kind == "like" and match_key(f.value) in tastes
        else f
        for f in rules
    ]
    ruled = {f.kind for f in rules} - _LISTED
    values = {match_key(f.value) for f in rules}
    names = {match_key(f.name) for f in rules if f.name}  # a name the rules placed
    return [
        *rules,
        *(
            f
            for f in model
            if f.kind not in ruled
            and match_key(f.value) not in values
            and not ({match_key(f.value), match_key(f.name)} & names)
        ),
    ]
