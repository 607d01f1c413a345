"""Reading conversations to import: JSON lines (one message a line) or an
OpenAI-style messages array, validated completely before anything is written.

A message: `{"id", "role", "content", "timestamp" (ISO 8601), "conversation_id"}`,
only `content` required; `speaker` and `tags` are also understood. Content may
be a string or OpenAI content parts (`[{"type": "text", "text": …}]`).

Every draft carries `source.import_key`: `id:<id>` for a message with an id,
else `sha256:` of its content, timestamp and conversation (a merged chunk: of
its messages' keys). An import skips keys already in the store, so importing a
file again, or again after an interrupted run, adds nothing twice.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from memagent.core import InvalidInput
from memagent.core.jsontext import loads, too_deep
from memagent.memory.chunks.chunking import split_text
from memagent.memory.chunks.model import MAX_SCOPE_CHARS, ChunkDraft, parse_timestamp

MAX_IMPORT_BYTES = 256 * 1024 * 1024


class Message(BaseModel):
    model_config = ConfigDict(extra="ignore")

    content: str
    id: str | int | None = None
    role: str | None = Field(default=None, max_length=64)
    speaker: str | None = Field(default=None, max_length=MAX_SCOPE_CHARS)
    timestamp: str | None = None
    conversation_id: str | int | None = None
    tags: list[str] = Field(default_factory=list)

    @field_validator("content", mode="before")
    @classmethod
    def _parts(cls, v: Any) -> Any:
        if isinstance(v, list):
            texts = [p.get("text") for p in v if isinstance(p, dict) and p.get("type") == "text"]
            return "\n".join(t for t in texts if isinstance(t, str))
        return v


def _message(obj: Any, where: str) -> Message:
    if not isinstance(obj, dict):
        raise InvalidInput(f"{where}: expected a JSON object with a `content` field")
    try:
        msg = Message.model_validate(obj)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(x) for x in err["loc"]) or "message"
        raise InvalidInput(f"{where}: {loc}: {err['msg']}") from exc
    if msg.timestamp is not None:
        try:
            parse_timestamp(msg.timestamp)
        except InvalidInput as exc:
            raise InvalidInput(f"{where}: {exc}") from exc
    if not msg.content.strip():
        raise InvalidInput(f"{where}: content is empty")
    return msg


def parse_messages(text: str, name: str = "input") -> list[Message]:
    """Messages from JSON lines, a JSON array, or `{"messages": [...]}`."""
    stripped = text.lstrip()
    if stripped.startswith("[") or (stripped.startswith("{") and '"messages"' in stripped[:200]):
        deep = too_deep(text)
        if deep is not None:
            raise InvalidInput(f"{name}, line {deep}: nested too deeply")
        try:
            data = json.loads(text)
        except ValueError:
            data = None  # not one document: read it as JSON lines below
        if isinstance(data, dict) and isinstance(data.get("messages"), list):
            data = data["messages"]
        if isinstance(data, list):
            return [_message(m, f"{name}: message {i + 1}") for i, m in enumerate(data)]
    out: list[Message] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        obj = loads(line, name, first_line=n)
        out.append(_message(obj, f"{name}, line {n}"))
    if not out:
        raise InvalidInput(f"{name}: no messages found")
    return out


def read_messages_stream(stream: BinaryIO, name: str = "stdin") -> list[Message]:
    """Messages from a byte stream (`memagent import -`), with the file limits."""
    raw = stream.read(MAX_IMPORT_BYTES + 1)
    if len(raw) > MAX_IMPORT_BYTES:
        raise InvalidInput(f"{name}: over the import limit of {MAX_IMPORT_BYTES} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{name}: not UTF-8 text (byte {exc.start})") from exc
    return parse_messages(text, name)


def load_messages(path: Path) -> list[Message]:
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from exc
    if size > MAX_IMPORT_BYTES:
        raise InvalidInput(f"{path} is {size} bytes; the import limit is {MAX_IMPORT_BYTES}")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{path}: not UTF-8 text") from exc
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from exc
    return parse_messages(text, path.name)


def import_key(msg: Message) -> str:
    """What identifies a message across imports (see the module docstring)."""
    if msg.id is not None:
        return f"id:{msg.id}"
    raw = "\x00".join(
        [msg.content, msg.timestamp or "", str(msg.conversation_id or ""), msg.speaker or ""]
    )
    return "sha256:" + hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()


def _source(msg: Message, origin: str) -> dict[str, Any]:
    src: dict[str, Any] = {"kind": "import", "file": origin, "import_key": import_key(msg)}
    if msg.id is not None:
        src["id"] = msg.id
    if msg.role is not None:
        src["role"] = msg.role
    if msg.speaker is not None:
        src["speaker"] = msg.speaker
    return src


def drafts_from_messages(
    messages: list[Message], *, origin: str, tags: list[str], merge: bool = False
) -> list[ChunkDraft]:
    """One draft per message, or with `merge` consecutive messages of one
    conversation joined and re-chunked (~100–800 tokens)."""

    def conv(m: Message) -> str | None:
        return str(m.conversation_id) if m.conversation_id is not None else None

    if not merge:
        return [
            ChunkDraft(
                content=m.content,
                tags=[*tags, *m.tags],
                created_at=m.timestamp,
                conversation_id=conv(m),
                source=_source(m, origin),
            )
            for m in messages
        ]
    drafts: list[ChunkDraft] = []
    group: list[Message] = []

    def flush() -> None:
        if not group:
            return
        text = "\n\n".join(
            f"{m.speaker or m.role}: {m.content}" if (m.speaker or m.role) else m.content
            for m in group
        )
        ids = [m.id for m in group if m.id is not None]
        keys = "\x00".join(import_key(m) for m in group)
        group_key = "merge:" + hashlib.sha256(keys.encode("utf-8", "surrogatepass")).hexdigest()
        for n, piece in enumerate(split_text(text)):
            drafts.append(
                ChunkDraft(
                    content=piece.text,
                    tags=list(dict.fromkeys([*tags, *(t for m in group for t in m.tags)])),
                    created_at=group[0].timestamp,
                    conversation_id=conv(group[0]),
                    source={
                        "kind": "import",
                        "file": origin,
                        "ids": ids,
                        "import_key": f"{group_key}:{n}",
                    },
                )
            )
        group.clear()

    for m in messages:
        if group and conv(group[-1]) != conv(m):
            flush()
        group.append(m)
    flush()
    return drafts
