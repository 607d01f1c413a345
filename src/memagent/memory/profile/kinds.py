"""What kind of fact a value is, as the statement's words say.

The model names a kind for each value it copies; a 1.5B model often names the
wrong one ("can't stand cilantro" as an allergy, a dog's name as a like, a diet
as a condition). Where the words decide it, Python does (`fix_kind`): "allergic"
must be said for an allergy; a drink is a drink; "no pork for me" is a diet rule,
not a taste; a like said with "hate" is a dislike; a name after "my dog is
called" is the dog's; a routine with an appointment in it is a plan, one said
with a weekday is weekly. Whose fact it is, is `subjects`' to say.
"""

from __future__ import annotations

import re

from memagent.memory.profile import relations
from memagent.memory.profile.drinks import DRINKING, DRINKS, drink_named
from memagent.memory.profile.events import episodic
from memagent.memory.profile.health import (
    ALLERGY_WORDS,
    DIET_CONDITION,
    DOSE,
    FEELING,
    GENERIC,
    PASSING_ILLNESS,
    PROCEDURE,
    dosed,
    health_said,
    joke_allergy,
)
from memagent.memory.profile.jobs import A_SKILL, JOB_WORD, JOBS, someone_in_the_job
from memagent.memory.profile.languages import answered_in, is_spoken
from memagent.memory.profile.negation import disliked, disliked_after, ended, subclause
from memagent.memory.profile.occasions import (
    AHEAD,
    ASKED_OF_ME,
    CLOCK,
    EVENT,
    EVERY,
    HABIT,
    ONE_WEEKEND,
    PAST,
    REGULAR,
    SHIFTS,
    UNTIL,
    WEEKLY,
    a_day_besides_its_end,
    day_said,
    habitual,
    one_day,
    when_only,
)
from memagent.memory.profile.stances import DISLIKED, LIKED, LIKING_WORDS
from memagent.memory.profile.subjects import OTHER_PERSON, own_name_said

OPPOSITE = {
    "food_like": "food_dislike",
    "food_dislike": "food_like",
    "drink_like": "drink_dislike",
    "drink_dislike": "drink_like",
    "like": "dislike",
    "dislike": "like",
}

_DIET = re.compile(
    r"\b(vegan(?:ism)?|vegetarian(?:ism)?|pescatarian(?:ism)?|pescetarian|flexitarian|"
    r"plant[- ]based|halal|kosher|keto|paleo|"
    r"gluten[- ]free|dairy[- ]free|whole ?30|atkins|fasting|detox|cleanse|liquid diet|"
    r"(?:low[- ])?fodmap|low[- ](?:carb|sugar|salt|sodium|fat))\b",
    re.IGNORECASE,
)
_DIET_FOOD = re.compile(
    rf"(?:{_DIET.pattern})\s+(?!diet\b|food\b|eating\b|lifestyle\b|cooking\b|now\b|for\b|since\b|"
    r"until\b|till\b|and\b|or\b|at\b|mostly\b|these\b|again\b)[a-z]",
    re.IGNORECASE,
)
"""'vegan sausage roll', 'gluten free brownies': a food that keeps a diet, liked as a food."""
_SETTLED = re.compile(
    r"\b(moved(?! on\b)|relocated|settled|live|living|lives|"
    r"moving house is (?:finally )?(?:done|over|finished)|got the keys|keys to (?:the|our|my) "
    r"(?:new )?(?:house|flat|place|home))\b(?! out of)",
    re.IGNORECASE,
)
"""Where one lives ("We moved out of Leeds"); "moved on to Hoi An" is travel, a stay."""
_STAY_END = re.compile(
    r"\b(until|till|til|through|for (?:the )?(?:next )?\w+ (?:days?|weeks?|nights?)|"
    r"this week(?:end)?|today|tonight)\b",
    re.IGNORECASE,
)
_MEANWHILE = re.compile(
    r"\bwhile (?:our|my|the) (?:[\w-]+ ){0,2}(?:is|are|gets?|being)\b|\bfor the foreseeable\b|"
    r"\btemporarily\b|\bfor (?:my|a|the) (?:year|semester|term|summer) abroad\b",
    re.IGNORECASE,
)
"""A stay for as long as something lasts ("while our house gets renovated"), not a home."""
_HOW_TO_ANSWER = re.compile(
    r"\b(answer\w*|repl\w*|respon\w*|explain\w*|explanations?|talk\w*|tell|writ\w*|"
    r"call me|address me|emojis?|bullet|short|brief|concise|detail\w*|format\w*|tone|formal|"
    r"casual|sources?|language|pronouns?|to the point|summar\w*|jargon|examples?|"
    r"english|spanish|french|german|italian|portuguese|chinese|japanese|units?|metric|imperial|"
    r"celsius|fahrenheit|spelling|24-hour|12-hour|blunt|direct|honest|sugar-?coat\w*|"
    r"voice notes?|texts?|phone calls?|emails?|code blocks?)\b",
    re.IGNORECASE,
)
"""How the user wants to be answered is said in these words; a "communication"
fact without any of them is not one."""
_TIME_WORD = re.compile(
    r"^\W*(?:mon|tues|wednes|thurs|fri|satur|sun)days?\W*$|^\W*(?:mornings?|evenings?|nights?|"
    r"weekends?|january|february|march|april|june|july|august|september|october|november|"
    r"december|now|today|tonight|tomorrow|(?:every |a |per |each |this |next )?(?:day|week|"
    r"month|year|weekday)s?)\W*$",
    re.IGNORECASE,
)
_TIMED_KINDS = ("routine", "plan", "whereabouts", "like", "dislike")
_TASTES = (*LIKED, *DISLIKED)
_BARE_QUALITY = re.compile(
    r"(?:black|white|green|red|hot|cold|iced|warm|strong|weak|plain|fresh|dark|light)", re.I
)
"""A colour, warmth or strength said alone is how a thing is had, not a thing."""
"""Kinds a day or time of day may be ("I hate mornings" is a taste)."""
_STATUS = re.compile(
    r"(?:happily |newly )?(?:single|married|divorced|engaged|separated|widowed)|"
    r"(?:a )?(?:muslim|christian|catholic|jewish|hindu|sikh|buddhist|atheist)",
    re.I,
)
_ONCE = re.compile(
    r"\btried\b[^.]*\bonce\b|\bnever again\b|"
    r"\b(?:tried|had|ate|drank|did)\b[^.]*\bfor the first time\b"
    r"(?![^.]*\b(?:obsessed|love|loving|hooked|addicted|favou?rite|every|always|now)\b)",
    re.IGNORECASE,
)
"""'tried hot yoga once', 'tried a vegan sausage roll for the first time today': a try."""
_NO_PLACE = re.compile(
    r"\W*(?:with )?(?:us|me|home|here|there|ours|mine)\W*|"
    r"\W*(?:the )?(?:gp|doctor'?s?|dentist'?s?|vet'?s?|chemist'?s?|pharmacy|physio)\W*",
    re.IGNORECASE,
)
_MOVING_TO = re.compile(r"\b(?:moving|relocating|move|relocate) (?:to|into)\b", re.IGNORECASE)
_RESTRICTS = re.compile(
    r"\b(no|not|don'?t|do not|never|avoid\w*|without|cut(ting)? out|off|free|allergic|strict|"
    r"gave up|given up|giving up|quit(?:ting)?|"
    r"intoleran\w*|can'?t|cannot|won'?t|skip\w*|diet|restrict\w*|limit\w*|low|under)\b",
    re.IGNORECASE,
)
"""Words that make a food a rule kept (a diet restriction) rather than a taste."""
_LIKING = re.compile(
    rf"\b(?:{LIKING_WORDS}|(?:eat|drink)ing\b|(?:my|our) (?:thing|weakness|jam)\b|"
    r"\bnow\b(?! (?:my|I|I'm|it|it's|we|he|she|they|the|that|this)\b))",
    re.IGNORECASE,
)
"""Words that say a taste or a change to one: without one, a thing met in an event or
a passing moment
("Ordered Thai food for dinner tonight", "I need to buy milk") is not liked."""
NAME_AFTER = re.compile(
    r"\b(?:called|named|name is|name's)\s+([A-Z][\w'-]*)|"
    r"\b(?:[Mm]y|[Oo]ur)\s+(\w+)\s+([A-Z][a-z][\w'-]*)\b"
)


_MOOD = re.compile(
    r"(?:so |very |really |a bit |kinda )?(?:bored|tired|exhausted|stressed|anxious|sad|happy|"
    r"sick|stable|fine|ok|okay|busy|hungover|sleepy|grumpy|cranky|nervous|excited|"
    r"overwhelmed|lonely|upset|angry|annoyed|frustrated|worried)",
    re.IGNORECASE,
)
_SPORT = re.compile(
    r"\b(?:run\w*|jog\w*|swim\w*|laps?|cycl\w*|bik\w*|spin\w*|yoga|pilates|gym|lift\w*|"
    r"weights?|climb\w*|boulder\w*|hik\w*|walk\w*|tennis|football|soccer|basketball|rugby|"
    r"cricket|golf|ski\w*|snowboard\w*|surf\w*|row\w*|crossfit|hiit|danc\w*|box\w*|"
    r"martial arts|karate|judo|jiu[- ]?jitsu|bjj|squash|badminton|volleyball|netball|hockey|"
    r"skat\w*|paddl\w*|kayak\w*|canoe\w*|marathons?|\d+k|triathlons?|workouts?|work out|"
    r"working out|exercis\w*|stretch\w*|sports?|train\w*|sprint\w*|cardio|zumba|barre|"
    r"aerobics|spinning|parkrun|fencing|archery|sailing|horse riding|riding|padel|\w*athlete|"
    r"runner|swimmer|cyclist|climber|hiker|surfer|skier|boxer|dancer|yogi|meditat\w*|tai chi|"
    r"qigong|breathwork|mobility|physio\w*|rehab|kickbox\w*|muay thai|taekwondo|kung fu|"
    r"capoeira|krav maga|aikido|wrestl\w*|weightlift\w*|powerlift\w*|calisthenics|"
    r"pickleball|lacrosse|baseball|softball|water polo|orienteering)\b",
    re.IGNORECASE,
)
"""Words of exercise: an "exercise" read with none of them is a pastime or nothing."""
_FIGURE = re.compile(
    r"\b(?:could|can) eat a horse\b|\bdying (?:for|of|to)\b[\w ]{0,20}|\bover the moon\b|"
    r"\bunder the weather\b|\bpiece of cake\b|\bwalk in the park\b|\bhit the (?:sack|hay)\b|"
    r"\bsick (?:and|&) tired\b|\bbite the bullet\b|\bspill(?:ed)? the beans\b|\bon cloud nine\b|"
    r"\bcosts? an arm and a leg\b|\braining cats and dogs\b|\blet the cat out of the bag\b|"
    r"\bhead over heels\b|\beat (?:my|his|her|their) words\b|\bgo(?:ing|ne)? bananas\b|"
    r"\bin a pickle\b|\bsour grapes\b|\bcool as a cucumber\b|\bfull of beans\b|"
    r"\bbread and butter\b|\bnot (?:really |exactly |quite )?(?:my|his|her|their) cup of tea\b|"
    r"\bnuts about\b|\bwalking on eggshells\b|\bwalk on eggshells\b|"
    r"\bdrives? me (?:up the wall|nuts|crazy|mad|bananas)\b|\bmy idea of hell\b|"
    r"\b(?:legs|arms|brain) (?:are|is|feel|feels) (?:like )?jelly\b|\bcould sleep for a week\b|"
    r"\bkilling me\b|\bkills me\b|\bdead tired\b|\bcouch potato\b|\bhot potato\b|"
    r"\bcherry on top\b|\bnot rocket science\b|\bsleep like a log\b|\bcold turkey\b|"
    r"\blike clockwork\b",
    re.IGNORECASE,
)
"""Idioms: their words say nothing of what they name ("I could eat a horse", "this heat is
killing me", "it's not rocket science"); a value read inside one is no fact."""
_PASSING = re.compile(
    r"\b(?:could eat a horse|dying (?:for|of)|killing me|kills me|over the moon|on cloud nine|"
    r"under the weather|sick (?:and|&) tired|dead tired|could sleep for a week|kicking in)\b|"
    r"\b(?:crav\w+|in the mood for|fancy(?:ing)?|could (?:really )?(?:go for|use|do with)|"
    r"feel(?:ing)? like (?:having|eating|drinking|a|an|some)|hungry for|starving for|"
    r"want(?:ing)? (?:a|an|some) \w+ (?:right now|now|tonight|today))\b",
    re.IGNORECASE,
)
"""A want or a feeling of the moment ("craving chocolate", "dying for a coffee", "in the
mood for pizza"): not a taste that lasts."""
_MOMENT = re.compile(
    r"\b(?:right now|rn|at the moment|atm|today|tonight|this (?:morning|afternoon|evening)|"
    r"just now)\b",
    re.IGNORECASE,
)
_SARCASM = re.compile(
    r"\b(?:[Jj]ust|[Ss]o|[Tt]otally|[Rr]eally) (?:LOVE|LOVES|ADORE|ENJOY)\b|"
    r"(?i:\b(?:oh|yeah|wow),? (?:great|wonderful|fantastic|perfect|"
    r"brilliant|joy|lovely|amazing)\b|\byeah right\b|(?:^|\s)/s\b|\bsaid no one\b|"
    r"\blove that for me\b|\bdon'?t you just love\b|\bnothing (?:I )?love more than\b|"
    r"\b(?:just |really |absolutely )?(?:love|adore|enjoy)s? (?:sitting in traffic|being stuck|"
    r"being ignored|waiting (?:in|for|around)|queu\w+|delays?|mondays|paperwork|"
    r"doing (?:my )?taxes|getting up at))",
)
"""Praise said to mean its opposite ("I just LOVE mondays", "Oh great, another Monday",
"I just love sitting in traffic"): no taste at all."""


_FOR_A_SPAN = re.compile(
    r"\bfor (?:a|an|one|two|three|four|five|six|seven|a few|\d+) "
    r"(?:days?|weeks?|nights?|months?)\b",
    re.IGNORECASE,
)
_GOING_ON = re.compile(r"\b(?:now|these days|currently|at the moment|atm)\b", re.IGNORECASE)
"""'so I'm job hunting now': what goes on, not a plan on the day said beside it."""


def figurative(value: str, clause: str) -> bool:
    """Every word of `value` lies inside an idiom of `clause` (`_FIGURE`)."""
    want = {w.lower() for w in re.findall(r"[\w'-]+", value)}
    for m in _FIGURE.finditer(clause):
        inside = {w.lower() for w in re.findall(r"[\w'-]+", m.group(0))}
        if want and want <= inside:
            return True
    return False


def passing_taste(value: str, clause: str) -> bool:
    """A like read in a want or a mood of the moment, or in sarcasm, is no taste: a
    craving ("craving chocolate right now"), a like said of now alone ("loving this song
    right now"), or praise meant as its opposite (`_SARCASM`)."""
    part = subclause(value, clause)
    if _SARCASM.search(clause) or _PASSING.search(part):
        return True
    return bool(_MOMENT.search(part)) and not HABIT.search(part)


def liking_said(value: str, clause: str) -> bool:
    """The part of `clause` that says `value` has a word of liking in it ("love", "my
    favourite", "into")."""
    return bool(_LIKING.search(subclause(value, clause)))


_AVOIDED = re.compile(
    r"\b(?:avoid\w*|can'?t|cannot|don'?t|do not|never|no|not|without|free|off|cut out|"
    r"upsets?|bloat\w*|sick|ill|react\w*|sensitiv\w*|gives? me)\b",
    re.IGNORECASE,
)
"""Words that say a food is kept away from, short of an allergy ("I avoid gluten",
"dairy makes me sick"): what a fact the model read as an allergy needs to be kept
as a dislike when "allergic" is not said."""


def timed_apart(kind: str, value: str, clause: str) -> bool:
    """Whether the part of `clause` that says a habit or plan `value` says its own
    when ("we talk every day", "the interview is on Friday"): read beside another
    fact ("I'm a software engineer at a startup, mostly backend stuff"), a habit or
    plan without one is a remark on that fact, and its line (the whole sentence)
    would only say the other fact again."""
    if SHIFTS.fullmatch(value.strip()):
        return True  # "I work nights at the Royal": the pattern of the work is its own habit
    if _TIME_WORD.match(value):
        return False  # "on a liquid diet till Monday": the other fact's time, not a plan
    sub = subclause(value, clause)
    if kind == "plan":
        return bool(EVENT.search(sub) or AHEAD.search(sub))
    return bool(REGULAR.search(sub) or CLOCK.search(sub))


_USED_TO = re.compile(r"\bused to\b|\bno longer\b|\bany ?more\b", re.IGNORECASE)


_AT_A_TIME = re.compile(
    r"\bat \d|\b\d{1,2}(?::\d\d)?\s*(?:am|pm)\b|\b\d{1,2}:\d\d\b|\b(?:before|after) (?:work|school|"
    r"breakfast|dinner|bed)\b|\b(?:every|each) (?:morning|evening|night|day|lunchtime)\b|"
    r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b|\bweekends?\b",
    re.IGNORECASE,
)
"""When a habit happens (a clock time, a day, every morning): an exercise said so is a
routine; one said only with how often ("a couple times a week", "most mornings") is not."""
_MISFILED = ("condition", "exercise", "routine", "like")


def _asked_for(value: str) -> re.Pattern[str]:
    """A value asked about ("soup ideas welcome", "pasta recipes?", "a recipe for chickpea
    curry", "how to make banana bread"), not a taste."""
    v = re.escape(value)
    return re.compile(
        rf"\b{v}\s+(?:ideas|suggestions|recs|recommendations|recipes|tips|"
        r"options)\b(?!\s+(?:is|are)\b)|"
        r"\b(?:recipes?|ideas?|suggestions?|recs|something|a plan|a menu|meal plan|what to (?:make|"
        r"cook|bake|do)|how (?:do i |to |can i )?(?:make|cook|bake|prep)|substitutes?|swaps?)\s+"
        rf"(?:for|with|using|from|instead of)?\s*(?:(?:a|an|the|some|my|our|this|that)\s+)?"
        rf"(?:[\w-]+\s+){{0,2}}{v}\b",
        re.IGNORECASE,
    )


_AS_A_JOB = re.compile(
    rf"(?:an? )?(?:(?:first|second|third|final|\d+(?:st|nd|rd|th)) year )?(?:[\w-]+ )?"
    rf"(?:{JOBS})s?(?: (?:at|for|in|with) [\w' -]+)?",
    re.IGNORECASE,
)
"""'second year physio student at Cardiff uni': a job with where it is done."""


def _refiled(kind: str, value: str, clause: str) -> str | None:
    """The kind a value's own words plainly say, where the model read it as a kind it is
    not: a job ("graphic designer" read as an exercise), an event on a day ahead ("job
    interview next Tuesday" read as a condition), a race on a date ("MARATHON ON OCT 4TH")."""
    if (kind in ("exercise", "condition") and JOB_WORD.fullmatch(value.strip())) or (
        kind in ("exercise", "condition", "routine", "like")
        and _AS_A_JOB.fullmatch(value.strip())
        and len(value.split()) > 2  # "dentist" alone is more often the appointment
    ):
        return None if someone_in_the_job(value, clause) else "work"
    ahead = day_said(clause) and not PAST.search(clause) and not REGULAR.search(clause)
    if kind in _MISFILED and EVENT.search(value) and ahead:
        return "plan"
    if kind == "exercise" and ahead and not habitual(clause):
        return "plan" if re.search(r"\b(?:marathon|race|triathlon|\d+k)\b", value, re.I) else None
    return None


_CHOSEN = re.compile(r"\b(?:we'll|I'll|we will|I will|let's) (?:do|have|go with|get|make)\b", re.I)
"""A choice for one meal ("ok we'll do the roast beef"), not a taste."""
_KITCHEN_WORK = re.compile(
    r"(?:home )?(?:cooking|baking|meal prep(?:ping)?|(?:the )?washing up|doing the dishes|"
    r"(?:food |grocery )?shopping|the food shop)",
    re.IGNORECASE,
)


_LACKED = re.compile(
    r"\b(?:there'?s|there is|there are|we'?ve got|we have|i'?ve got|have got|has|had)\s*$", re.I
)
"""What comes before "no X" when X is missing, not refused ("there's no microwave")."""


_DONT_EAT = r"\b(?:I|we)\s+(?:don'?t|do not|never)\s+(?:eat|drink|touch)\s+"
_OF_TASTE = re.compile(
    r"\b(?:hate\w*|can'?t stand|disgust\w*|gross|never liked|taste\w*|texture|yuck|vile|rank|"
    r"anymore|any more|no longer|like|liked|fan)\b",
    re.IGNORECASE,
)
"""Words that make "I don't eat X" a taste or an ending, not a rule kept."""
_VISIT = re.compile(r"\b(?:today|tonight|this (?:morning|afternoon|evening))\b", re.I)
_STAY = re.compile(r"\b(?:stay\w*|till|until|til|sleeping|the night|overnight|for the)\b", re.I)


def fix_kind(kind: str, value: str, clause: str) -> str | None:
    """The kind the statement's words say a fact the model read as `kind` is (None:
    no fact at all)."""
    if GENERIC.match(value) and kind in ("condition", "medication", "allergy"):
        return None
    if _TIME_WORD.match(value) and kind not in _TIMED_KINDS:
        return None  # "allergic to Mondays, haha": a day is no thing one has or eats
    if kind in ("whereabouts", "home") and re.fullmatch(
        r"\W*(?:the )?\d{1,2}(?:st|nd|rd|th)\W*", value
    ):
        return None  # "moved to the 28th": a day, no place
    if kind == "whereabouts" and (_TIME_WORD.match(value) or _NO_PLACE.fullmatch(value)):
        return None  # "staying till Sunday now", "staying with us": no place named
    if kind == "whereabouts" and re.search(r"\bnever (?:been|gone|lived)\b", clause, re.I):
        return None  # "never been to texas"
    if kind == "whereabouts" and "," in value:
        return None  # "sofa, blanket, telly. that's the plan": a list, no place
    if kind in ("routine", "plan") and _TIME_WORD.match(value) and len(clause.split()) <= 2:
        return None  # "ugh. mondays.": a day said alone is no habit
    if kind == "exercise" and when_only(value):
        return None  # "usually mon tue wed": a when, no workout named
    if kind == "work" and (
        re.fullmatch(
            r"\W*(?:(?:full|part)[- ]?time|shifts?|shift work|nights|days|from home|(?:working )?"
            r"remote(?:ly)?|wfh|work \w+(?: \w+)?)\W*",
            value,
            re.I,
        )
        or A_SKILL.fullmatch(value.strip())
    ):
        return None  # "we both work full time", "work emergency", "a decent cook": not the job
    if kind in ("exercise", "like", "routine", "plan") and re.search(
        rf"\bno (?!more\b|longer\b)(?:[\w-]+ ){{0,2}}{re.escape(value)}(?:e?s)?\b", clause, re.I
    ):
        return None  # "no climbing for me", "no in-person workshops": not done, for now
    if kind == "exercise" and len(value.split()) > 4:
        return None  # "stuck on a train outside reading for 40 mins": a clause, no workout
    last = value.split()[-1].lower() if value.split() else ""
    if kind == "whereabouts" and relations.singular(last) in relations.RELATIVES:
        return None  # "Priya's sister is staying with us": a person, not a place
    if figurative(value, clause):
        return None  # "I could eat a horse": no horse
    if re.search(rf"\b(?:nearly|almost)\s+(?:[\w']+\s+){{0,3}}{re.escape(value)}\b", clause, re.I):
        return None  # "the GP nearly prescribed me amoxicillin": it did not happen
    if kind == "whereabouts" and re.search(
        rf"\b(?:stuff|things|questions|emails?|messages?|queries|anything)\s+(?:to|for)\s+"
        rf"{re.escape(value)}\b",
        clause,
        re.I,
    ):
        return None  # "urgent stuff to Nadia": who to send it to, no place
    if kind == "whereabouts" and re.fullmatch(r"\W*[a-z]+ly\W*|\W*[A-Z]+LY\W*", value):
        return None  # "coriander was in LITERALLY everything": a word of emphasis, no place
    if (
        kind == "whereabouts"
        and _VISIT.search(clause)
        and not _STAY.search(clause)
        and re.search(
            rf"\bat\s+(?:the\s+|my\s+)?{re.escape(value.removeprefix('the '))}", clause, re.I
        )
    ):
        return None  # "said goodbye to Whiskers at the vet today": a visit, not a stay
    if kind == "condition" and _PASSING.search(subclause(value, clause)):
        return None  # "My head is killing me": a moment, not a condition
    if kind == "condition" and PASSING_ILLNESS.search(value):
        return None  # "I've got a stinking cold": a week's illness, not a condition
    if kind == "name" and not own_name_said(value, clause):
        return None  # "I'm basically a vampire", "my coworker Dan": no own name said as one
    kind = _refiled(kind, value, clause) or kind
    if kind == "language" and answered_in(value, clause):
        kind = "communication"  # "pls explain in simple english", "use code blocks"
    if kind == "language" and not is_spoken(value):  # "mostly go and postgres": none spoken
        if not _HOW_TO_ANSWER.search(clause):
            return None
        kind = "communication"  # "My pronouns are they/them"
    if kind == "pet" and re.search(r"\b(?:baby|boy|girl|son|daughter|newborn)\b", value, re.I):
        kind = "family"  # "baby boy arrived! his name is Noah": no pet
    if kind in ("diet", "allergy") and DIET_CONDITION.fullmatch(value.strip()):
        return "condition"  # "As a coeliac I have to be careful with bread"
    if kind == "allergy" and joke_allergy(value, clause):
        return None  # "allergic to meetings lol", "allergic to paperwork haha"
    if kind == "allergy" and not ALLERGY_WORDS.search(clause):
        if re.search(r"intoleran|celiac|coeliac", clause, re.I):
            kind = "condition"
        elif disliked(value, clause) or _AVOIDED.search(subclause(value, clause)):
            kind = "food_dislike"
        else:
            return None  # "lol yes exactly" forced into an allergy to "lol": nothing said
    if kind in ("condition", "like", "food_like", "allergy", "exercise", "routine", "plan") and (
        _DIET.search(value) and not (kind in ("like", "food_like") and _DIET_FOOD.search(value))
    ):
        kind = "diet"
    if kind == "condition" and dosed(value, clause):
        kind = "medication"  # "switched me from sertraline to fluoxetine"
    if (
        kind in _TASTES
        and _BARE_QUALITY.fullmatch(value.strip())
        and not re.search(rf"\b(?:glass|bottle|carafe) of {re.escape(value)}\b", clause, re.I)
    ):
        return None  # "coffee is life. black, no sugar": how it is had, not a taste of its own
    if kind in ("condition", "like", "food_like", "drink_like") and _MOOD.fullmatch(value.strip()):
        return None  # "bored", "stable", "sick": how one feels, not a condition or a taste
    if kind == "condition" and _STATUS.fullmatch(value.strip()):
        return None  # "so I'm single now": how one lives, not a health condition
    if kind == "medication" and DOSE.fullmatch(value.strip()):
        return None  # "Takes 50 mg": a dose, not the medicine
    if kind in ("condition", "medication") and PROCEDURE.search(value):
        return "plan" if AHEAD.search(clause) else None  # "shoulder surgery on the 18th"
    if kind == "condition" and (
        re.search(r"\ballergic\b", value, re.I) or re.fullmatch(r"[a-z]+ing", value.strip(), re.I)
    ):
        return None  # "Epipen-level allergic" (the allergy is read as one), "wheezing": a symptom
    if kind == "condition" and re.search(
        r"\b(?:apprenticeship|course|degree|diploma|training|qualification|exams?|placement|"
        r"internship)$",
        value.strip(),
        re.I,
    ):
        return None  # "passed my nursing apprenticeship": a course, not a condition
    if kind in ("condition", "like", "exercise") and FEELING.match(value):
        return None  # "dreading the secret santa": a feeling about an event, not a condition
    if kind in ("like", "exercise", "food_like") and re.search(
        rf"\b{re.escape(value)}\s+(?:{'|'.join(relations.ANIMALS)})\b", clause, re.I
    ):
        return None  # "a rescue greyhound": what the pet is, not a liking
    if kind == "condition" and not health_said(value, clause):
        return None  # "I'm a wreck", "an insurance company", "got laid off": no condition
    if (
        kind in ("routine", "plan")
        and _STAY_END.search(clause)
        and re.search(
            rf"\b(?:I'?m|I am|we'?re|we are|staying|stuck) (?:in|at) (?:the )?{re.escape(value)}\b",
            clause,
            re.I,
        )
    ):
        kind = "whereabouts"  # "I'm in hospital until Monday": a stay
    timed = _FOR_A_SPAN.sub(" ", clause)  # "off to tenerife on the 14th for a week"
    dated = one_day(timed) and not (REGULAR.search(timed) or PAST.search(timed))
    if kind == "routine" and (
        EVENT.search(clause)
        or one_day(subclause(value, clause))
        or (dated and not _GOING_ON.search(subclause(value, clause)))
    ):
        kind = "plan"  # "dentist on friday at 3": one day, not every Friday
    if (
        kind == "plan"
        and UNTIL.search(clause)
        and not EVENT.search(value)
        and not a_day_besides_its_end(clause)
    ):
        return None  # "on crutches till thursday": a state with its end, not an event
    if kind == "whereabouts" and re.search(r"\bwants? me (?:to be )?(?:in|at|over in)\b", clause):
        return None  # "manager wants me in Bangalore office": asked of the writer, no stay yet
    if kind == "plan" and ASKED_OF_ME.search(clause):
        return None  # "my manager wants me to pick up a shift sunday": asked, not planned
    if kind in ("plan", "whereabouts") and re.search(
        rf"\b(?:relocat\w+|mov\w+|emigrat\w+) (?:to|into) {re.escape(value)}\b.{{0,30}}"
        r"\b(?:for good|permanently|for keeps)\b",
        clause,
        re.I,
    ):
        return "home"  # "I'm relocating to Singapore for good": a home, now or soon
    if kind == "plan" and not day_said(clause):
        return None  # "Stuck in a meeting", "dentist appointment at three": no day ahead
    if kind == "plan" and episodic(clause) and not AHEAD.search(clause):
        return None  # "Our flight got delayed by three hours": past, nothing ahead
    if kind == "routine" and SHIFTS.fullmatch(value.strip()) and not _USED_TO.search(clause):
        return "routine"  # "moved me onto lates now": a pattern of work, however it is said
    if kind == "routine" and not habitual(clause):
        if not AHEAD.search(subclause(value, clause)) or PAST.search(clause):
            return None  # "I flew back home yesterday": no habit, nothing ahead
        if not day_said(clause):
            return None  # "first holiday in 3 yrs": no habit, and no day ahead for a plan
        kind = "plan"  # "We're expecting our first baby in October"
    if kind == "routine" and ONE_WEEKEND.search(clause) and not EVERY.search(clause):
        kind = "plan"  # "taking the kids to a caravan in skegness this weekend": once
    if kind == "whereabouts" and _MOVING_TO.search(clause) and AHEAD.search(clause):
        return "plan"  # "we're moving to Sheffield next month": a move ahead, not a stay now
    if kind == "whereabouts" and _SETTLED.search(clause) and not _STAY_END.search(clause):
        kind = "whereabouts" if _MEANWHILE.search(clause) else "home"  # "moved to York"
    if kind == "home" and _MEANWHILE.search(clause):
        kind = "whereabouts"  # "living with my in-laws in Leeds while our house gets redone"
    if kind == "communication" and (
        not _HOW_TO_ANSWER.search(clause)
        or re.fullmatch(r"\W*(?:hi|hiya|hey|hello|yo)\W*", value, re.I)
        or re.search(r"\b(?:this|that) (?:once|one time)\b|\bfor this (?:one|bit)\b", clause, re.I)
    ):
        return None  # "I agree with you on that" says nothing of how to answer
    if kind in ("exercise", "routine") and disliked(value, clause):
        kind = "dislike"  # "I hate long drives": a dislike, not a workout
    if kind in ("exercise", "like", "food_like", "drink_like") and _ONCE.search(clause):
        return None  # "tried hot yoga once, never again": a try, not a habit or taste
    if kind == "exercise" and not _SPORT.search(value):
        if not (_LIKING.search(clause) or (habitual(clause) and REGULAR.search(clause))):
            return None  # "exercise: entertain", "exercise: work"
        if habitual(clause) and _AT_A_TIME.search(clause) and not _LIKING.search(clause):
            kind = "routine"  # "I sing in a choir on Tuesdays": with its day, a habit
        else:
            kind = "like"  # "I play chess online most evenings": a pastime
    elif kind == "exercise" and habitual(clause) and _AT_A_TIME.search(clause):
        kind = "routine"  # "I walk the dog at 7 every morning": a habit, said with its time
    if kind in ("like", "dislike") and re.search(
        r"\b(?:food|cuisine|dishes|cooking)$", value, re.I
    ):
        kind = "food_" + kind  # "Big fan of Ethiopian food": a taste in food
    if kind in ("food_like", "food_dislike") and _KITCHEN_WORK.fullmatch(value.strip()):
        kind = kind.removeprefix("food_")  # "I hate cooking": a chore, not a taste in food
    if kind in ("food_like", "food_dislike", "like", "dislike") and DRINKS.search(value):
        kind = "drink_" + kind.removeprefix("food_")
    if kind.startswith("drink_") and not DRINKING.search(clause) and not drink_named(value, clause):
        kind = "food_" + kind.removeprefix("drink_")  # licorice is not a drink
    if kind in ("food_like", "like", "condition") and re.search(
        rf"\b{re.escape(value)}\s+diet\b", clause, re.I
    ):
        kind = "diet"  # "a plant-based diet"
    if kind == "diet" and re.fullmatch(
        r"(?!fasting|juicing|snacking)[a-z]+ing", value.strip(), re.I
    ):
        return None  # "I've given up climbing for good": an activity, no diet
    if (
        kind == "diet"
        and not _DIET.search(value)
        and not _RESTRICTS.search(subclause(value, clause))
    ):
        if not _LIKING.search(clause):
            return None  # "carb counts actually matter to me": neither rule nor taste
        kind = "food_like"  # "I started eating chicken again": a taste, not a rule kept
    if kind in ("food_dislike", "drink_dislike", "food_like", "drink_like") and (
        no := re.search(rf"\bno (?!more\b|longer\b)(\w+ ){{0,2}}{re.escape(value)}\b", clause, re.I)
    ):
        if _LACKED.search(clause[: no.start()]):
            return None  # "theres no microwave here": a thing missing, no rule or taste
        kind = "diet"  # "no pork for me": a rule kept, not a taste
    if (
        kind in ("food_dislike", "drink_dislike")
        and re.search(rf"{_DONT_EAT}(?:[\w-]+ )?{re.escape(value)}", clause, re.I)
        and not _OF_TASTE.search(clause)
    ):
        kind = "diet"  # "I don't eat pork (religious thing)": a rule kept, not a taste
    liked = kind in ("food_like", "drink_like", "like")
    once = episodic(clause) or episodic(subclause(value, clause))  # "had a fry up, now I'm…"
    if liked and (episodic(clause) or _CHOSEN.search(clause)) and not _LIKING.search(clause):
        return None  # "Ordered Thai food tonight", "we'll do the roast beef": not a taste
    if (
        kind in OPPOSITE
        and not liked
        and once
        and not (disliked(value, clause) or disliked_after(value, clause))
    ):
        return None  # "I once ate a whole durian on a dare": had once, no dislike said
    if liked and passing_taste(value, clause):
        return None  # "craving chocolate right now", "I just LOVE mondays"
    if liked and (_asked_for(value).search(clause) or re.match(r"(?:no|without)\b", value, re.I)):
        return None  # "soup ideas welcome": asked for, not liked; "no sugar" is no taste
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
    if kind == "routine" and WEEKLY.search(clause):
        return "routine_weekly"
    return kind
