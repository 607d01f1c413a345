"""Argument checks every real backend applies before spending tokens."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import ValidationError

from memagent.core.errors import InvalidInput
from memagent.core.jsontext import JsonSchema
from memagent.llm._structured import check_schema
from memagent.llm.base import Message, MessageLike, as_messages

MAX_STOP_SEQUENCES = 16
MAX_MAX_TOKENS = 32768


def checked_request(
    messages: Sequence[MessageLike],
    response_schema: JsonSchema | None,
    stop: Sequence[str] | None,
    max_tokens: int,
    temperature: float,
) -> tuple[list[Message], list[str] | None]:
    """Validate one chat request; `InvalidInput` names the first thing wrong."""
    try:
        msgs = as_messages(messages)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise InvalidInput(f"bad message: {first['msg']}") from exc
    if not msgs:
        raise InvalidInput("a chat needs at least one message")
    if response_schema is not None:
        check_schema(response_schema)
    stops = None
    if stop is not None:
        if isinstance(stop, str):
            raise InvalidInput("stop must be a list of strings, not one string")
        stops = list(stop)
        if len(stops) > MAX_STOP_SEQUENCES or not all(isinstance(s, str) and s for s in stops):
            raise InvalidInput(f"stop must be at most {MAX_STOP_SEQUENCES} non-empty strings")
    if not isinstance(max_tokens, int) or not 0 < max_tokens <= MAX_MAX_TOKENS:
        raise InvalidInput(f"max_tokens must be an integer in 1..{MAX_MAX_TOKENS}")
    if not 0.0 <= float(temperature) <= 2.0:
        raise InvalidInput("temperature must be in 0..2")
    return msgs, stops
