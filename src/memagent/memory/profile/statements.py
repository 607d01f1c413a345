"""Which sentences of a statement can hold a lasting fact about the user.

Mechanical, no model: a statement is split into sentences and each one that is
plainly not a fact about the writer is dropped before any model sees it:
questions, requests and commands to the assistant, greetings, thanks and small
talk, hypotheticals and wishes ("if I…", "I wonder…"), the assistant's own
voice ("As an AI…", "You mentioned…", an `Assistant:` line), prompt injection
("ignore previous instructions…", which drops the whole statement), and JSON or
code pasted into the text. What is left (`Screened.kept`) goes to the model; an
empty `kept` means nothing is learned, at no model cost.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MAX_SENTENCE_CHARS = 400
"""A longer 'sentence' is pasted text, not something a person says about themselves."""
MAX_KEPT_SENTENCES = 8

_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"[A-Za-z']+")

_INJECTION = re.compile(
    r"\b(ignore|disregard|forget|override)\b.{0,40}\b(instructions?|prompts?|rules?|"
    r"system message)\b|\bsystem prompt\b|\byou are now\b|\bnew instructions?\b|"
    r"\bdeveloper mode\b|\bjailbreak\b|<\|im_start\|>|<\|?system\|?>",
    re.IGNORECASE | re.DOTALL,
)
_ROLE_PREFIX = re.compile(r"^\s*(assistant|ai|bot|system|memagent)\s*:", re.IGNORECASE)
_SPEAKER_PREFIX = re.compile(
    r"^\s*(?!(?i:note|update|correction|fyi|ps|p\.s|edit|also|btw|reminder|context|"
    r"background|info|heads up|quick note|oh|and|but|so|ok|okay)\s*:)"
    r"(?!I\b|I'm\b)[A-Z][\w.'-]*(?: [A-Z][\w.'-]*)?\s*:\s"
)
"""`Maria: I'm allergic to peanuts.`: a line quoted from someone else (a chat export,
another user), not the writer speaking."""
_ASSISTANT_VOICE = re.compile(
    r"^\s*(sure|certainly|of course|absolutely|great question|happy to help|got it|noted|"
    r"understood|here'?s|here is|here are)\b|"
    r"\b(as an ai|i'?m an ai|language model|i'?d be happy to|i would be happy to|"
    r"let me know if|i'?ll remember|i will remember|i have noted|i can help)\b|"
    r"^\s*(you|your)\b",
    re.IGNORECASE,
)
_QUESTION_START = re.compile(
    r"^\s*(who|whom|whose|what|when|where|why|which|how|do|does|did|is|are|was|were|"
    r"can|could|would|will|shall|should|may|might|have|has|am)\b",
    re.IGNORECASE,
)
_REQUEST = re.compile(
    r"^\s*(please|pls|kindly|tell me|show me|give me|find|search|look up|list|remind me|"
    r"help me|write|draft|make|create|book|set|add|delete|remove|send|play|explain|"
    r"summari[sz]e|translate|recommend|suggest|let'?s|could you|can you|would you|"
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
    ]
)
_HYPOTHETICAL = re.compile(
    r"^\s*(if|what if|suppose|supposing|imagine|hypothetically|let'?s say|say i|"
    r"in theory|maybe|perhaps|i wonder|i wish|wouldn'?t it|someday|one day)\b|"
    r"\b(if i (were|was|had|could|ever)|i would (love|like) to|i'?d (love|like) to|"
    r"i might|i should|i'?m thinking about|i'?m considering|"
    r"would i|were i)\b",
    re.IGNORECASE,
)
_COMMUNICATION = re.compile(
    r"\b(answers?|replies|reply|responses?|respond|emojis?|call me|address me|bullet points?|"
    r"formal|casual|tone|talk to me|speak to me|write to me|explanations?)\b",
    re.IGNORECASE,
)
_PASTED = re.compile(r"[{}\[\]<>]|```|\\n|\"\s*:")


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


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SPLIT.split(text) if s and s.strip()]


def why_not_a_fact(sentence: str) -> str | None:
    """The reason `sentence` cannot state a lasting fact about its writer, or None."""
    s = sentence.strip()
    if len(s) > MAX_SENTENCE_CHARS:
        return "too long"
    if not _WORD.search(s):
        return "no words"
    if _PASTED.search(s):
        return "pasted data"
    if _ROLE_PREFIX.match(s) or _SPEAKER_PREFIX.match(s):
        return "another speaker's line"
    if s.endswith("?") or _QUESTION_START.match(s):
        return "question"
    words = [w.lower() for w in _WORD.findall(s)]
    if _SMALL_TALK.match(s) or all(w in _SMALL_TALK_WORDS for w in words):
        return "small talk"
    if _COMMUNICATION.search(s) and not _HYPOTHETICAL.search(s):
        return None  # how the user wants to be answered is said as a request
    if _ASSISTANT_VOICE.search(s):
        return "the assistant's voice"
    if _REQUEST.match(s):
        return "request"
    if _HYPOTHETICAL.search(s):
        return "hypothetical"
    return None


def screen(text: str) -> Screened:
    """Split `text` into sentences and keep those that may state a fact."""
    if _INJECTION.search(text) or _ROLE_PREFIX.match(text) or _SPEAKER_PREFIX.match(text):
        whole = "prompt injection" if _INJECTION.search(text) else "another speaker's line"
        return Screened([], [(text[:200], whole)], injection=whole == "prompt injection")
    kept: list[str] = []
    dropped: list[tuple[str, str]] = []
    for sentence in sentences(text):
        why = why_not_a_fact(sentence)
        if why is None and len(kept) < MAX_KEPT_SENTENCES:
            kept.append(sentence)
        else:
            dropped.append((sentence[:200], why or "too many sentences"))
    return Screened(kept, dropped)
