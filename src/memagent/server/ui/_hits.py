"""Search hits as a person reads them: in score order, cut where the evidence
ends, each with a reason in plain words and a kind people use.

The page asks the engine for its ranking by relevance alone: diversity (one
conversation's later hits decayed, near-duplicates held back) serves the
model's context, where a few lines must cover many conversations; on a page a
person scans, a hit listed above another must score higher, so the score
shown is the one it was ranked by.

The relevance cut keeps a hit only if both hold:

- evidence: a keyword of the query matched it, or its meaning is close (cosine
  at least `MIN_COSINE`, the floor the assistant uses for its own context, see
  `memagent.agent.memory.relevant`). The meaning list always returns its nearest
  rows, however far, so a query no memory is about ("zzqxv quantum tuba") would
  otherwise list the whole store's least-unlike rows;
- share of the best: a score of at least a share of the top hit's. Fused
  scores have no fixed scale, but their ratio to the best does. The share is
  the largest (on a 0.05 grid) that keeps the turn holding the answer listed
  for at least 99% of LoCoMo questions whose answer is in the uncut list
  (`python -m bench.ui_relevance [--keyword-only]`, 231 questions of two
  conversations): 0.45 for hybrid search (all 213 kept; 20 hits become 12.9 on
  average; 0.5 drops 3.3%), 0.3 keyword-only (99.0% of 207 kept; 14.2 hits),
  whose scores are flatter. Nonsense queries list nothing (no keyword, no close
  meaning); a question on a topic never discussed lists the few turns sharing
  a word with it (2.2 on average over 20 such queries, from 20 before).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from memagent.agent.memory import EXCHANGE_KIND, MIN_COSINE
from memagent.core.jsontext import JsonObject
from memagent.index import Hit, SearchParams, query_terms
from memagent.index.roles import non_fact, said_by_assistant

MIN_SHARE = 0.45
MIN_SHARE_KEYWORD_ONLY = 0.3
CLOSE_COSINE = 0.55

KIND_WORDS = {"chunk": "Memory", "note": "Note", "fact": "Profile"}
TYPE_WORDS = {
    "decision": "decision",
    "pattern": "habit",
    "preference": "preference",
    "fact": "fact",
    "note": "",
}
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_WIKILINK = re.compile(r"\[\[([^\[\]|]*)\|?([^\[\]]*)\]\]")
_MARKS = re.compile(r"(?m)^\s{0,3}(#{1,6}|[-*+]|>)\s+|\*\*|__")


def plain(text: str) -> str:
    """A note's markdown as the words it shows: `[[Jane Doe]]` is Jane Doe,
    headings and list marks go (the page shows a hit's text, not its source)."""
    text = _WIKILINK.sub(lambda m: m.group(2) or m.group(1), text)
    return _MARKS.sub("", text)


def ranking(params: SearchParams) -> SearchParams:
    """`params` ranking by relevance alone (no diversity reordering)."""
    return params.model_copy(update={"session_decay": 1.0, "mmr_weight": 0.0, "session_head": 0})


@dataclass
class ShownHit:
    """One hit as the page shows it."""

    id: str
    kind: str
    label: str
    content: str
    score: float
    share: float
    reason: str
    href: str
    tags: list[str] = field(default_factory=list)
    when: str = ""
    speaker: str = ""


def has_evidence(why: Mapping[str, Any]) -> bool:
    """A keyword matched, or the meaning is close (keyword-only search: always)."""
    if "keyword" in why or "dense" not in why:
        return True
    cosine = why["dense"].get("cosine")
    return isinstance(cosine, int | float) and cosine >= MIN_COSINE


def relevant(hits: list[Hit]) -> list[Hit]:
    """The hits that pass the relevance cut (see the module docstring), in order."""
    with_evidence = [h for h in hits if has_evidence(h.why)]
    if not with_evidence:
        return []
    best = max(h.score for h in with_evidence)
    share = MIN_SHARE_KEYWORD_ONLY if keyword_only(hits) else MIN_SHARE
    return [h for h in with_evidence if best > 0 and h.score >= share * best]


def keyword_only(hits: list[Hit]) -> bool:
    """Whether the search ran without meaning (no embeddings): its `why.mode`."""
    return any(str(h.why.get("mode", "")).startswith("keyword") for h in hits)


def day_words(stamp: str | None, today: date | None = None) -> str:
    """`12 May` this year, else `12 May 2023`; empty when there is no date."""
    if not stamp:
        return ""
    try:
        day = datetime.fromisoformat(stamp.replace("Z", "+00:00")).astimezone(UTC).date()
    except ValueError:
        return ""
    this_year = (today or datetime.now(UTC).date()).year
    return f"{day.day} {day:%B}" + ("" if day.year == this_year else f" {day.year}")


def _quoted(words: list[str]) -> str:
    shown = [f"‘{w}’" for w in words[:4]]
    if len(shown) > 1:
        return ", ".join(shown[:-1]) + " and " + shown[-1]
    return shown[0]


def reason(hit: Hit, query: str, today: date | None = None) -> str:
    """Why a hit was found, in words: what matched, what lifted it, when it was said."""
    row, why = hit.row, hit.why
    parts: list[str] = []
    if "keyword" in why:
        own = {w.lower() for w in _WORD.findall(row.content)}
        terms = query_terms(query) or list(dict.fromkeys(_WORD.findall(query.lower())))
        said = [t for t in terms if t in own]
        tagged = [t for t in terms if t not in own and t in {x.lower() for x in row.tags}]
        typed = {w.lower(): w for w in reversed(_WORD.findall(query))}  # as the person wrote it
        if said:
            parts.append(f"matches {_quoted([typed.get(t, t) for t in said])}")
        if tagged:
            parts.append(f"tagged {_quoted([typed.get(t, t) for t in tagged])}")
        if not said and not tagged:
            parts.append("the messages around it mention your words")
    dense = why.get("dense")
    cosine = dense.get("cosine") if isinstance(dense, dict) else None
    if isinstance(cosine, int | float) and cosine >= MIN_COSINE:
        parts.append("very close in meaning" if cosine >= CLOSE_COSINE else "similar meaning")
    boosts = why.get("boosts") or {}
    if "neighbour" in boosts:
        parts.append("next to a message that matches")
    if "speaker" in boosts and row.speaker:
        parts.append(f"said by {row.speaker}")
    if "time" in boosts:
        parts.append("from the time you asked about")
    if "quantity" in boosts:
        parts.append("states a number")
    if "recency" in boosts:
        parts.append("recent")
    if "non_fact" in boosts:
        parts.append("a question or reply in a chat, so ranked lower")
    day = day_words(row.created_at, today)
    if day:
        verb = "said" if row.kind == "chunk" else "written"
        parts.append(f"{verb} on {day}")
    text = "; ".join(parts) or "found by the search"
    return text[0].upper() + text[1:]


def is_turn(source: JsonObject | None) -> bool:
    """A turn of a chat with the assistant rather than a memory: what the user
    said to it (a stored exchange), a question or command put to it, or its words."""
    if not isinstance(source, dict):
        return False
    return source.get("kind") == EXCHANGE_KIND or non_fact(source)


def label(kind: str, type_: str | None, source: JsonObject | None) -> str:
    """`Memory`, `Memory · preference`, `Note`, `Profile`, `Chat · you asked`…"""
    if kind == "chunk" and is_turn(source):
        if said_by_assistant(source):
            return "Chat · assistant"
        asked = isinstance(source, dict) and source.get("type") in ("question", "command")
        return "Chat · you asked" if asked else "Chat · you said"
    word = KIND_WORDS.get(kind, kind.capitalize())
    extra = TYPE_WORDS.get(type_ or "", type_ or "") if kind == "chunk" else ""
    return f"{word} · {extra}" if extra else word


def href(hit: Hit) -> str:
    from urllib.parse import quote

    row = hit.row
    if row.kind == "chunk":
        return f"/ui/memories/{quote(row.doc_id, safe='')}"
    if row.kind == "note" and row.path:
        return "/ui/notes/view?path=" + quote(row.path.removeprefix("vault/"), safe="/")
    return "/ui/profile"


def shown(hits: list[Hit], query: str, today: date | None = None) -> list[ShownHit]:
    """The hits past the cut, best first, as the page shows them."""
    kept = relevant(hits)
    kept.sort(key=lambda h: -h.score)
    best = kept[0].score if kept else 1.0
    return [
        ShownHit(
            id=h.row.doc_id,
            kind=h.row.kind,
            label=label(h.row.kind, h.row.type, h.row.source),
            content=plain(h.row.content) if h.row.kind == "note" else h.row.content,
            score=h.score,
            share=h.score / best if best > 0 else 0.0,
            reason=reason(h, query, today),
            href=href(h),
            tags=list(h.row.tags),
            when=day_words(h.row.created_at, today),
            speaker=h.row.speaker or "",
        )
        for h in kept
    ]
