"""What the index holds: `Doc`, one searchable document, and how each kind of
memory file becomes documents.

The index sits below the memory layer, so it reads chunk, note and profile files
generically (plain JSON / markdown); it never imports the stores that write them.
A file that does not parse yields no document rather than an error: the index is
a cache, and the store that owns the file reports the corruption.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from memagent.core.jsontext import JsonObject, too_deep
from memagent.index.roles import infer_speaker

CHUNK, NOTE, FACT = "chunk", "note", "fact"
KINDS = (CHUNK, NOTE, FACT)
_HASHTAG = re.compile(r"(?<![\w&])#([A-Za-z][\w/-]{0,63})")
_NOTE_MAX_CHARS = 20_000


@dataclass
class Doc:
    """One searchable document; `doc_id` is unique across kinds."""

    doc_id: str
    kind: str
    path: str
    content: str
    tags: list[str] = field(default_factory=list)
    type: str | None = None
    created: float = 0.0
    created_at: str | None = None
    conversation_id: str | None = None
    session_id: str | None = None
    user_id: str | None = None
    agent_id: str | None = None
    speaker: str | None = None
    deleted: bool = False
    access_count: int = 0
    accessed: float | None = None
    source: JsonObject | None = None
    links: list[tuple[str, str]] = field(default_factory=list)


def parse_time(value: Any) -> float | None:
    """Epoch seconds from an ISO 8601 string (naive means UTC), else None."""
    if not isinstance(value, str) or not value:
        return None
    try:
        dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def chunk_doc(rel_path: str, data: Any) -> Doc | None:
    """A chunk file (see `memagent.memory.chunks`) as a document."""
    if not isinstance(data, dict):
        return None
    cid, content = data.get("id"), data.get("content")
    if not isinstance(cid, str) or not isinstance(content, str):
        return None
    meta: JsonObject = data["metadata"] if isinstance(data.get("metadata"), dict) else {}
    created_at = _str_or_none(meta.get("created"))
    source = data.get("source") if isinstance(data.get("source"), dict) else None
    who = infer_speaker(source, content)
    if source is not None and who is not None:  # imported before imports inferred speakers
        inferred = source.get("inferred") if isinstance(source.get("inferred"), list) else []
        source = {**source, "speaker": who, "inferred": sorted({*map(str, inferred), "speaker"})}
    links: list[tuple[str, str]] = []
    for link in data.get("links") or []:
        if isinstance(link, dict) and isinstance(link.get("target"), str):
            links.append((str(link.get("type", "related_to")), link["target"]))
    tags = [t for t in data.get("tags") or [] if isinstance(t, str)]
    access = meta.get("access_count")
    return Doc(
        doc_id=cid,
        kind=CHUNK,
        path=rel_path,
        content=content,
        tags=tags,
        type=_str_or_none(data.get("type")),
        created=parse_time(created_at) or 0.0,
        created_at=created_at,
        conversation_id=_str_or_none(data.get("conversation_id")),
        session_id=_str_or_none(data.get("session_id")),
        user_id=_str_or_none(data.get("user_id")),
        agent_id=_str_or_none(data.get("agent_id")),
        speaker=_str_or_none((source or {}).get("speaker")) or _str_or_none(data.get("speaker")),
        deleted=bool(data.get("deleted_at")),
        access_count=access if isinstance(access, int) else 0,
        accessed=parse_time(meta.get("accessed")),
        source=source,
        links=links,
    )


def note_doc(rel_path: str, text: str, mtime: float) -> Doc:
    """A vault markdown note; its `#hashtags` and `tags:` front matter become tags."""
    tags = sorted({m.group(1).lower() for m in _HASHTAG.finditer(text)})
    if text.startswith("---\n"):
        end = text.find("\n---", 4)
        if end > 0:
            for line in text[4:end].splitlines():
                if line.lower().startswith("tags:"):
                    raw = line.split(":", 1)[1].strip().strip("[]")
                    tags += [t.strip().strip("'\"").lower() for t in raw.split(",") if t.strip()]
    created_at = datetime.fromtimestamp(mtime, UTC).isoformat(timespec="seconds")
    return Doc(
        doc_id=f"note:{rel_path}",
        kind=NOTE,
        path=rel_path,
        content=text[:_NOTE_MAX_CHARS],
        tags=sorted(set(tags)),
        type="note",
        created=mtime,
        created_at=created_at,
        source={"kind": "vault", "path": rel_path},
    )


def _expired(expiry: Any, today: date) -> bool:
    if not isinstance(expiry, str) or not expiry:
        return False
    try:
        return date.fromisoformat(expiry[:10]) < today
    except ValueError:
        return False


def fact_docs(rel_path: str, data: Any, mtime: float, today: date | None = None) -> list[Doc]:
    """Each non-expired item of a profile resource file, tagged with the file's tags."""
    if not isinstance(data, dict):
        return []
    today = today or datetime.now(UTC).date()
    meta: JsonObject = data["_metadata"] if isinstance(data.get("_metadata"), dict) else {}
    resource = _str_or_none(meta.get("resource_id")) or Path(rel_path).stem
    tags = [t for t in meta.get("tags") or [] if isinstance(t, str)]
    docs: list[Doc] = []
    for section, lists in data.items():
        if section.startswith("_") or not isinstance(lists, dict):
            continue
        for list_name, items in lists.items():
            if not isinstance(items, list):
                continue
            for item in items:
                if not isinstance(item, dict) or _expired(item.get("expiry"), today):
                    continue
                text = item.get("display") or item.get("item")
                if not isinstance(text, str) or not text.strip():
                    continue
                key = item.get("item") if isinstance(item.get("item"), str) else text
                added = _str_or_none(item.get("added"))
                docs.append(
                    Doc(
                        doc_id=f"fact:{resource}:{section}:{list_name}:{key}",
                        kind=FACT,
                        path=rel_path,
                        content=text,
                        tags=tags,
                        type="fact",
                        created=parse_time(added) or mtime,
                        created_at=added,
                        source={
                            "kind": "profile",
                            "resource_id": resource,
                            "section": section,
                            "list": list_name,
                            "item": key,
                        },
                    )
                )
    return docs


def load_json(path: Path) -> Any:
    """Parsed JSON, or None when the file is missing, not valid JSON or nested too
    deeply (such a file is skipped; `profile show` reports it)."""
    try:
        text = path.read_text(encoding="utf-8")
        if too_deep(text) is not None:
            return None
        return json.loads(text)
    except (OSError, ValueError, RecursionError):
        return None
