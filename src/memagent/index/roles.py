"""Who a question is about: the assistant's own words, or what people said.

Recall keeps the assistant's replies (and questions put to it) findable but
down-weighted (`SearchParams.non_fact_weight`), so they never crowd out what
the user stated. A question *about the assistant's words* — "remind me of the
restaurant you recommended", "in our previous chat you suggested…", "what were
the three objectives we outlined?" — is the exception: there the assistant's
reply is the evidence, and the penalty is lifted for it.
"""

from __future__ import annotations

import re

from memagent.core.jsontext import JsonObject

ASSISTANT_ROLES = frozenset({"assistant"})
ASSISTANT_TYPES = frozenset({"reply"})

_PAST = (
    r"gave|given|told|said|suggested|recommended|mentioned|provided|listed|shared|wrote"
    r"|written|explained|described|showed|shown|offered|proposed|came up with|created|made"
    r"|drafted|outlined|covered|discussed|talked about|went over|gone over|planned|answered"
)
_BASE = (
    r"give|tell|say|suggest|recommend|mention|provide|list|share|write|explain|describe"
    r"|show|offer|propose|come up with|create|make|draft|outline|cover|discuss|talk about"
    r"|go over|plan|answer"
)
# "we" is often the user and their family ("we made pasta"): only talk verbs.
_WE_PAST = (
    r"discussed|talked about|went over|gone over|covered|outlined|came up with|drafted"
    r"|brainstormed"
)
_ABOUT_ASSISTANT = re.compile(
    r"\b(?:"
    r"you\s+(?:(?:had|have|just|previously|earlier|once)\s+)?(?:" + _PAST + r")"
    r"|we\s+(?:(?:had|have|just|previously|earlier)\s+)?(?:" + _WE_PAST + r")"
    r"|did\s+(?:you|we)\s+(?:" + _BASE + r")"
    r"|your\s+(?:previous\s+|earlier\s+|last\s+)?(?:suggestions?|recommendations?|answers?"
    r"|responses?|advice|list|reply|replies|explanation|example)"
    r"|(?:our|the)\s+(?:previous|last|earlier|past)\s+(?:conversation|chat|discussion|talk|session)"
    r")\b",
    re.IGNORECASE,
)


def asks_about_assistant(query: str) -> bool:
    """True when the query asks about something the assistant said."""
    return _ABOUT_ASSISTANT.search(query) is not None


def said_by_assistant(source: JsonObject | None) -> bool:
    """True for the assistant's own words (`source.role`, or a stored reply)."""
    if not isinstance(source, dict):
        return False
    role, kind = source.get("role"), source.get("type")
    return (isinstance(role, str) and role in ASSISTANT_ROLES) or (
        isinstance(kind, str) and kind in ASSISTANT_TYPES
    )


NON_FACT_ROLES = frozenset({"assistant", "system", "tool"})
NON_FACT_TYPES = frozenset({"question", "command", "reply"})


def non_fact(source: JsonObject | None) -> bool:
    """True for a document that is not something a person stated: a question or
    command to the assistant (`source.type`), or the assistant's own words
    (`source.role`). Set by the agent when it stores an exchange and by `import`
    from each message's role."""
    if not isinstance(source, dict):
        return False
    role, kind = source.get("role"), source.get("type")  # a hand-edited file may hold anything
    return (isinstance(role, str) and role in NON_FACT_ROLES) or (
        isinstance(kind, str) and kind in NON_FACT_TYPES
    )


# "Name: text" — who said a line, when a file carries no speaker field. A name is
# one to three words, each capitalised (or a particle: "de", "van", …), no digits;
# labels that open notes ("Note:", "Update:", "Q:") are not names.
_NAME_PREFIX = re.compile(
    r"^\s*((?:[^\W\d_][\w'’.-]*)(?: (?:[^\W\d_][\w'’.-]*)){0,2}):[ \t]+\S", re.UNICODE
)
_PARTICLES = frozenset(
    re.findall(r"\S+", "de la le da di du del della van von der den ter bin al el y e")
)
NOT_NAMES = frozenset(
    re.findall(
        r"\S+",
        """
    a q re fwd fw ps nb fyi todo tl;dr note notes edit update updated correction reminder
    warning caution important tip hint example examples source sources step title subject
    summary date time when where location place address phone tel email mail name status
    result results error errors goal goals task tasks idea ideas fact facts info action
    actions decision decisions context problem solution conclusion agenda meeting topic
    keywords tags tag category type priority deadline due output input response reply
    answer question disclaimer recipe ingredients instructions directions pros cons quote
    translation definition usage breaking question answer why how what who which also
    and but so then today tomorrow yesterday morning evening night lunch dinner breakfast
    """,
    )
)


def name_prefix(text: str) -> str | None:
    """The speaker a line opens with ("Melanie: I ran a race" → "Melanie"), or
    None when the line does not open with a person's name and a colon."""
    m = _NAME_PREFIX.match(text[:80])
    if m is None:
        return None
    name = m.group(1)
    if len(name) > 40 or name.casefold() in NOT_NAMES:
        return None
    words = name.split(" ")
    if not words[0][0].isupper():
        return None
    if any(not (w[0].isupper() or w in _PARTICLES) for w in words[1:]):
        return None
    return name


def infer_speaker(source: JsonObject | None, content: str) -> str | None:
    """The speaker of an imported line whose record named none: the text's
    `Name:` prefix, for a person's line (`source.kind` "import", no
    `source.speaker`, not the assistant's, a system's or a tool's). None otherwise."""
    if not isinstance(source, dict) or source.get("kind") != "import":
        return None
    if isinstance(source.get("speaker"), str) and source["speaker"].strip():
        return None
    role = source.get("role")
    if isinstance(role, str) and role in NON_FACT_ROLES:
        return None
    return name_prefix(content)
