"""A LoCoMo conversation written as a user's import file, in two shapes.

Benches import the dev conversations through `memagent import` (or the importer
behind it); how much metadata the file carries changes what recall can use. The
two shapes are the two ends a user's file falls between:

- ``"full"`` — what the benches have always imported: every record has
  ``{"id", "role", "speaker", "content", "timestamp", "conversation_id"}``, one
  conversation id per session (``<name>:session-<K>``), timestamps ordered
  (the session's date, turns one second apart).
- ``"minimal"`` — records with exactly ``{"id", "role", "content", "timestamp",
  "conversation_id"}``: no ``speaker`` field (the name is only in the text),
  and ONE conversation id for the whole file, so sessions are not marked.

In both shapes ``content`` is ``"Speaker: text"`` (plus ``[shares a photo: …]``
when the turn carries a caption), ``id`` is the turn's ``dia_id`` (``D3:12``,
what the questions' evidence names), and ``role`` is ``"user"``: both LoCoMo
speakers are people, neither is the assistant. The contents are identical, so a
gap between the shapes is the metadata's and nothing else.

    from bench.shapes import write_import
    write_import(json.loads(Path("conv-26.json").read_text()), out / "conv-26.jsonl", "minimal")
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

Shape = Literal["full", "minimal"]
SHAPES: tuple[Shape, ...] = ("full", "minimal")
MINIMAL_FIELDS = ("id", "role", "content", "timestamp", "conversation_id")
FULL_FIELDS = ("id", "role", "speaker", "content", "timestamp", "conversation_id")


@dataclass(frozen=True)
class Turn:
    """One LoCoMo turn as both shapes see it."""

    dia_id: str
    speaker: str
    content: str
    timestamp: str
    session: int


def session_time(raw: str) -> datetime:
    """'1:56 pm on 8 May, 2023' → aware datetime (UTC)."""
    return datetime.strptime(raw.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def conversation_turns(conversation: dict[str, Any]) -> list[Turn]:
    """The turns of a LoCoMo conversation (the file's object, or its
    `conversation` member) in order, sessions numbered from 1."""
    conv = conversation.get("conversation", conversation)
    out: list[Turn] = []
    n = 1
    while f"session_{n}" in conv:
        when = session_time(conv[f"session_{n}_date_time"])
        for i, t in enumerate(conv[f"session_{n}"]):
            text = f"{t['speaker']}: {t['text']}"
            if t.get("blip_caption"):
                text += f" [shares a photo: {t['blip_caption']}]"
            out.append(
                Turn(
                    dia_id=str(t["dia_id"]),
                    speaker=str(t["speaker"]),
                    content=text,
                    timestamp=(when + timedelta(seconds=i)).isoformat(),
                    session=n,
                )
            )
        n += 1
    if not out:
        raise ValueError("not a LoCoMo conversation: no session_1")
    return out


def records(conversation: dict[str, Any], shape: Shape, name: str = "conv") -> list[dict[str, str]]:
    """The import records of `conversation` in `shape`; `name` prefixes the
    conversation ids (``<name>:session-<K>`` for full, ``<name>`` for minimal)."""
    if shape not in SHAPES:
        raise ValueError(f"unknown shape {shape!r}: one of {', '.join(SHAPES)}")
    out: list[dict[str, str]] = []
    for t in conversation_turns(conversation):
        if shape == "full":
            out.append(
                {
                    "id": t.dia_id,
                    "role": "user",
                    "speaker": t.speaker,
                    "content": t.content,
                    "timestamp": t.timestamp,
                    "conversation_id": f"{name}:session-{t.session}",
                }
            )
        else:
            out.append(
                {
                    "id": t.dia_id,
                    "role": "user",
                    "content": t.content,
                    "timestamp": t.timestamp,
                    "conversation_id": name,
                }
            )
    return out


def write_import(
    conversation: dict[str, Any], path: Path, shape: Shape, name: str | None = None
) -> int:
    """Write `conversation` to `path` as JSON lines in `shape` (atomically:
    a temp file beside it, then rename). `name` defaults to the file's stem.
    Returns the number of records written."""
    rows = records(conversation, shape, name or path.stem)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            for r in rows:
                fh.write(json.dumps(r, ensure_ascii=False) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return len(rows)
