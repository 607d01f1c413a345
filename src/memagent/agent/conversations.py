"""Conversations kept in `state/conversations/<id>.json` (written through
`Storage`), so `memagent chat --resume` continues where the user left off.

The file holds the messages as the user saw them (no memory context, no tool
steps: those are in the traces). When a conversation outgrows
`limits.max_file_bytes`, its oldest messages are dropped from the file; they
remain in episodic memory.
"""

from __future__ import annotations

import json
import re
import secrets
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memagent.core import CorruptFile, InvalidInput, MemoryHome, NotFound
from memagent.core.state import FileState, State
from memagent.core.storage import now_iso

ID_RE = re.compile(r"^c-[0-9]{8}-[0-9]{6}-[0-9a-f]{6}$")
ACTOR = "agent"
_FOLDER = "conversations"


class ConversationMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: str = Field(pattern="^(user|assistant)$")
    content: str
    ts: str


class Conversation(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str
    created: str
    updated: str
    messages: list[ConversationMessage] = Field(default_factory=list)

    @property
    def turns(self) -> int:
        return sum(1 for m in self.messages if m.role == "user")


def new_id() -> str:
    return f"c-{datetime.now(UTC).strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"


def check_id(conversation_id: str) -> str:
    if not isinstance(conversation_id, str) or not ID_RE.match(conversation_id):
        raise InvalidInput(
            f"invalid conversation id {str(conversation_id)[:80]!r} (like c-20250101-120000-abc123)"
        )
    return conversation_id


class Conversations:
    """`state` (default: the home's `state/` files; the database's state on
    PostgreSQL) holds them as `conversations/<id>.json`."""

    def __init__(self, home: MemoryHome, state: State | None = None) -> None:
        self.home = home
        self.dir = home.layout.state / "conversations"
        self.state: State = state if state is not None else FileState(home)

    def path_of(self, conversation_id: str) -> Path:
        return self.dir / f"{check_id(conversation_id)}.json"

    def new(self) -> Conversation:
        ts = now_iso()
        return Conversation(id=new_id(), created=ts, updated=ts)

    def ids(self) -> list[str]:
        stems = (n.rsplit("/", 1)[-1].removesuffix(".json") for n in self.state.names(_FOLDER))
        return sorted(stem for stem in stems if ID_RE.match(stem))

    def load(self, conversation_id: str) -> Conversation:
        name = f"{_FOLDER}/{check_id(conversation_id)}.json"
        shown = f"state/{name}"
        try:
            raw = self.state.read(name)
        except NotFound:
            raise NotFound(f"no conversation {conversation_id}") from None
        try:
            return Conversation.model_validate(json.loads(raw))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise CorruptFile(shown, f"not valid JSON: {exc}") from exc
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise CorruptFile(shown, f"{where}: {first['msg']}") from exc

    def latest(self) -> Conversation | None:
        """The most recently updated conversation, if any."""
        best: tuple[str, str] | None = None
        for cid in self.ids():
            try:
                conv = self.load(cid)
            except CorruptFile:
                continue
            if best is None or conv.updated > best[0]:
                best = (conv.updated, cid)
        return self.load(best[1]) if best else None

    @staticmethod
    def add_exchange(conv: Conversation, user: str, reply: str) -> None:
        """Add one exchange in memory (`save` writes the file)."""
        ts = now_iso()
        conv.messages.append(ConversationMessage(role="user", content=user, ts=ts))
        conv.messages.append(ConversationMessage(role="assistant", content=reply, ts=ts))
        conv.updated = ts

    def append(self, conv: Conversation, user: str, reply: str) -> None:
        """Add one exchange and save the file."""
        self.add_exchange(conv, user, reply)
        self.save(conv)

    def save(self, conv: Conversation) -> None:
        limit = self.home.config.limits.max_file_bytes
        data = self._encode(conv)
        while len(data) > limit and len(conv.messages) > 2:
            del conv.messages[:2]
            data = self._encode(conv)
        if len(data) > limit:
            raise InvalidInput(f"conversation {conv.id} is larger than {limit} bytes")
        self.state.write(
            f"{_FOLDER}/{check_id(conv.id)}.json", data, actor=ACTOR, op="conversation.save"
        )

    @staticmethod
    def _encode(conv: Conversation) -> bytes:
        doc: dict[str, Any] = conv.model_dump()
        return (json.dumps(doc, ensure_ascii=False, indent=1) + "\n").encode("utf-8")
