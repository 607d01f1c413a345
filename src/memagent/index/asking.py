"""What kind of message a person sent, by its form alone (no model call):

- `looks_like_request`: a question or a request for information ("tell me …");
- `is_small_talk`: a greeting, thanks, goodbye or bare acknowledgement ("Hello!",
  "thanks a lot", "ok"): nothing to store or learn from;
- `about_user`: it speaks of the user ("I", "my", "me"), so their profile facts
  belong in context;
- `is_personal`: a question about the user's own life ("my", "I", "we"), which
  the assistant answers from memory, not from general knowledge.

They are read once per message into `QueryFacts` (`memagent.index.query`); the
agent and recall read that value.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
_ASKING = frozenset(
    [
        "what",
        "who",
        "whom",
        "whose",
        "where",
        "when",
        "which",
        "why",
        "how",
        "do",
        "does",
        "did",
        "is",
        "are",
        "am",
        "was",
        "were",
        "can",
        "could",
        "will",
        "would",
        "should",
        "have",
        "has",
        "tell",
        "remind",
        "recall",
        "list",
        "show",
        "name",
    ]
)


def is_question(text: str) -> bool:
    return text.rstrip().endswith("?")


def looks_like_request(text: str) -> bool:
    """A question or a request for information ("tell me …"), by its form alone."""
    words = text.strip().lower().split(maxsplit=1)
    return is_question(text) or bool(words and words[0].strip(",.!:") in _ASKING)


_SMALL_TALK_CORE = frozenset(
    [
        "hello",
        "hi",
        "hey",
        "hiya",
        "howdy",
        "yo",
        "morning",
        "afternoon",
        "evening",
        "night",
        "thanks",
        "thank",
        "thx",
        "ty",
        "ok",
        "okay",
        "k",
        "cool",
        "great",
        "nice",
        "awesome",
        "bye",
        "goodbye",
        "cheers",
        "yes",
        "yeah",
        "yep",
        "no",
        "nope",
        "sure",
        "lol",
        "haha",
        "hah",
        "wow",
        "alright",
        "perfect",
        "fine",
        "np",
        "welcome",
        "oh",
        "ah",
        "hmm",
        "uh",
        "um",
        "bravo",
    ]
)
_SMALL_TALK_FILL = frozenset(
    [
        "good",
        "you",
        "there",
        "again",
        "so",
        "much",
        "very",
        "a",
        "lot",
        "all",
        "right",
        "got",
        "it",
        "see",
        "ya",
        "later",
        "and",
        "for",
    ]
)


def is_small_talk(message: str) -> bool:
    """A greeting, thanks, goodbye or bare acknowledgement: nothing to remember."""
    words = [w.lower().strip("'-") for w in _WORD.findall(message)]
    if not words or len(words) > 6 or any(ch.isdigit() for ch in message):
        return False
    if not all(w in _SMALL_TALK_CORE or w in _SMALL_TALK_FILL for w in words):
        return False
    return any(w in _SMALL_TALK_CORE for w in words)


_ABOUT_ME = re.compile(r"\b(i|i'm|me|my|mine|myself)\b", re.IGNORECASE)
_PERSONAL = re.compile(r"\b(?:my|me|mine|i|i'm|i've|i'd|we|our|us)\b", re.IGNORECASE)


def about_user(message: str) -> bool:
    """Whether `message` speaks of the user (I, me, my): their profile goes in context."""
    return _ABOUT_ME.search(message) is not None


def is_personal(question: str) -> bool:
    """Whether `question` is about the user's own life (it says my, I, we…)."""
    return _PERSONAL.search(question) is not None
