"""One message to import, in the importer's own shape, whatever file it came from.

`{"id", "role", "content", "timestamp" (ISO 8601), "conversation_id"}`, only
`content` required; `speaker`, `session_id`, `title` and `tags` are also
understood. Content may be a string or OpenAI content parts
(`[{"type": "text", "text": …}]`). The export readers (`exports`) build these
from ChatGPT and Claude exports and transcripts; `validate` checks one record
of any of them with one error naming where it is.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from memagent.core import InvalidInput
from memagent.memory.chunks.model import MAX_SCOPE_CHARS, parse_timestamp

MAX_TITLE_CHARS = 500


class ImportedMessage(BaseModel):
    """One message to import (see the module doc)."""

    model_config = ConfigDict(extra="ignore")

    content: str
    id: str | int | None = None
    role: str | None = Field(default=None, max_length=64)
    speaker: str | None = Field(default=None, max_length=MAX_SCOPE_CHARS)
    timestamp: str | None = None
    conversation_id: str | int | None = None
    session_id: str | None = Field(default=None, max_length=MAX_SCOPE_CHARS)
    title: str | None = Field(default=None, max_length=MAX_TITLE_CHARS)
    tags: list[str] = Field(default_factory=list)
    inferred: frozenset[str] = Field(default=frozenset(), exclude=True)
    """What the importer filled in itself ("speaker", "session"); never read
    from a file (see `validate`)."""

    @field_validator("content", mode="before")
    @classmethod
    def _parts(cls, v: Any) -> Any:
        if isinstance(v, list):
            texts = [p.get("text") for p in v if isinstance(p, dict) and p.get("type") == "text"]
            return "\n".join(t for t in texts if isinstance(t, str))
        return v


def validate(obj: Any, where: str) -> ImportedMessage:
    """`obj` as a ImportedMessage, or InvalidInput saying at `where` what is wrong."""
    if not isinstance(obj, dict):
        raise InvalidInput(f"{where}: expected a JSON object with a `content` field")
    obj = {k: v for k, v in obj.items() if k != "inferred"}
    try:
        msg = ImportedMessage.model_validate(obj)
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
