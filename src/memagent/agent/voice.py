"""Replies speak to the user, and small talk is told apart from statements.

- `to_user(reply, message)`: a small model answering "What is my sister's
  name?" from the memory line "You said: my sister is Ann" often copies the
  user's words ("My sister is Ann."), and an acknowledgement quotes them
  ("Noted: I'm allergic to penicillin."). Each "my W" / "I W" of the reply whose
  pair also occurs in the user's message ("my sister", "I work") is the user's,
  so it becomes "your W" / "you W" ("Your sister is Ann."); with the verb
  turned too: "I'm W" / "I am W" → "you're W" / "you are W", "I was W" → "you
  were W", "I've", "I'd", "I'll" → "you've", "you'd", "you'll" ("I'm allergic"
  and "I am allergic" are one pair). Only pairs the user wrote are touched: the
  assistant speaking of itself ("I don't have that in memory") stays as it is.
- `stable_prefix(text, message)`: what of a reply still being decoded can be
  shown already: whole words only, and never a trailing "my"/"I" whose next
  word may still turn it into "your"/"you".
- `is_small_talk(message)` (`memagent.index.asking`, read once per message into
  `QueryFacts.small_talk`): greetings, thanks, goodbyes and bare acknowledgements
  ("Hello!", "thanks a lot", "ok") are not facts to store or learn from.
"""

from __future__ import annotations

import re

from memagent.index import is_small_talk

__all__ = ["NOT_IN_MEMORY", "is_small_talk", "not_in_memory", "stable_prefix", "to_user"]

_PAIR = re.compile(
    r"\b(my|i)(?:(['’](?:m|ve|d|ll))|\s+(am|was))?\s+([A-Za-z][A-Za-z'-]*)", re.IGNORECASE
)
_OWNER = {"my": "your", "i": "you"}
_VERB = {"'m": "am", "am": "am", "was": "was", "'ve": "'ve", "'d": "'d", "'ll": "'ll"}
"""How a pair's verb is compared: "I'm" and "I am" are the same pair."""
_HELD = re.compile(r"\b(?:i\s+(?:am|was)|my|i['\u2019](?:m|ve|d|ll)|i)$", re.IGNORECASE)
"""A reply's last words that the next word may still turn ("I am" → "you are")."""
_FLIPPED = {"'m": "'re", "am": "are", "was": "were", "'ve": "'ve", "'d": "'d", "'ll": "'ll"}
_REFUSAL = re.compile(r"I don't have that in memory", re.IGNORECASE)
NOT_IN_MEMORY = "I don't have that in memory."


def not_in_memory(named: list[str]) -> str:
    """The refusal when what matches in memory is about someone other than `named`."""
    who = " or ".join(named)
    return f"I don't have that in memory: what I have on it is about someone other than {who}."


def _verb(m: re.Match[str]) -> str:
    return (m.group(2) or m.group(3) or "").lower().replace("\u2019", "'")


def _key(m: re.Match[str]) -> tuple[str, str, str] | None:
    owner, verb = m.group(1).lower(), _verb(m)
    if verb and owner != "i":
        return None  # "my'm", "my am": not a pair
    return owner, _VERB.get(verb, ""), m.group(4).lower()


def _user_pairs(message: str) -> set[tuple[str, str, str]]:
    return {k for m in _PAIR.finditer(message) if (k := _key(m)) is not None}


def to_user(reply: str, message: str) -> str:
    """`reply` with the user's own "my W"/"I W" turned to "your W"/"you W" (see above)."""
    pairs = _user_pairs(message)
    if not pairs:
        return reply

    def swap(m: re.Match[str]) -> str:
        owner, word = m.group(1), m.group(4)
        if _key(m) not in pairs or _REFUSAL.match(m.string, m.start()):
            return m.group(0)
        new = _OWNER[owner.lower()]
        if owner[0].isupper() and (owner != "I" or m.start() == 0 or _sentence_start(m)):
            new = new.capitalize()
        verb = _verb(m)
        if m.group(2):  # a contraction: keep the user's apostrophe
            mark = m.group(2)[0]
            new += mark + _FLIPPED[verb][1:]
        elif verb:
            new += " " + _FLIPPED[verb]
        after = m.end(2) if m.group(2) else m.end(3) if m.group(3) else m.end(1)
        gap = m.string[after : m.start(4)]
        return f"{new}{gap}{word}"

    return _PAIR.sub(swap, reply)


def _sentence_start(m: re.Match[str]) -> bool:
    before = m.string[: m.start()].rstrip()
    return not before or before[-1] in ".!?\"'(\n"


def stable_prefix(text: str, message: str) -> str:
    """The part of a growing reply that `to_user` can no longer change (see above)."""
    cut = len(text)
    if text and not text[-1].isspace():
        cut = max(text.rfind(" "), text.rfind("\n")) + 1
    head = text[:cut]
    if _user_pairs(message):
        stripped = head.rstrip()
        held = _HELD.search(stripped)
        if held is not None:
            head = stripped[: held.start()]
    return to_user(head, message)
