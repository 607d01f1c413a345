"""The chunking engine: text in, chunk-sized pieces out, each with a type.

Split on paragraphs (blank lines); merge neighbouring pieces while they are
under `min_tokens` (~100), so a chunk carries enough context to be found; split
pieces over `max_tokens` (~800) at sentence boundaries (and, for a single giant
sentence, at word boundaries) so one chunk stays one embedding's worth. Tokens
are counted by the embedder's tokenizer when there is one, else approximated.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from memagent.embeddings import count_tokens

MIN_TOKENS = 100
MAX_TOKENS = 800
_PARAGRAPH = re.compile(r"\n\s*\n")
_SENTENCE = re.compile(r"(?<=[.!?…])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")

_TYPE_RULES: list[tuple[str, re.Pattern[str]]] = [
    (
        "decision",
        re.compile(
            r"\b(we|i|they|team)\s+(decided|chose|agreed|will go with|settled on|picked)\b"
            r"|\bdecision\b|\bdecided\b|\bgoing forward\b|\bwe'?ll use\b",
            re.I,
        ),
    ),
    (
        "preference",
        re.compile(
            r"\b(i|we|they|he|she)\s+(really\s+)?(prefer|like|love|enjoy|hate|dislike|can't stand)"
            r"|\b(favou?rite|prefers?|preference)\b|\brather than\b|\bwould rather\b",
            re.I,
        ),
    ),
    (
        "pattern",
        re.compile(
            r"\b(always|usually|every (day|week|morning|night|time)|whenever|tends? to|"
            r"habit|routine|often|each time)\b",
            re.I,
        ),
    ),
    (
        "fact",
        re.compile(
            r"\b(is|are|was|were|has|have|born|lives?|works?)\b.*\b(in|at|on|since|for)\b"
            r"|\b\d{4}\b|\b(my|his|her|their)\s+(name|birthday|address|job|email)\b",
            re.I,
        ),
    ),
]


def detect_type(text: str) -> str:
    """decision, preference, pattern, fact or note — the first rule that matches."""
    for name, rule in _TYPE_RULES:
        if rule.search(text):
            return name
    return "note"


@dataclass(frozen=True)
class Piece:
    text: str
    tokens: int
    type: str


def _split_long(text: str, max_tokens: int, count: Callable[[str], int]) -> list[str]:
    sentences = [s for s in _SENTENCE.split(text) if s.strip()]
    out: list[str] = []
    current = ""
    for sentence in sentences:
        if count(sentence) > max_tokens:
            if current:
                out.append(current)
                current = ""
            words = sentence.split()
            piece: list[str] = []
            for word in words:
                piece.append(word)
                if count(" ".join(piece)) > max_tokens:
                    piece.pop()
                    out.append(" ".join(piece))
                    piece = [word]
            if piece:
                current = " ".join(piece)
            continue
        candidate = f"{current} {sentence}".strip()
        if current and count(candidate) > max_tokens:
            out.append(current)
            current = sentence
        else:
            current = candidate
    if current:
        out.append(current)
    return out


def split_text(
    text: str,
    *,
    min_tokens: int = MIN_TOKENS,
    max_tokens: int = MAX_TOKENS,
    counter: Callable[[str], int] | None = None,
) -> list[Piece]:
    """Pieces of `text` between ~min and max tokens (a short text stays whole)."""
    count = counter or (lambda s: count_tokens(s))
    paragraphs = [p.strip() for p in _PARAGRAPH.split(text.replace("\r\n", "\n")) if p.strip()]
    parts: list[str] = []
    for para in paragraphs:
        parts += _split_long(para, max_tokens, count) if count(para) > max_tokens else [para]
    merged: list[str] = []
    for part in parts:
        if (
            merged
            and (count(merged[-1]) < min_tokens or count(part) < min_tokens)
            and count(merged[-1] + "\n\n" + part) <= max_tokens
        ):
            merged[-1] = merged[-1] + "\n\n" + part
        else:
            merged.append(part)
    return [Piece(m, count(m), detect_type(m)) for m in merged]
