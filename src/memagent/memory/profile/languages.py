"""The languages people speak, so that a "language" fact is one: a 1.5B model reads
"backend dev, mostly go and postgres" as speaking Go and Postgres, and a developer's
profile should not say "Speaks TypeScript"; and a language asked to be answered in
("explain in simple english") is a way of answering, not one spoken."""

from __future__ import annotations

import re

from memagent.memory.profile.item_keys import tokens
from memagent.memory.profile.negation import subclause

_NAMES = """
    afrikaans albanian amharic arabic armenian assamese azerbaijani azeri basque belarusian
    bengali bangla bosnian breton bulgarian burmese cantonese catalan cebuano chinese cornish
    creole croatian czech danish dari dutch english esperanto estonian farsi fijian filipino
    finnish flemish french frisian gaelic galician georgian german greek gujarati haitian hausa
    hawaiian hebrew hindi hmong hungarian icelandic igbo indonesian irish italian japanese
    javanese kannada kazakh khmer kinyarwanda korean kurdish kyrgyz lao latin latvian lingala
    lithuanian luxembourgish macedonian malagasy malay malayalam maltese mandarin manx maori
    marathi mongolian nepali norwegian odia oriya pashto persian polish portuguese punjabi
    quechua romanian romansh russian samoan sanskrit scots serbian shona sindhi sinhala slovak
    slovenian somali sotho spanish swahili swedish tagalog tajik tamil tatar telugu thai tibetan
    tigrinya tongan turkish turkmen twi ukrainian urdu uyghur uzbek vietnamese welsh wolof xhosa
    yiddish yoruba zulu sign bsl asl auslan makaton patois
"""
SPOKEN = frozenset(_NAMES.split())
"""Languages (and sign languages) by their English names, lowercase."""


def is_spoken(value: str) -> bool:
    """`value` ("fluent Spanish", "a bit of German", "BSL") names a language people speak."""
    return any(t in SPOKEN for t in tokens(value.lower()))


_ANSWERING = re.compile(
    r"\b(?:answer|repl|respon|explain)\w*\b|\b(?:write|text|talk|speak) to me\b|"
    r"\buse (?:only |just |more |simple |plain )?(?=\w+\W*$|\w+ (?:blocks?|snippets?)\b)",
    re.I,
)
_SPEAKS = re.compile(r"\bI(?:'m| am)? (?:speak|fluent|native|learning|learn|studying)\b", re.I)


def answered_in(value: str, clause: str) -> bool:
    """A language read where the writer asks to be answered in it ("explain in simple
    english", "use code blocks"): a way of answering, not a language spoken."""
    part = subclause(value, clause)
    at = part.lower().find(value.lower())
    said = _ANSWERING.search(part)
    return at >= 0 and said is not None and said.start() < at and not _SPEAKS.search(part)
