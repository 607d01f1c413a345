"""Speaker attribution: whose life a recalled line is about.

In an imported conversation every line has a speaker ("Melanie: I ran a charity
race"). A question that names one of them ("What did Caroline realize after her
charity race?") can only be answered by lines that person said, or that talk
about them; LoCoMo's adversarial questions swap the speaker exactly so, and a
small model answers them from the other speaker's line.

`attribute(hits, facts, k=…)` (the recalled lines, `RecalledMemory`, and the message's
`QueryFacts`, read once with the message):
- keeps the lines by or about the named speakers (a vocative such as "Thanks,
  Caroline!" is not "about" Caroline: the speaker is talking about themself);
  lines with no speaker (the user's own words, notes, profile facts) always stay,
  and a message naming no speaker keeps everything; a named person's line whose
  every sentence is about the one spoken to ("Wow, you found the perfect spot for
  your store!") is withheld too: a small model answered "What did Jon find for his
  store?" from it (offline on the 5 dev conversations, this loses no evidence line
  of the 762 answerable questions from the top 10);
- sets `others_answer` when sentences about other people cover the message's
  words by at least `OTHERS_MARGIN` more than sentences about the named person,
  sharing at least `MIN_MATCHED` of them. A sentence is about its speaker unless
  it speaks to someone ("you", "your", or a name: "That race sounds great, Mel!")
  with nothing in the first person: then it is about the person spoken to
  (Caroline's "your race sounds great" is about Melanie's race). A sentence that
  names the person asked about is about them. A question tells nothing about
  anyone and is not counted ("What's your favorite movie?" is not the other
  person's favourite movie). The agent then refuses ("I don't have that in
  memory") without asking the model.

Measured offline on all questions of LoCoMo's five dev conversations (margin
picked on conv-26 and conv-30, checked on conv-41/42/43): the gate refuses 84 of
237 adversarial questions (0.17–0.44 per conversation) and 11 of 762 answerable
ones (0.7–2.8% per conversation); before questions were left out, 93 and 22. With
the model, on both 200-question samples, adversarial refusal did not move (the
grounding check and the contrast probe refuse those 9) and answerable refused fell
0.078 → 0.059 and 0.098 → 0.092.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from memagent.agent.recalled import RecalledMemory
from memagent.index import QueryFacts, query_terms

OTHERS_MARGIN = 0.2
"""Speaker attribution refuses when lines by others cover this much more of the
question's words than lines by or about the person it names (tuned on LoCoMo's dev
conversations; see bench.qa_locomo)."""
MIN_MATCHED = 2
"""...and share at least this many of its words (one shared word is chance)."""


def _mentions(content: str, name: str) -> bool:
    """`content` talks about `name`, not merely to them: "Caroline's son", "Caroline
    said", "with Caroline and …" count; a vocative ("Thanks, Caroline!", "Hey
    Caroline.") does not, since the line's speaker is then talking about themself."""
    pattern = rf"(?<![\w'])({re.escape(name)})(?:'s\b|\s+[\w(])"
    return re.search(pattern, content) is not None


@dataclass
class Attribution:
    """The recalled hits left after speaker attribution (see `attribute`)."""

    hits: list[RecalledMemory]
    named: list[str] = field(default_factory=list)
    """Speakers of the recalled lines that the message names."""
    others_answer: bool = False
    """Lines by other speakers match the message clearly better than any line by or
    about the named person: it asks about someone else's life (refuse)."""


def stem(word: str) -> str:
    """A crude stem of a lower-case word (its common suffix cut), so that "running"
    and "runs" match; `memagent.agent.support` reads replies the same way."""
    for suffix in ("ing", "ed", "es", "s", "e"):
        if len(word) > 4 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


_QUESTION_WORDS = frozenset(["many", "much", "kind", "sort", "type", "likely"])
"""Words of a question's form ("how many", "what kind of"), not of its topic."""


def _terms(terms: Sequence[str], drop: set[str]) -> set[str]:
    return {stem(t) for t in terms if t not in drop and t not in _QUESTION_WORDS}


_SENTENCE = re.compile(r"[^.!?]+[.!?]*")
_SECOND_PERSON = re.compile(r"\b(you|your|yours|yourself|you're|you've|you'll|you'd)\b", re.I)
_VOCATIVES = (
    re.compile(r",\s*([A-Z][a-z]+)\s*[!.?]*\s*$"),
    re.compile(r"^\s*(?:\w+,?\s+)?([A-Z][a-z]+),\s"),
)
"""Where a sentence may be spoken to someone by name ("That race sounds great, Mel!",
"Hey Caroline, …"); the word is a name only when it names a speaker (`_addressed`)."""
_FIRST_PERSON = re.compile(r"\b(i|me|my|mine|myself|i'm|i've|i'll|i'd|we|our|us)\b", re.I)


_TO_THE_LISTENER = re.compile(
    r"^\W*(?:thanks|thank|wow|whoa|woah|congrats|congratulations|aww?|awesome|cool|nice|"
    r"amazing|great)\b",
    re.IGNORECASE,
)
"""Words that thank, praise or marvel at the one spoken to: "Wow, that looks amazing!"
is about the other person's news."""


def _addressed(sentence: str, speakers: Collection[str]) -> bool:
    """`sentence` is spoken to someone: it says "you", thanks, praises or marvels
    ("Wow, that sounds great!"), or calls a speaker by name or by a nickname that
    begins their name ("That race sounds great, Mel!" to Melanie). Another
    capitalised opening word is not a name: "Yeah, they offer yoga and kickboxing"
    is still about its speaker (LoCoMo's lines open ~900 sentences with "Thanks,",
    "Wow,", "Yeah,"… and ~300 with a name)."""
    if _SECOND_PERSON.search(sentence) or _TO_THE_LISTENER.search(sentence):
        return True
    words = [m.group(1) for v in _VOCATIVES if (m := v.search(sentence))]
    return any(s.startswith(w) and len(w) >= 2 for w in words for s in speakers)


_QUESTION = re.compile(r"\?\s*$")
_TAG_QUESTION = re.compile(
    r",\s*(?:right|isn't it|aren't they|don't you think|no|yeah|eh|huh|correct)\s*\?\s*$",
    re.IGNORECASE,
)


def asks(sentence: str) -> bool:
    """`sentence` is a question, which tells nothing ("What's your favourite movie?");
    a statement with a question tag ("Sunflowers mean warmth, right?") still tells."""
    return bool(_QUESTION.search(sentence)) and not _TAG_QUESTION.search(sentence)


def split_by_subject(
    hit: RecalledMemory, named: set[str], speakers: Collection[str] = ()
) -> tuple[list[str], list[str]]:
    """One recalled line's sentences split by whom they are about: the named people,
    or others. A sentence is about its speaker, unless it is spoken to someone
    (`_addressed`: "you", thanks or praise, or one of `speakers` by name) with nothing in the
    first person (then it is about the person spoken to), or names a named person.
    A line with no speaker has no sentences about anyone."""
    about: list[str] = []
    others: list[str] = []
    speaker = hit.speaker
    content = str(hit.content or "")
    if speaker is None:
        return about, others
    if content.startswith(f"{speaker}:"):
        content = content[len(speaker) + 1 :]
    names = {*speakers, *named}
    for sentence in _SENTENCE.findall(content):
        spoken_to = _addressed(sentence, names)
        to_other = bool(spoken_to) and not _FIRST_PERSON.search(sentence)
        # spoken to someone: about them; when two named people talk, the other one
        to_named = to_other and len(named - {speaker}) > 0
        if (
            any(_mentions(sentence, n) for n in named)
            or to_named
            or (speaker in named and not to_other)
        ):
            about.append(sentence)
        else:
            others.append(sentence)
    return about, others


def _sentences_about(
    hits: Sequence[RecalledMemory], named: set[str], speakers: set[str]
) -> tuple[list[str], list[str]]:
    """The recalled lines' sentences that tell something (not questions, `asks`), split
    by whom they are about (see `split_by_subject`)."""
    about: list[str] = []
    others: list[str] = []
    for hit in hits:
        a, o = split_by_subject(hit, named, speakers)
        about += [s for s in a if not asks(s)]
        others += [s for s in o if not asks(s)]
    return about, others


def _coverage(terms: set[str], sentences: list[str]) -> tuple[float, int]:
    """The largest share of `terms` one sentence holds, and how many that is."""
    if not terms:
        return 0.0, 0
    best = max((len(terms & _terms(query_terms(s), set())) for s in sentences), default=0)
    return best / len(terms), best


def attribute(hits: Sequence[RecalledMemory], message: QueryFacts | str, *, k: int) -> Attribution:
    """The hits by or about the speakers the message (its `QueryFacts`, or its text)
    names, and whether sentences about others (in the top `2k` hits) answer it
    clearly better (module doc)."""
    facts = message if isinstance(message, QueryFacts) else QueryFacts.read(message)
    speakers = {s for h in hits if (s := h.speaker)}
    named = sorted(s for s in speakers if facts.names(s))
    if not named:
        return Attribution(list(hits))
    kept: list[RecalledMemory] = []
    withheld: list[RecalledMemory] = []
    for hit in hits:
        speaker = hit.speaker
        content = str(hit.content or "")
        if speaker is not None and content.startswith(f"{speaker}:"):
            content = content[len(speaker) + 1 :]
        keep = speaker is None or speaker in named or any(_mentions(content, n) for n in named)
        if keep and speaker is not None and not split_by_subject(hit, set(named), speakers)[0]:
            # said by a named person, but only about the one spoken to ("you found the
            # perfect spot for your store!"): the model would answer from it
            keep = False
        (kept if keep else withheld).append(hit)
    terms = _terms(facts.terms, {s.lower() for s in speakers})
    about, others = _sentences_about(hits[: 2 * k], set(named), speakers)
    (theirs, matched), (ours, _) = _coverage(terms, others), _coverage(terms, about)
    # one shared word is chance ("lean" in "people to lean on"): two at least
    margin = theirs - ours if matched >= MIN_MATCHED else 0.0
    return Attribution(kept, named, margin >= OTHERS_MARGIN)
