"""The offline answer judge of `bench.qa_longmemeval` (no model, no network).

LongMemEval's own judge is GPT-4o; this one is a rule a person can check by eye:

- **Content words.** Gold and answer are lower-cased, punctuation (but not the
  decimal point, `%`, `:` or `-` inside a token) removed, split into words; stop words
  (articles, pronouns, auxiliaries, prepositions, contraction tails, "up", "ago":
  `STOP`) are dropped from the gold; every word is Porter-stemmed (snowballstemmer's
  porter, as LoCoMo's scorer). The answer is correct when *every* content word of
  the gold is among the answer's words.
- **Numbers.** Number words become digits on both sides ("three" → "3",
  "twenty-five" → "25", "twice" → "2"); thousands separators and currency signs
  go ("$3,750" → "3750").
- **Alternatives.** A gold sentence "X is also acceptable." is a second gold;
  a parenthetical ("University of California, Los Angeles (UCLA)") is optional,
  and a one-word parenthetical (an abbreviation) is also accepted on its own.
  A gold made of stop words only ("Yes") needs all its words; an empty gold
  matches nothing.
- **Abstention.** A question whose id ends `_abs` has no answer in the history:
  correct when the reply refuses (`bench.qa_scoring.refuses`).
- **Preference** questions (`single-session-preference`) have a rubric for gold
  ("The user would prefer …"); their score is reported apart and is not part of
  the overall figure.
"""

from __future__ import annotations

import re

from bench.qa_scoring import refuses, stem

STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "from",
        "by",
        "with",
        "about",
        "as",
        "into",
        "than",
        "then",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "am",
        "do",
        "does",
        "did",
        "done",
        "have",
        "has",
        "had",
        "i",
        "me",
        "my",
        "mine",
        "you",
        "your",
        "yours",
        "we",
        "our",
        "us",
        "he",
        "she",
        "it",
        "its",
        "they",
        "them",
        "their",
        "this",
        "that",
        "these",
        "those",
        "there",
        "here",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "also",
        "just",
        "so",
        "very",
        "would",
        "could",
        "should",
        "will",
        "can",
        "may",
        "might",
        "shall",
        "must",
        "not",
        "no",
        "yes",
        "s",
        "t",
        "ve",
        "ll",
        "re",
        "d",
        "m",
        "up",
        "ago",
    ]
)
PREFERENCE = "single-session-preference"
_UNITS = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "once": 1,
    "twice": 2,
    "thrice": 3,
    "single": 1,
    "double": 2,
    "triple": 3,
    "dozen": 12,
}
_TENS = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
_TOKEN = re.compile(r"[a-z0-9]+(?:[.:\-][a-z0-9]+)*%?")
_ALSO = re.compile(r"(?i)^(.*?)\s+(?:is|are)\s+also\s+acceptable\.?$")
_PAREN = re.compile(r"\(([^()]*)\)")


def number_word(word: str) -> str:
    """A number word (or 'twenty-five') as digits; any other word unchanged."""
    if word in _UNITS:
        return str(_UNITS[word])
    if word in _TENS:
        return str(_TENS[word])
    head, dash, tail = word.partition("-")
    if dash and head in _TENS and tail in _UNITS and _UNITS[tail] < 10:
        return str(_TENS[head] + _UNITS[tail])
    return word


def content_words(text: str, *, keep_stop: bool = False) -> set[str]:
    """The stemmed content words of `text` (every word with `keep_stop`), numbers
    as digits."""
    stop = frozenset() if keep_stop else STOP
    low = text.lower().replace("\u2019", "'").replace("$", " ")
    low = re.sub(r"(?<=\d),(?=\d{3}\b)", "", low)  # 3,750 → 3750
    out: set[str] = set()
    for tok in _TOKEN.findall(low):
        tok = number_word(tok.strip(".:-"))
        if not tok or tok in stop:
            continue
        if "-" in tok and not tok[0].isdigit():  # hyphenated words: each part
            out.update(stem(p) for p in tok.split("-") if p and p not in stop)
            continue
        out.add(tok if tok[0].isdigit() else stem(tok))
    return out


def gold_alternatives(gold: str) -> list[set[str]]:
    """Each acceptable gold as a set of required content words (module doc)."""
    sentences = [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z0-9])", gold.strip()) if s]
    main: list[str] = []
    extra: list[str] = []
    for s in sentences:
        m = _ALSO.match(s)
        (extra if m else main).append(m.group(1) if m else s)
    texts = [" ".join(main)] if main else []
    texts += extra
    alts: list[set[str]] = []
    for t in texts:
        alts.append(content_words(_PAREN.sub(" ", t)))
        alts += [content_words(p) for p in _PAREN.findall(t) if len(p.split()) == 1]
    alts = [a for a in alts if a]
    if alts:
        return alts
    # a gold of stop words only ("Yes", "No"): every one of its words is needed
    every = content_words(gold, keep_stop=True)
    return [every] if every else []


def judge(question_id: str, answer: str, gold: str) -> bool:
    """Whether `answer` is correct for the question (module doc)."""
    if question_id.endswith("_abs"):
        return refuses(answer)
    if refuses(answer):
        return False
    got = content_words(answer, keep_stop=True)
    return any(alt <= got for alt in gold_alternatives(gold))
