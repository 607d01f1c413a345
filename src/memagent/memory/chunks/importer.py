"""Reading conversations to import, validated completely before anything is
written: the importer's own JSON lines or messages array, ChatGPT and Claude
exports and `Name: text` transcripts (`exports`; the format detected, or given).

A message: `{"id", "role", "content", "timestamp" (ISO 8601), "conversation_id"}`,
only `content` required (see `message`).

What a file lacks is inferred (`infer_metadata`), never required: a line that
opens with a person's name (`Melanie: …`) gets that `speaker` when its record
names none, and a conversation with no `session_id`s is split into sessions
where `SESSION_GAP` or more passes between two of its messages (chunks carry the
session as `session_id`; recall diversifies and lends context per session). The
chunk's `source.inferred` lists what was filled in.

Every draft carries `source.import_key`: `id:<id>` for a message with an id,
else `sha256:` of its content, timestamp, conversation and speaker as the file
has them (a merged chunk: of its messages' keys; a message repeated with neither
id nor timestamp, like "ok" twice in a transcript, counts its repeats). An
import skips keys already in the store, so importing a file again, or again
after an interrupted run, adds nothing twice.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import BinaryIO

from memagent.core import InvalidInput
from memagent.core.jsontext import JsonObject
from memagent.index.roles import NON_FACT_ROLES, name_prefix
from memagent.memory.chunks import exports
from memagent.memory.chunks.chunking import split_text
from memagent.memory.chunks.message import ImportedMessage
from memagent.memory.chunks.model import ChunkDraft, parse_timestamp

__all__ = [
    "MAX_IMPORT_BYTES",
    "SESSION_GAP",
    "ImportedMessage",
    "drafts_from_messages",
    "import_key",
    "infer_metadata",
    "load_messages",
    "parse_messages",
    "read_messages_stream",
]

MAX_IMPORT_BYTES = 256 * 1024 * 1024
SESSION_GAP = timedelta(minutes=30)
"""A pause this long between two messages of a conversation starts a new session
(see bench.recall_locomo --shape for what it was checked against)."""


def parse_messages(text: str, name: str = "input", fmt: str = "auto") -> list[ImportedMessage]:
    """Messages of `text` in `fmt` (`exports.FORMATS`; "auto" detects it), with
    what the file lacks inferred (`infer_metadata`)."""
    return infer_metadata(exports.read(text, name, fmt))


def read_messages_stream(
    stream: BinaryIO, name: str = "stdin", fmt: str = "auto"
) -> list[ImportedMessage]:
    """Messages from a byte stream (`memagent import -`), with the file limits."""
    raw = stream.read(MAX_IMPORT_BYTES + 1)
    if len(raw) > MAX_IMPORT_BYTES:
        raise InvalidInput(f"{name}: over the import limit of {MAX_IMPORT_BYTES} bytes")
    try:
        text = raw.decode("utf-8-sig")  # a BOM (Windows exports) is not content
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{name}: not UTF-8 text (byte {exc.start})") from exc
    return parse_messages(text, name, fmt)


def load_messages(path: Path, fmt: str = "auto") -> list[ImportedMessage]:
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from exc
    if size > MAX_IMPORT_BYTES:
        raise InvalidInput(f"{path} is {size} bytes; the import limit is {MAX_IMPORT_BYTES}")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror}") from exc
    try:
        text = raw.decode("utf-8-sig")  # a BOM (Windows exports) is not content
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{path}: not UTF-8 text (byte {exc.start})") from exc
    return parse_messages(text, path.name, fmt)


def infer_metadata(
    messages: list[ImportedMessage], gap: timedelta = SESSION_GAP
) -> list[ImportedMessage]:
    """`messages` with a `speaker` from each text's `Name:` prefix where the
    record has none (not for the assistant's, a system's or a tool's words),
    and sessions split at pauses of `gap` or more in each conversation whose
    records carry no `session_id` (messages without a timestamp get none). A
    session's id is its first message's time, so importing a longer version
    of the same file later gives the earlier messages the same sessions."""
    out: list[ImportedMessage] = []
    for m in messages:
        if m.speaker is None and (m.role or "") not in NON_FACT_ROLES:
            who = name_prefix(m.content)
            if who is not None:
                m = m.model_copy(update={"speaker": who, "inferred": m.inferred | {"speaker"}})
        out.append(m)
    by_conv: dict[str | None, list[int]] = {}
    for i, m in enumerate(out):
        by_conv.setdefault(_conv(m), []).append(i)
    for idx in by_conv.values():
        if any(out[i].session_id is not None for i in idx):
            continue
        timed = sorted(
            ((parse_timestamp(t), i) for i in idx if (t := out[i].timestamp)),
            key=lambda t: t[0],
        )
        start = prev = None
        for when, i in timed:
            if prev is None or when - prev >= gap:
                start = when
            prev = when
            assert start is not None
            sid = "session-" + start.isoformat(timespec="seconds")
            out[i] = out[i].model_copy(
                update={"session_id": sid, "inferred": out[i].inferred | {"session"}}
            )
    return out


def _conv(m: ImportedMessage) -> str | None:
    return str(m.conversation_id) if m.conversation_id is not None else None


def import_key(msg: ImportedMessage, repeat: int = 0) -> str:
    """What identifies a message across imports (see the module docstring): the
    record as the file has it, not what was inferred, so a file imported before
    inference existed is recognised. `repeat`: how many times the same record
    (no id, no timestamp) came before it in the file."""
    if msg.id is not None:
        return f"id:{msg.id}"
    speaker = "" if "speaker" in msg.inferred else msg.speaker or ""
    raw = "\x00".join([msg.content, msg.timestamp or "", str(msg.conversation_id or ""), speaker])
    key = "sha256:" + hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{key}#{repeat}" if repeat else key


def _keys(messages: list[ImportedMessage]) -> list[str]:
    seen: Counter[str] = Counter()
    out: list[str] = []
    for m in messages:
        key = import_key(m)
        if m.id is None and m.timestamp is None:
            n = seen[key]
            seen[key] += 1
            key = import_key(m, n)
        out.append(key)
    return out


def _source(msg: ImportedMessage, origin: str, key: str) -> JsonObject:
    src: JsonObject = {"kind": "import", "file": origin, "import_key": key}
    if msg.id is not None:
        src["id"] = msg.id
    if msg.role is not None:
        src["role"] = msg.role
    if msg.speaker is not None:
        src["speaker"] = msg.speaker
    if msg.title is not None:
        src["title"] = msg.title
    if msg.inferred:
        src["inferred"] = sorted(msg.inferred)
    return src


def _said(m: ImportedMessage) -> str:
    """A message as a line of a merged chunk: `Name: text` (the name not twice)."""
    who = m.speaker or m.role
    if not who or m.content.startswith(f"{who}:"):
        return m.content
    return f"{who}: {m.content}"


def drafts_from_messages(
    messages: list[ImportedMessage], *, origin: str, tags: list[str], merge: bool = False
) -> list[ChunkDraft]:
    """One draft per message, or with `merge` consecutive messages of one
    conversation and session joined and re-chunked (~100–800 tokens)."""
    keys = _keys(messages)
    if not merge:
        return [
            ChunkDraft(
                content=m.content,
                tags=[*tags, *m.tags],
                created_at=m.timestamp,
                conversation_id=_conv(m),
                session_id=m.session_id,
                source=_source(m, origin, key),
            )
            for m, key in zip(messages, keys, strict=True)
        ]
    drafts: list[ChunkDraft] = []
    group: list[tuple[ImportedMessage, str]] = []

    def flush() -> None:
        if not group:
            return
        text = "\n\n".join(_said(m) for m, _ in group)
        ids = [m.id for m, _ in group if m.id is not None]
        joined = "\x00".join(k for _, k in group)
        group_key = "merge:" + hashlib.sha256(joined.encode("utf-8", "surrogatepass")).hexdigest()
        first = group[0][0]
        for n, piece in enumerate(split_text(text)):
            source: JsonObject = {
                "kind": "import",
                "file": origin,
                "ids": ids,
                "import_key": f"{group_key}:{n}",
            }
            if first.title is not None:
                source["title"] = first.title
            drafts.append(
                ChunkDraft(
                    content=piece.text,
                    tags=list(dict.fromkeys([*tags, *(t for m, _ in group for t in m.tags)])),
                    created_at=first.timestamp,
                    conversation_id=_conv(first),
                    session_id=first.session_id,
                    source=source,
                )
            )
        group.clear()

    for m, key in zip(messages, keys, strict=True):
        if group and (_conv(group[-1][0]), group[-1][0].session_id) != (_conv(m), m.session_id):
            flush()
        group.append((m, key))
    flush()
    return drafts
