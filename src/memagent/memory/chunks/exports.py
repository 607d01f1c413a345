"""Chat exports people already have, read into the importer's `ImportedMessage`s.

Formats (`FORMATS`; `detect` picks one from the text when none is given):

- ``messages``: JSON lines (one message a line), a JSON array of messages, or
  ``{"messages": [...]}`` in the importer's own shape (see `message`).
- ``chatgpt``: ChatGPT's `conversations.json`: an array of conversations, each
  with a `title`, a `mapping` of nodes (`message`, `parent`, `children`) and a
  `current_node`. The conversation as last shown is the path from the root to
  `current_node` (edited or regenerated branches are left out); each message
  keeps its author's role (and name, as `speaker`), its `create_time` and the
  conversation's title; hidden system and context messages are skipped.
- ``claude``: Claude's export `conversations.json`: an array of conversations
  (`uuid`, `name`, `chat_messages`), each message with `sender` (human →
  role ``user``, assistant → ``assistant``), `text` (or text `content` parts)
  and `created_at`.
- ``transcript``: plain text, one ``Name: text`` turn a line (a line not
  starting with a name continues the turn above), optionally after a
  ``[YYYY-MM-DD HH:MM]`` timestamp. The file's name is its conversation id.

Every reader checks the whole file before anything is written, and says where
the first problem is (conversation, message or line; a JSON syntax error with
its line and column).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Literal

from memagent.core import InvalidInput
from memagent.core.jsontext import MAX_DEPTH, JsonObject, too_deep
from memagent.index.roles import name_prefix
from memagent.memory.chunks.message import ImportedMessage, validate

Format = Literal["auto", "messages", "chatgpt", "claude", "transcript"]
FORMATS: tuple[str, ...] = ("auto", "messages", "chatgpt", "claude", "transcript")
MAX_NODES = 1_000_000
"""Nodes one ChatGPT conversation's mapping may hold (a walk longer than this is a cycle)."""

_CLAUDE_ROLES = {"human": "user", "user": "user", "assistant": "assistant"}
ASSISTANT_NAMES = frozenset({"assistant", "ai", "chatgpt", "claude", "bot", "gpt", "copilot"})
"""Transcript speakers taken for the assistant (role "assistant"), not a person."""
_STAMP = re.compile(r"^\[(\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2})?(?:Z|[+-]\d{2}:?\d{2})?)\]\s*")


def json_document(text: str, name: str) -> Any:
    """One JSON document, or InvalidInput naming the line and column of the error."""
    deep = too_deep(text)
    if deep is not None:
        raise InvalidInput(f"{name}, line {deep}: nested too deeply (more than {MAX_DEPTH} levels)")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            f"{name}, line {exc.lineno}, column {exc.colno}: not valid JSON ({exc.msg})"
        ) from exc
    except (RecursionError, ValueError) as exc:
        raise InvalidInput(f"{name}: not usable JSON ({exc})") from exc


def json_lines(text: str, name: str) -> list[ImportedMessage]:
    """JSON lines: one message object a line; blank lines are skipped. Lines end at
    newlines only: U+2028 and friends are valid inside a JSON string (splitlines
    would cut a message there)."""
    out: list[ImportedMessage] = []
    for n, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        where = f"{name}, line {n}"
        if too_deep(line) is not None:
            raise InvalidInput(f"{where}: nested too deeply (more than {MAX_DEPTH} levels)")
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"{where}, column {exc.colno}: not valid JSON ({exc.msg})") from exc
        except (RecursionError, ValueError) as exc:
            raise InvalidInput(f"{where}: not usable JSON ({exc})") from exc
        out.append(validate(obj, where))
    return out


def _is_document(text: str) -> bool:
    """Whether JSON text is one document rather than JSON lines: it is, unless
    its first line is a complete JSON value followed by more."""
    first, _, rest = text.strip().partition("\n")
    if not rest.strip():
        return True
    try:
        json.loads(first)
    except (ValueError, RecursionError):
        return True
    return False


def _is_transcript(text: str) -> bool:
    head = text.lstrip()
    return head[:1] not in ("[", "{") or _STAMP.match(head) is not None


def _kind_of(data: Any) -> str:
    """A parsed JSON document's format: by the keys of its (first) conversation."""
    first = data[0] if isinstance(data, list) and data else data
    if isinstance(first, dict) and "mapping" in first:
        return "chatgpt"
    if isinstance(first, dict) and "chat_messages" in first:
        return "claude"
    return "messages"


def detect(text: str) -> str:
    """The format of `text` (one of `FORMATS` but "auto"): a transcript unless it
    opens with `[` or `{` (and not a `[date time]` stamp), JSON lines when its
    first line is a whole JSON value with more after it, else by the keys of
    the document's first conversation (InvalidInput if it is not JSON)."""
    if _is_transcript(text):
        return "transcript"
    if not _is_document(text):
        return "messages"
    return _kind_of(json_document(text, "input"))


def read(text: str, name: str, fmt: str = "auto") -> list[ImportedMessage]:
    """Messages of `text` in format `fmt` ("auto": as `detect` says), the whole
    file checked; InvalidInput (nothing read) at the first problem."""
    if fmt not in FORMATS:
        raise InvalidInput(f"unknown import format {fmt!r} (one of {', '.join(FORMATS)})")
    if fmt == "transcript" or (fmt == "auto" and _is_transcript(text)):
        kind, out = "transcript", transcript(text, name)
    elif fmt in ("auto", "messages") and (not text.strip() or not _is_document(text)):
        kind, out = "messages", json_lines(text, name)
    else:
        data = json_document(text, name)
        kind = _kind_of(data) if fmt == "auto" else fmt
        out = _READERS[kind](data, name)
    if not out:
        raise InvalidInput(f"{name}: no messages found ({kind} format)")
    return out


def messages(data: Any, name: str) -> list[ImportedMessage]:
    """The importer's own shape as one document: an array, `{"messages": [...]}`
    or a single message object."""
    if isinstance(data, dict) and isinstance(data.get("messages"), list):
        data = data["messages"]
    if isinstance(data, list):
        return [validate(m, f"{name}: message {i + 1}") for i, m in enumerate(data)]
    return [validate(data, f"{name}, line 1")]


def _conversations(data: Any, name: str, key: str, label: str) -> list[JsonObject]:
    if isinstance(data, dict) and key in data:
        data = [data]
    if not isinstance(data, list):
        raise InvalidInput(f"{name}: a {label} export is an array of conversations")
    for i, c in enumerate(data):
        if not isinstance(c, dict) or key not in c:
            raise InvalidInput(
                f"{name}: conversation {i + 1}: not a {label} conversation (no `{key}`)"
            )
    return data


def _obj(value: Any) -> JsonObject:
    return value if isinstance(value, dict) else {}


def _epoch(value: Any, where: str) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInput(f"{where}: create_time is not a number of seconds")
    try:
        return datetime.fromtimestamp(float(value), UTC).isoformat()
    except (OverflowError, OSError, ValueError) as exc:
        raise InvalidInput(f"{where}: create_time {value!r} is out of range") from exc


def _text_of(content: Any) -> str:
    """The text of a ChatGPT message's `content` (text parts; code and tool output)."""
    if not isinstance(content, dict):
        return ""
    parts = content.get("parts")
    texts: list[str] = []
    if isinstance(parts, list):
        for p in parts:
            if isinstance(p, str):
                texts.append(p)
            elif isinstance(p, dict) and isinstance(p.get("text"), str):
                texts.append(p["text"])
    elif isinstance(content.get("text"), str):
        texts.append(content["text"])
    return "\n".join(t for t in texts if t.strip())


def _path(mapping: JsonObject, current: Any, where: str) -> list[JsonObject]:
    """The nodes from the root to `current`, root first; a cycle or a missing
    node is an error. An empty mapping is an empty conversation."""
    if not mapping:
        return []
    if not isinstance(current, str) or current not in mapping:
        leaves = [k for k, v in mapping.items() if isinstance(v, dict) and not v.get("children")]
        if current is not None or len(leaves) != 1:
            raise InvalidInput(f"{where}: current_node {current!r} is not in the mapping")
        current = leaves[0]
    out: list[JsonObject] = []
    seen: set[str] = set()
    node_id: Any = current
    while node_id is not None:
        if not isinstance(node_id, str) or node_id not in mapping:
            raise InvalidInput(f"{where}: node {node_id!r} is not in the mapping")
        if node_id in seen or len(seen) >= MAX_NODES:
            raise InvalidInput(f"{where}: the mapping's parent links form a cycle at {node_id!r}")
        seen.add(node_id)
        node = mapping[node_id]
        if not isinstance(node, dict):
            raise InvalidInput(f"{where}: node {node_id!r} is not an object")
        out.append(node)
        node_id = node.get("parent")
    out.reverse()
    return out


def chatgpt(data: Any, name: str) -> list[ImportedMessage]:
    """ChatGPT's `conversations.json` (see the module docstring)."""
    out: list[ImportedMessage] = []
    for i, conv in enumerate(_conversations(data, name, "mapping", "ChatGPT"), 1):
        title = conv.get("title") if isinstance(conv.get("title"), str) else None
        where = f"{name}: conversation {i}" + (f" ({title[:60]!r})" if title else "")
        mapping = conv["mapping"]
        if not isinstance(mapping, dict):
            raise InvalidInput(f"{where}: `mapping` is not an object")
        cid = conv.get("conversation_id") or conv.get("id") or f"{name}:{i}"
        started = _epoch(conv.get("create_time"), where)
        for node in _path(mapping, conv.get("current_node"), where):
            msg = node.get("message")
            if msg is None:
                continue
            if not isinstance(msg, dict):
                raise InvalidInput(f"{where}: node {node.get('id')!r}: `message` is not an object")
            author = _obj(msg.get("author"))
            role = author.get("role")
            meta = _obj(msg.get("metadata"))
            if role == "system" or meta.get("is_visually_hidden_from_conversation"):
                continue
            text = _text_of(msg.get("content"))
            if not text.strip():
                continue
            mwhere = f"{where}, message {msg.get('id') or node.get('id')!r}"
            if not isinstance(role, str):
                raise InvalidInput(f"{mwhere}: no author role")
            record = {
                "id": msg.get("id") or node.get("id"),
                "role": role,
                "speaker": author.get("name") if isinstance(author.get("name"), str) else None,
                "content": text,
                "timestamp": _epoch(msg.get("create_time"), mwhere) or started,
                "conversation_id": str(cid),
                "title": title,
            }
            out.append(validate(record, mwhere))
    return out


def claude(data: Any, name: str) -> list[ImportedMessage]:
    """Claude's export `conversations.json` (see the module docstring)."""
    out: list[ImportedMessage] = []
    for i, conv in enumerate(_conversations(data, name, "chat_messages", "Claude"), 1):
        title = conv.get("name") if isinstance(conv.get("name"), str) and conv["name"] else None
        where = f"{name}: conversation {i}" + (f" ({title[:60]!r})" if title else "")
        chat = conv["chat_messages"]
        if not isinstance(chat, list):
            raise InvalidInput(f"{where}: `chat_messages` is not an array")
        cid = conv.get("uuid") or f"{name}:{i}"
        for j, msg in enumerate(chat, 1):
            mwhere = f"{where}, message {j}"
            if not isinstance(msg, dict):
                raise InvalidInput(f"{mwhere}: not an object")
            sender = msg.get("sender")
            if sender not in _CLAUDE_ROLES:
                raise InvalidInput(f"{mwhere}: sender {sender!r} is not human or assistant")
            raw = msg.get("text")
            text = raw if isinstance(raw, str) else ""
            if not text.strip() and isinstance(msg.get("content"), list):
                text = _text_of({"parts": msg["content"]})
            if not text.strip():
                continue  # an attachment alone, or an empty turn
            record = {
                "id": msg.get("uuid"),
                "role": _CLAUDE_ROLES[sender],
                "content": text,
                "timestamp": msg.get("created_at") or conv.get("created_at"),
                "conversation_id": str(cid),
                "title": title,
            }
            out.append(validate(record, mwhere))
    return out


def transcript(text: str, name: str) -> list[ImportedMessage]:
    """A ``Name: text`` transcript (see the module docstring)."""
    conv = name.rsplit(".", 1)[0] or name
    turns: list[tuple[int, str, str | None, list[str]]] = []  # line, speaker, time, lines
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if not line.strip():
            if turns:
                turns[-1][3].append("")
            continue
        stamp = None
        m = _STAMP.match(line)
        if m:
            stamp, line = m.group(1), line[m.end() :]
        speaker = name_prefix(line)
        if speaker is None:
            if not turns or stamp is not None:
                raise InvalidInput(f"{name}, line {n}: expected a `Name: text` line")
            turns[-1][3].append(line)
            continue
        turns.append((n, speaker, stamp, [line]))
    out: list[ImportedMessage] = []
    for n, speaker, stamp, lines in turns:
        record = {
            "role": "assistant" if speaker.casefold() in ASSISTANT_NAMES else "user",
            "speaker": speaker,
            "content": "\n".join(lines).strip(),
            "timestamp": stamp.replace(" ", "T") if stamp else None,
            "conversation_id": conv,
        }
        out.append(validate(record, f"{name}, line {n}"))
    return out


_READERS: dict[str, Callable[[Any, str], list[ImportedMessage]]] = {
    "messages": messages,
    "chatgpt": chatgpt,
    "claude": claude,
}
