"""A recalled memory as the agent reads it: `RecalledMemory`.

Made once from a search hit (`RecalledMemory.of`): what the context line, speaker
attribution and the relevance cut read (its text, kind, date, who said it, why
it was found), with its speaker worked out once (`source.speaker`, else the
`Name:` an imported line opens with). `to_json()` is what the `recall` tool
gives the model and code (the JSON boundary).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NotRequired

from typing_extensions import TypedDict

from memagent.core.jsontext import JsonObject
from memagent.index import Hit, Why
from memagent.index.roles import infer_speaker
from memagent.index.why import WhyJson

EXCHANGE_KIND = "agent_exchange"
"""`source.kind` of an exchange the agent stored (what the user said to it)."""
MIN_COSINE = 0.35
"""A hit with no keyword match must be at least this similar to the message."""
_SOURCE_KEYS = ("kind", "role", "type", "speaker")


def speaker_from(source: object, content: str) -> str | None:
    """Who said a line, if anyone: `source.speaker`, else for an imported line the
    `Name:` its text opens with (a file without speaker fields, indexed before
    imports inferred them)."""
    speaker = source.get("speaker") if isinstance(source, dict) else None
    if isinstance(speaker, str) and speaker.strip():
        return speaker.strip()
    return infer_speaker(source if isinstance(source, dict) else None, content)


class RecalledJson(TypedDict):
    """`RecalledMemory.to_json`: what the `recall` tool gives the model and code."""

    id: str
    kind: str
    content: str
    score: float
    tags: list[str]
    created_at: str | None
    path: str | None
    why: WhyJson
    source: NotRequired[JsonObject]
    user: NotRequired[object]
    """For an exchange the agent stored: what the user said."""


class MemorySourceJson(TypedDict):
    kind: str
    id: NotRequired[str]


def _said(value: object) -> str | None:
    """A stored exchange's side as text: a non-blank string, else None (a record
    edited by hand may hold anything there)."""
    return value if isinstance(value, str) and value.strip() else None


@dataclass(frozen=True)
class MemorySource:
    """One line a turn put in context: its `kind` (`note`, `fact`, `chunk`, …) and
    `id` (None for a profile line); `to_json` is what traces and HTTP replies show."""

    kind: str
    id: str | None = None

    def to_json(self) -> MemorySourceJson:
        return {"kind": self.kind} if self.id is None else {"kind": self.kind, "id": self.id}


@dataclass(frozen=True)
class RecalledMemory:
    """One recalled memory (module doc)."""

    id: str
    kind: str
    content: str
    score: float
    tags: list[str] = field(default_factory=list)
    created_at: str | None = None
    path: str | None = None
    why: Why = field(default_factory=Why)
    source: JsonObject | None = None
    """The memory's source record, cut to kind, role, type and speaker (None: none)."""
    user: str | None = None
    """For an exchange the agent stored: what the user said (None: not an exchange,
    or nothing said)."""
    reply: str | None = None
    """For an exchange the agent stored: what the assistant replied, None when empty
    (shown only for a question about the assistant's own words)."""
    speaker: str | None = None
    """Who said it (`speaker_from`), if anyone."""

    @classmethod
    def of(cls, hit: Hit) -> RecalledMemory:
        r = hit.row
        src = r.source
        return cls.make(
            id=r.doc_id,
            kind=r.kind,
            content=r.content,
            score=round(hit.score, 6),
            tags=list(r.tags or []),
            created_at=r.created_at,
            path=r.path,
            why=hit.why,
            source=src,
        )

    @classmethod
    def make(
        cls,
        *,
        id: str,
        kind: str,
        content: str,
        score: float,
        tags: list[str] | None = None,
        created_at: str | None = None,
        path: str | None = None,
        why: Why | None = None,
        source: object = None,
    ) -> RecalledMemory:
        """A recalled memory from its parts; `source` is the full record (cut here:
        none is an empty one, anything but a mapping is left out)."""
        kept: JsonObject | None = {} if not source else None
        user: str | None = None
        reply: str | None = None
        if isinstance(source, dict):
            kept = {k: v for k, v in source.items() if k in _SOURCE_KEYS}
            if source.get("kind") == EXCHANGE_KIND:
                user, reply = _said(source.get("user")), _said(source.get("reply"))
        return cls(
            id=id,
            kind=kind,
            content=content,
            score=score,
            tags=list(tags or []),
            created_at=created_at,
            path=path,
            why=why if why is not None else Why(),
            source=kept,
            user=user,
            reply=reply,
            speaker=speaker_from(source, str(content or "")),
        )

    def to_json(self) -> RecalledJson:
        """What the `recall` tool returns for it."""
        out: RecalledJson = {
            "id": self.id,
            "kind": self.kind,
            "content": self.content,
            "score": self.score,
            "tags": list(self.tags),
            "created_at": self.created_at,
            "path": self.path,
            "why": self.why.to_json(),
        }
        if self.source is not None:
            out["source"] = dict(self.source)
            if self.source.get("kind") == EXCHANGE_KIND:
                out["user"] = self.user
        return out

    @property
    def role(self) -> object:
        return (self.source or {}).get("role")

    def relevant(self) -> bool:
        """Worth showing the model: a keyword match, or close enough in meaning
        (keyword-only search has no cosine: there every hit matched a keyword)."""
        if self.why.keyword is not None or self.why.dense is None:
            return True
        return self.why.dense.score >= MIN_COSINE
