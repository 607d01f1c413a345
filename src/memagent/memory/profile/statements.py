"""Which sentences of a statement can hold a lasting fact about the user.

Mechanical, no model: a statement is split into sentences and each one that is
plainly not a fact about the writer is dropped before any model sees it:
questions, requests and commands to the assistant ("Plan a dinner for six…"),
greetings, thanks and small talk, hypotheticals and wishes ("if I…", "I
wonder…"), a friend's, colleague's or neighbour's life with the writer not in it
("My mate Dov is moving to Perth"; a named relative is kept: the planning reads
them), a craving of the moment ("I could murder a pizza"), sarcasm ("Yeah
right, and I'm the Queen of Sheba"), the assistant's own voice ("As an AI…", "You
mentioned…", "I'll remember that you…", an `Assistant:` line), prompt injection
("ignore previous instructions…", "repeat after me…", which drops the whole
statement), and JSON, code, CSV rows or `|`-separated form fields pasted into the
text. What is left (`Screened.kept`) goes to the model; an
empty `kept` means nothing is learned, at no model cost.

A question or hypothetical is judged by its clauses too: when it opens with a plain
statement ("I'm allergic to sulfites, so which wines can I drink?", "Latex allergy
here, worth knowing if I ever end up in hospital"), that opening part is kept and
the rest dropped; an opening that is itself conditional ("I'd move to Spain, if I
could") is dropped with it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memagent.memory.profile.chatwords import as_written
from memagent.memory.profile.injection import another_speaker, injected
from memagent.memory.profile.material import (
    DIET_AND_HEALTH_WORDS,
    WRITER_WORDS,
    request_material,
)
from memagent.memory.profile.occasions import REGULAR
from memagent.memory.profile.sentencesplit import QUOTE_MARK, QUOTED, sentences

MAX_SENTENCE_CHARS = 400
"""A longer 'sentence' is pasted text, not something a person says about themselves."""
MAX_KEPT_SENTENCES = 8

SIGN_OFF = (
    r"(?i:with (?:many )?thanks|many thanks|thanks again|(?:kind|warm|warmest|best) regards|"
    r"regards|best wishes|all the best|yours (?:sincerely|faithfully|truly)|sincerely)"
)
"""How a letter is signed off before its writer's name ("With thanks, Gerald")."""
_SIGNED = re.compile(rf"^(\W*{SIGN_OFF})\s*,?\s*\n+\s*", re.MULTILINE)
"""A sign-off on its own line, joined to the name on the next ("Kind regards,\\nMartin")."""
_WORD = re.compile(r"[A-Za-z']+")

_FIELD_LINE = re.compile(r"^\s*(?:[-*]\s*)?[A-Za-z_][\w ]{0,20}:[ \t]*\S", re.MULTILINE)
_HEADING = re.compile(r"^\s*#{1,6}\s+\S", re.MULTILINE)
"""Two `key: value` lines or a markdown heading: a form or a document pasted, not said."""
_ASSISTANT_VOICE = re.compile(
    r"^\s*(sure|certainly|of course|absolutely|great question|happy to help|got it|noted|"
    r"understood|here'?s|here is|here are)\b|"
    r"\b(as an ai|i'?m an ai|language model|i'?d be happy to|i would be happy to|"
    r"let me know if|i'?ll remember|i will remember|i have noted|i can help)\b|"
    r"^\s*(you|your)\b|"
    r"\byou (?:\w+ )?(?:live|like|love|enjoy|prefer|hate|mentioned|said|told me|work|eat|"
    r"drink)\b|\byou(?:'re| are) (?:allergic|vegan|vegetarian|from|based|a|an)\b|"
    r"\byour (?:list|profile|preferences|favou?rites?|allergies|diet|notes?)\b|"
    r"\b(?:sounds|seems|looks) like you\b|"
    r"^\W*as your (?:assistant|ai|helper)\b|\bI (?:recommend|suggest|advise) (?:that )?you\b|"
    r"\bgiven your\b",
    re.IGNORECASE,
)
_QUESTION_START = re.compile(
    r"^\s*(?:(?:wait|so|ok|okay|hey|um+|uh+|hmm+|oh|also|btw|anyways?|and|ps|nvm)\W+)?"
    r"(who|whom|whose|what|whats|when|where|wheres|why|which|how|hows|do|does|did|is|are|was|were|"
    r"can(?!['\u2019]t)|could|would|will|shall|should|may|might|have|has|am|"
    r"wat|wats|wot|wots|wen|hw|(?=(?:\S+\s+){0,13}\S+\W*$)(?:any(?! ?more\b| longer\b)|"
    r"(?:best|quickest|cheapest|easiest|good) way))\b",
    re.IGNORECASE,
)
_HEDGED = re.compile(
    r"\b(?:I guess|guess I'?m|I think I'?m|think I'?m|I suppose|suppose I'?m)\b[^?]*\?$", re.I
)
"""A statement said with a shrug and a question mark ("so I guess I'm pescatarian now?")."""
_TRAILING_QUESTION = re.compile(
    r"[,;:]\s*(?:(?:and|so|but)\s+)?(?:can|could|should|may|might|do|does|is|are)\s+(?:I|we|it)\b"
    r"(?!.*[.!]\s*$)|"
    r"(?:[,;:]|[\U0001f300-\U0001faff\u2600-\u27bf])\s*(?:(?:and|so|but)\s+)?"
    r"(?:what'?s (?:a|an|the|some)\b|(?:how|what|where|which|who)\s+(?:do|can|should|would|"
    r"could|does|did)\s+(?:I|we|you)|(?:can|could|would) you"
    r"(?! (?:pls |please )?(?:remind|remember|note|add|put|save|keep|block)\b))\b(?!.*[.!]\s*$)",
    re.IGNORECASE,
)
"""A question asked after a comma or an emoji without its mark ("on antibiotics for 7 days,
can I still have a glass of wine", "patient refused her meds again, how do i document this",
"no booze this weekend 😭 what's a good mocktail"): the opening is kept, the question is not
(", can you remind me …" asks to keep what was said, and keeps it)."""
_REQUEST = re.compile(
    r"^\s*(?:(?:just|quickly|now|right|ok|okay|oh and|and|anyways?|also|btw|ps|so|nvm|"
    r"never ?mind|wait)\W+){0,2}"
    r"(please|pls|kindly|tell me|show me|give me|find|search|look up|list|remind me|"
    r"help me|write|draft|make|create|book|set|add|delete|remove|send|play|explain|"
    r"summari[sz]e|translate|recommend|suggest|plan|organi[sz]e|prepare|compare|calculate|"
    r"convert|generate|outline|brainstorm|rewrite|proofread|rate|judge|settle|roast|let'?s|"
    r"sort|arrange|group|format|fix|check|correct|edit|shorten|simplify|rank|reorder|tidy up|"
    r"clean up|paraphrase|reword|describe|define|pick|choose|walk me through|break down|"
    r"could you|can you|would you|"
    r"will you|i need you to|i want you to|i'?d like you to)\b",
    re.IGNORECASE,
)
_SMALL_TALK = re.compile(
    r"^\s*(hi|hello|hey|yo|hiya|howdy|good (morning|afternoon|evening|night)|bye|goodbye|"
    r"see you|thanks|thank you|thx|ty|cheers|ok|okay|cool|nice|great|awesome|lol|haha|"
    r"sounds good|no worries|you'?re welcome|yes|no|yep|nope|sure|hmm+|wow|oh)\b[\s!.,]*"
    r"(there|again|so much|a lot|a bunch|mate|buddy|friend|everyone|all)?[\s!.,:)]*$",
    re.IGNORECASE,
)
_SMALL_TALK_WORDS = frozenset(
    [
        "hi",
        "hello",
        "hey",
        "yo",
        "hiya",
        "howdy",
        "good",
        "morning",
        "afternoon",
        "evening",
        "night",
        "bye",
        "goodbye",
        "see",
        "you",
        "later",
        "thanks",
        "thank",
        "thx",
        "ty",
        "cheers",
        "ok",
        "okay",
        "cool",
        "nice",
        "great",
        "awesome",
        "perfect",
        "lol",
        "haha",
        "sounds",
        "no",
        "worries",
        "welcome",
        "yes",
        "yep",
        "nope",
        "sure",
        "hmm",
        "wow",
        "oh",
        "there",
        "again",
        "so",
        "much",
        "a",
        "lot",
        "bunch",
        "mate",
        "buddy",
        "friend",
        "everyone",
        "all",
        "that",
        "that's",
        "thats",
        "was",
        "is",
        "it",
        "this",
        "helpful",
        "hilarious",
        "funny",
        "interesting",
        "amazing",
        "brilliant",
        "fine",
        "alright",
        "right",
        "got",
        "gotcha",
        "fair",
        "enough",
        "hope",
        "you're",
        "youre",
        "well",
        "doing",
        "quick",
        "intro",
        "one",
        "here",
        "for",
        "really",
        "useful",
        "appreciated",
        "appreciate",
        "makes",
        "sense",
        "talk",
        "tomorrow",
        "soon",
        "chat",
        "later",
    ]
)
_HYPOTHETICAL = re.compile(
    r"^\s*(?:(?:lol|haha|lmao|omg|ok|okay|so|just|well|right|hmm|um|even|and|but)\W+){0,3}"
    r"(if|what if|suppose|"
    r"supposing|imagine|hypothetically|let'?s say|say i|"
    r"in theory|maybe|perhaps|i wonder|i wish|wish i|wouldn'?t it|someday|one day)\b|"
    r"\b(if i (were|was|had|could|ever)|i would (love|like) to|i'?d (love|like) to|"
    r"i wonder|i wish|"
    r"might|i should(?! (?:have )?(?:mention|say|said|add|tell|told|note|point out))|"
    r"thinking (?:of|about)|considering|"
    r"think (?:of|about) (?:going|becoming|getting|trying|switching|starting|taking|doing)|"
    r"hypothetically|(?:could|want to|wanna|gonna|going to|hope to|hoping to) (?:try|give \w+ a "
    r"(?:go|try|shot))|"
    r"would i|were i|dreamt|dreamed|(?:had|having) a (?:\w+ )?dream|"
    r"(?:not sure|unsure|can'?t decide|undecided) (?:if|whether|I want|I'?d)"
    r"(?! I (?:ever )?(?:told|mentioned|said)))\b|"
    r"[,;]\s*(?:and |but |even )?if\b",
    re.IGNORECASE,
)
_COMMUNICATION = re.compile(
    r"\b(answers?|answered|answering|replies|reply|responses?|respond|emojis?|call me|address me|"
    r"addressed as|refer to me as|"
    r"bullet points?|bullets|paragraphs?|formal|casual|tone|talk to me|speak to me|write to me|"
    r"explanations?|"
    r"spelling|metric|imperial|units|code blocks?|plain english|simple english|simple words|"
    r"layman'?s terms|explain(?: things| stuff)? (?:in|with|using) (?:simple|plain|short|more|less|"
    r"examples|layman))\b",
    re.IGNORECASE,
)
_OWN_ANSWERS = re.compile(
    r"\bI(?:'ll| will| can)? (?:keep|make|try to keep) my (?:answers|replies|responses)\b",
    re.IGNORECASE,
)
"""'I'll keep my answers brief': the assistant speaking of its answers, not the user."""
_CRAVING = re.compile(
    r"\b(?:could murder|would kill for|'d kill for|dying for|craving|could really go for|"
    r"could go for|gagging for)\b",
    re.IGNORECASE,
)
"""A craving of the moment ("I could murder a pizza right now"), not a liking that lasts."""
_SARCASM = re.compile(
    r"^\W*(?:yeah|yea)\s*,?\s*right\b|"
    r"^\W*(?:oh\s*,?\s*)?(?:wow|great|fantastic|brilliant|wonderful|perfect|lovely|"
    r"awesome|super|marvellous|marvelous|fab|yay)\s*[,!.]*\s*(?:another|more|yet another)\b|"
    r"\bamirite\b|\byeah,? because I totally\b|"
    r"🙄(?=.*\b(?:love|loves|adore|enjoy|favou?rite|can'?t wait|so fun|the best)\b)|"
    r"\b(?:love|loves|adore|enjoy|favou?rite|can'?t wait|so fun|the best)\b.*🙄",
    re.IGNORECASE,
)
"""'Yeah right, and I'm the Queen of Sheba', 'Oh great, another meeting', 'Ugh mondays,
amirite', an eye-roll at praise: said not to be believed. An eye-roll at a misfortune
("sprained my ankle 🙄 on crutches for 10 days") is not."""
_ASSISTANT_CLAIM = re.compile(
    r"\b(?:i'?ll|i will|i'?ve|i have)\s+(?:remember|noted?|keep in mind|make a note)\w*\b"
    r".*\byou\b|"
    r"\b(?:you|u|your (?:\w+ )?(?:reply|replies|answer|response|message|summary|notes?))\s+"
    r"(?:just\s+)?(?:said|says|told me|claimed|claims|stated|wrote|thinks?|thought)\s+(?:that\s+)?"
    r"(?:I|I'm|I am|im|I've|ive|my)\b",
    re.IGNORECASE,
)
"""'I'll remember that you prefer short answers': the assistant's words about the user.
'your last reply said I'm a doctor': a claim the assistant made, not the user's word."""
_STANDING_REQUEST = re.compile(
    r"^\W*when(?:ever)? you (?:explain|answer|reply|write|help)\b[^,?]{0,30}?,?\s*"
    r"(?:can|could|would|will) (?:you|u) (?:please )?(?:go|do it|explain|break|number|keep|use)\b|"
    r"^\W*(?:from now on|going forward|in future),? (?:can|could|would|will) (?:you|u) "
    r"(?:please )?(?:always )?(?:reply|answer|respond|write|talk|speak|use|keep|do|stick to|"
    r"switch to)\b|"
    r"^\W*(?:can|could|would|will) (?:you|u) (?:please )?(?:"
    r"always (?:reply|answer|respond|write|"
    r"talk|speak|use|keep)\b|(?:only |just )?(?:reply|answer|respond|write|talk|speak|use|keep|do|"
    r"stick to|switch to)\b"
    r".*\b(?:from now on|going forward|always|in future|by default)\b|"
    r"(?:write|talk|speak|explain things) to me (?:in|with|using) |"
    r"(?:give|keep|make|write)(?: me)? (?:your |the |all )?(?:answers|replies|responses) (?:as|in|"
    r"short\w*|brief\w*|concise|simple\w*|with|under|to the point)\b)",
    re.IGNORECASE,
)
"""A question that asks for a way of answering from now on ("Can you always reply in
Spanish from now on?", "Could you write to me in simple English?") tells how the writer
wants to be answered."""
_NEVER_OFFER = re.compile(
    r"^\W*(?:(?:please|pls|plz)\s+)?(?:never|don'?t ever|dont ever|do not ever)\s+(?:suggest|"
    r"recommend|offer|give|serve|send|show|put|add|include|use)\b",
    re.IGNORECASE,
)
"""'please never suggest me liver, I hate it': a standing avoidance, which says a dislike."""
_ASKED_FIRST = re.compile(r"^\W*(?:[\w'-]+\s+){1,3}(?:pls|plz|please)\s*[:!]", re.IGNORECASE)
"""'rota maths pls: 3 of us covering 168 hrs…': what is asked for, then its material."""
_PLAY_HABIT = re.compile(
    r"^\W*(?:(?:and|also|btw|oh and|so)\W+)?play\b(?!\s+(?:me|us|some|a|an|this|that)\b)",
    re.IGNORECASE,
)
"""Chat drops the "I": "play badminton every tuesday w the lads" is a habit, not an order to
play a song, when it says how often (`occasions.REGULAR`)."""
_ROLE_PLAY = re.compile(
    r"\b(?:let'?s|we(?:'re| are) (?:going to|gonna)) (?:play a game|role-?play|pretend)\b|"
    r"\bI(?:'m| am) (?:a|playing a|playing the) character\b|\bin character\b|"
    r"\bpretend (?:to be|that I|I'?m|I am|you'?re)\b|\bmy character\b|"
    r"\bthe plot of (?:this|that|a|the|my) (?:show|film|movie|book|series|novel|game|episode)\b",
    re.IGNORECASE,
)
"""A game of make-believe ("Let's play a game … I'm a character called Viktor, vegan …") or a
story's plot told ("the plot of this show I'm watching: …"): none of it is the writer's,
however it is asked to be saved."""
_FICTION = re.compile(
    r"^\W*for an? (?:short )?(?:story|novel|book|script|screenplay|game|poem|role-?play)\b|"
    r"\b(?:in|for) (?:the|my|a) (?:novel|book|story|film|movie|show|series|game|script|play|"
    r"musical|sitcom|episode|podcast|sketch)\b"
    r"[^.]{0,40}\bthe (?:main |lead )?(?:character|hero|heroine|protagonist|villain|lead|"
    r"narrator)\b|"
    r"\bthe (?:main )?(?:character|hero|heroine|protagonist|villain) (?:in|of) (?:my|the|a|this) "
    r"(?:novel|book|story|script|screenplay|game|film|comic|play|fic)\b|"
    r"\bmy (?:main )?(?:character|protagonist|oc|d&d character|dnd character)\b",
    re.IGNORECASE,
)
"""A character's life ("For a short story: the main character is a diabetic chef", "In the
novel I'm reading, the main character is allergic to sunlight"): not the writer's."""
_OTHERS_SUBJECT = re.compile(
    r"^\W*(?:(?:[A-Z][a-z]+'s)\s+(?:\w+\s+)?(?:sister|brother|mum|mom|dad|mother|father|"
    r"parents|friend|kids?|son|daughter|husband|wife|partner)\b|"
    r"(?:my|our|the)\s+(?:\w+\s+)?(?:mates?|friends?|pals?|buddy|buddies|manager|boss|"
    r"colleagues?|co-?workers?|neighbou?rs?|landlord|landlady|teacher|flatmates?|roommates?|"
    r"housemates?|clients?|customers?|coach|tutor|(?:team )?lead|supervisor|director|"
    r"in-laws|cleaner|babysitter|nanny|trainer|therapist))\b",
    re.IGNORECASE,
)
_PASTED = re.compile(
    r"[{}\[\]|]|</?[A-Za-z][^<>]{0,40}>|```|\\n|\"\s*:|"
    r"(?:^|\s)(?=[^\s]*[A-Za-z])[\w./%-]+(?:,[\w./%-]+){2,}(?:\s|$)|"
    r"\b[a-z_]+\.[a-z_]+\s*="
)
"""Brackets, a markup tag, a pipe between fields, a code fence, JSON's `":`, a row of three
or more comma-joined words or values ("name,city,allergy", "metformin,500mg,PO") or a
dotted key set ("preferences.likes=crypto"): data pasted, not something said; a lone "<"
or ">" is chat ("ES>EN", "<3", "-> swap the city")."""
_MEMO = re.compile(
    r"^\s*(?:please\s+|pls\s+|just\s+|also\s+|kindly\s+)?(?:remember|note|keep in mind|"
    r"bear in mind|make a note|take note|don'?t forget|for the record|fyi|as you know)"
    r"(?: that| of this| this)?\s*[,:]?\s+"
    r"(?P<told>I (?:told you|said|mentioned)(?: before| earlier)?(?: that)?\s*,?\s+)?"
    rf"(?=(?:I|I'm|I've|I'll|I'd|im|ive|my|we|we're|our|{DIET_AND_HEALTH_WORDS})\b)",
    re.IGNORECASE,
)
""""Please remember that I'm vegan", "Kindly note that I am hard of hearing", "remember I
told you I'm lactose intolerant?": the fact after a request to remember it (asked back, it
is still told)."""
_PASTE_MARK = re.compile(
    r"(?:^|\s)(?:-{3,}|={3,}|_{3,})(?:\s|$)|^>|"
    r"\b(?:copied|pasted|copy-?pasted|copy pasted|grabbed|quoting)\s+(?:this\s+|it\s+)?"
    r"(?:from|off)\b[^:\n]{0,60}:",
    re.MULTILINE | re.IGNORECASE,
)
"""A rule line, a quote mark or "copied from a blog:": what follows is pasted (an email,
a message, someone's "about me"), not said."""
_CLAUSE_BREAK = re.compile(
    r"\s*[,;:]\s+|\s+[-\u2013\u2014]\s+|\s*[\u2600-\u27bf\U0001f300-\U0001faff]+\ufe0f?\s*|"
    r"\s+(?:so|and|but)\s+(?=(?:can|could|would|will)\s+(?:you|u)\b|if (?:you|u) (?:can|could)\b)|"
    r"\s+so\s+(?=(?!I\b|we\b)(?:\w+\s+){1,2}(?:might|will|may|could|would)\b)"
)
_PLEASE_END = re.compile(r"\b(?:pls|plz|please)\W*$", re.IGNORECASE)
_RULE_KEPT = re.compile(r"\b(?:no|not|never|without|don'?t|nothing)\b", re.IGNORECASE)
"""'no pork please' keeps a rule; 'pros and cons pls' only asks."""
_CONTINUES = re.compile(r"^\W*(?:or|and|nor|plus|like|e\.g\.|i\.e\.|as in)(?:\s|$)", re.I)
_CARRIED = ("question", "hypothetical", "fiction", "sarcasm", "someone else's life")
"""Reasons a sentence that goes on from the one before ("…I'd call it Pickles. or Sergeant
Sausage") shares: it says no more of the writer than the sentence it continues."""
_DEADPAN = re.compile(
    r"(?:^|[.!]\s+)(?:great|fantastic|brilliant|wonderful|perfect|lovely|amazing|super|fun)"
    r"[.!]+(?=\s|$)",
    re.IGNORECASE,
)
_SHOUTED_LIKING = re.compile(r"\b(?:LOVE|ADORE|LOVES|ENJOY)\b|\bfavou?rite\b")
"""'oh yeah I LOVE sitting on the M25 for two hours. great. fantastic.': praise shouted,
then said flat in a word of its own, means its opposite."""
_LEAD_WORD = re.compile(r"^\s*(so|but|and|then|or)\s+", re.IGNORECASE)
_CONDITIONAL = re.compile(r"\b(would|could|might|will|shall)\b|'d\b|'ll\b", re.IGNORECASE)


@dataclass(frozen=True)
class Screened:
    """A statement after the mechanical screen: the sentences worth a model call,
    and why each other one was dropped (for traces and tests)."""

    kept: list[str]
    dropped: list[tuple[str, str]] = field(default_factory=list)
    injection: bool = False

    @property
    def text(self) -> str:
        return " ".join(self.kept)


def why_not_a_fact(sentence: str) -> str | None:
    """The reason `sentence` cannot state a lasting fact about its writer, or None."""
    s = sentence.strip()
    if len(s) > MAX_SENTENCE_CHARS:
        return "too long"
    if not _WORD.search(s):
        return "no words"
    if _PASTED.search(s):
        return "pasted data"
    if another_speaker(s):
        return "another speaker's line"
    if _FICTION.search(s):
        return "fiction"
    surprised = (s.endswith(("??", "?!")) or _HEDGED.search(s)) and (
        _I_SUBJECT.search(s) and not _QUESTION_START.match(s)
    )
    if (s.endswith("?") or _QUESTION_START.match(s) or _TRAILING_QUESTION.search(s)) and not (
        surprised or _STANDING_REQUEST.search(s)
    ):
        return "question"  # "Weirdly I like mushrooms now??" is said, not asked
    words = [w.lower() for w in _WORD.findall(s)]
    if _SMALL_TALK.match(s) or all(w in _SMALL_TALK_WORDS for w in words):
        return "small talk"
    if _OWN_ANSWERS.search(s) or _ASSISTANT_CLAIM.search(s):
        return "the assistant's voice"
    if _SARCASM.search(s):
        return "sarcasm"
    subject = _OTHERS_SUBJECT.match(s)
    if subject is not None and not WRITER_WORDS.search(s[subject.end() :]):
        return "someone else's life"  # "My mate Dov is moving to Perth": not the writer's
    if _CRAVING.search(s):
        return "a passing craving"
    if _WRITE_ME_ONE.match(s) and not _STANDING.search(s):
        return "request"  # "write a linkedin post …, tone: humble brag": the post's tone
    if _COMMUNICATION.search(s) and not _HYPOTHETICAL.search(s):
        return None  # how the user wants to be answered is said as a request
    if _ASSISTANT_VOICE.search(s):
        return "the assistant's voice"
    if _NEVER_OFFER.match(s) or (_PLAY_HABIT.match(s) and REGULAR.search(s)):
        return None
    if (
        _REQUEST.match(s)
        or _ASKED_FIRST.match(s)
        or (
            _PLEASE_END.search(s)
            and len(words) <= 6
            and not WRITER_WORDS.search(s)
            and not _RULE_KEPT.search(s)
        )
    ):
        return "request"  # "pros and cons pls"
    if _HYPOTHETICAL.search(s):
        return "hypothetical"
    return None


def _clause_spans(sentence: str) -> list[tuple[int, int]]:
    """(start, end) of each clause of `sentence`, split at `_CLAUSE_BREAK`."""
    breaks = list(_CLAUSE_BREAK.finditer(sentence))
    starts = [0, *(m.end() for m in breaks)]
    ends = [*(m.start() for m in breaks), len(sentence)]
    return list(zip(starts, ends, strict=True))


def opening_statement(sentence: str) -> str | None:
    """The plain statement a question or hypothetical opens with, if any (module
    doc): its clauses up to the first one that cannot state a fact, when that is a
    question or a hypothetical and what comes before it is not conditional."""
    spans = _clause_spans(sentence)
    first: int | None = None  # the first clause that may state a fact
    for i, (start, end) in enumerate(spans):
        part = _LEAD_WORD.sub("", sentence[start:end])
        why = why_not_a_fact(part)
        if why is None:
            first = i if first is None else first
            continue
        if why == "small talk" and first is None:
            continue  # "Quick one: …", "Honestly, …"
        if first is None or why not in ("question", "hypothetical"):
            return None
        opening = sentence[spans[first][0] : spans[i - 1][1]].strip()
        if len(_WORD.findall(opening)) < 2 or _CONDITIONAL.search(opening):
            return None
        return opening.rstrip(",;:-") + "."
    return None


_TOLD_AFTER = re.compile(r"^\W*(?:I|I'm|I am|I've|I have|im|ive|we're|we are|we've)\b", re.I)
_AT_HAND = re.compile(
    r"^\W*(?:I|we) (?:have|'ve got|have got|got)\b"
    r"(?!.*\b(?:allerg\w*|intoleran\w*|coeliac|celiac|diabet\w*|asthma|ibs|disease|disorder)\b)",
    re.IGNORECASE,
)
"""'what do I make for dinner, I have eggs, spinach and half a lemon': what is at hand for the
request, not a fact about the writer."""


_WRITE_ME_ONE = re.compile(
    r"^\W*(?:(?:please|pls|plz|can you|could you)\s+)?(?:write|draft|compose|create|generate|"
    r"make|prepare)\s+(?:me\s+|us\s+)?(?:a|an|the|some|this|that|my|our)\b|"
    r"^\W*(?:(?:please|pls|plz|can you|could you)\s+)?(?:reply|respond|answer)\s+to\s+"
    r"(?:this|that|the|my|his|her|their|these)\b",
    re.IGNORECASE,
)
"""A request to write a thing ("write a linkedin post, tone: humble brag, no emojis pls"):
the tone is the thing's, not how the writer wants to be answered."""
_STANDING = re.compile(r"(?:from now on|going forward|in future|always|by default)", re.I)
_PAYLOAD = re.compile(
    r"^(?P<ask>[^:\n]{0,80}?\b(?:pls|please|plz|save|store|jot|bio|blurb|caption|post|email|"
    r"reply|summary|"
    r"description|intro|write|draft|translate|proofread|rewrite|edit|format)\b[^:\n]{0,40}):"
    r"\s*(?P<text>\S.*)$",
    re.IGNORECASE | re.DOTALL,
)
"""A request before a colon and, after it, text with no first person ("bio for the
conference programme pls: Dr Amara Okafor is a marine biologist … allergic to shellfish"):
someone else's text to work on (a note about a thing, after "save this:", too)."""
_NOTED = re.compile(r"\b(?:note|remember|save|add|store|fyi|update|correction|profile)\b", re.I)
_REWORK = re.compile(
    r"^\W*(?:(?:please|pls|can you|could you|would you)\s+)?(?:translate|proofread|summari[sz]e|"
    r"rewrite|paraphrase|reword|correct|fix|check|edit|format|shorten|simplify|polish|tidy up|"
    r"improve|reply to|respond to|answer|spell-?check|grammar check)\b",
    re.IGNORECASE,
)
"""A request to work on text: what follows its colon is the text, not the writer's word."""


def closing_statement(sentence: str) -> str | None:
    """The plain statement about the writer a request or question closes with, if any
    ("can you suggest a recipe, I'm vegan", "make me a playlist for my morning runs, I go
    out every day at 6"): its clauses from the first that opens with the writer as "I"
    or "we" and may state a fact, up to the next that cannot. What follows a colon is the
    request's text ("Translate this into Spanish: I live in Madrid"), not a fact told."""
    spans = _clause_spans(sentence)
    first: int | None = None
    for i, (start, end) in enumerate(spans):
        part = _LEAD_WORD.sub("", sentence[start:end])
        fact = why_not_a_fact(part) is None and not _CONDITIONAL.search(part)
        if first is None:
            told = _TOLD_AFTER.match(part) and not _AT_HAND.match(part)
            payload = i > 0 and ":" in sentence[spans[i - 1][1] : start] and _REWORK.match(sentence)
            first = i if i > 0 and fact and told and not payload else None
        elif not fact:
            return sentence[spans[first][0] : spans[i - 1][1]].strip().rstrip(",;:-") + "."
    return None if first is None else sentence[spans[first][0] :].strip().rstrip("?,;:-") + "."


_ME = re.compile(r"\bme\b", re.IGNORECASE)
"""Beside a quote, the writer as the object ("the doctor finally referred me for an MRI")."""
_I_SUBJECT = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|im|ive|we|we're|we've)\b", re.IGNORECASE)


def screen(text: str) -> Screened:
    """Split `text` into sentences and keep those that may state a fact. Words in
    quotes are taken out: a sentence left with nothing said by the writer as "I" or
    "we" goes ("Song lyric stuck in my head: '…'"), one with it keeps the rest ("My
    doctor said 'cut the sugar' so I have")."""
    if injected(text) or another_speaker(text):
        whole = "prompt injection" if injected(text) else "another speaker's line"
        return Screened([], [(text[:200], whole)], injection=whole == "prompt injection")
    if _ROLE_PLAY.search(text):
        return Screened([], [(text[:200], "role-play")])
    if len(_FIELD_LINE.findall(text)) >= 2 or _HEADING.search(text):
        return Screened([], [(text[:200], "pasted data")])
    if _DEADPAN.search(text) and _SHOUTED_LIKING.search(text):
        return Screened([], [(text[:200], "sarcasm")])
    kept: list[str] = []
    dropped: list[tuple[str, str]] = []
    pasted = _PASTE_MARK.search(text)
    if pasted is not None:  # "--- Hi team, …": someone else's text pasted below the line
        dropped.append((text[pasted.start() :][:200], "pasted text"))
        text = text[: pasted.start()]
    payload = _PAYLOAD.match(text)
    if (
        payload is not None
        and (not WRITER_WORDS.search(payload.group("text")) or _REWORK.match(payload.group("ask")))
        and (not _NOTED.search(payload.group("ask")) or request_material(payload.group("text")))
    ):
        dropped.append((payload.group("text")[:200], "pasted text"))
        text = payload.group("ask")
    text = QUOTED.sub(f" {QUOTE_MARK} ", text)
    text = _SIGNED.sub(r"\1, ", text)
    previous: str | None = None  # why the sentence before was dropped (None: kept)
    for said in sentences(text):
        memo = _MEMO.match(said)
        sentence = said[memo.end() :] if memo else said
        if memo and memo.group("told") and sentence.endswith("?"):
            sentence = sentence.rstrip("?") + "."  # "remember I told you I'm X?": told
        if QUOTE_MARK in sentence:
            rest = " ".join(sentence.replace(QUOTE_MARK, " ").split()).strip(" ,:;-")
            rest = re.sub(r"\s+([,.;:!?])", r"\1", rest)
            if not (_I_SUBJECT.search(rest) or (len(rest.split()) >= 8 and _ME.search(rest))):
                previous = "quoted words"
                dropped.append((sentence[:200], previous))
                continue
            sentence = rest
        why = why_not_a_fact(sentence)
        if (
            why is None
            and previous in _CARRIED
            and _CONTINUES.match(sentence)
            and not _I_SUBJECT.search(sentence)
        ):
            why = previous
        opening = opening_statement(sentence) if why in ("question", "hypothetical") else None
        if opening is None and why in ("question", "request"):
            opening = closing_statement(sentence)
        if opening is not None and len(kept) < MAX_KEPT_SENTENCES:
            kept.append(as_written(opening))
            previous = f"{why}, but for the statement in it"
            dropped.append((sentence[:200], previous))
            continue
        if why is None and len(kept) < MAX_KEPT_SENTENCES:
            kept.append(as_written(sentence))
            previous = None
        else:
            previous = why or "too many sentences"
            dropped.append((sentence[:200], previous))
    if any(why.startswith(("request", "question")) for _, why in dropped):
        material = [s for s in kept if request_material(s)]
        kept = [s for s in kept if s not in material]
        dropped += [(s[:200], "the material of a request") for s in material]
    return Screened(kept, dropped)
