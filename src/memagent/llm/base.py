"""The one small interface every LLM backend implements.

`chat(messages, response_schema=…)` returns the whole reply and its token usage;
`stream(...)` yields text pieces. A backend that is given a `response_schema`
(a JSON Schema, usually from a pydantic model) must return text that is a JSON
document valid against it — by constrained decoding where it can, otherwise by
prompting, validating and repairing.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Literal, Protocol, TypedDict, runtime_checkable

from pydantic import BaseModel, Field

from memagent.core.errors import MemagentError
from memagent.core.jsontext import JsonSchema

Role = Literal["system", "user", "assistant"]


class Message(BaseModel):
    role: Role
    content: str


class Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    tokens_per_second: float | None = None
    """Generation speed as the backend measured it, when it did."""
    cached_tokens: int = 0
    """Prompt tokens the backend served from its prompt cache (the reused KV prefix)
    rather than evaluated, when it says (0: none, or not reported). Prompt
    evaluation, not generation, is most of a CPU model's time, so a prompt's cost
    is `prompt_tokens - cached_tokens`."""

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class ChatResult(BaseModel):
    text: str
    usage: Usage = Field(default_factory=Usage)
    model: str = ""


class MessageDict(TypedDict):
    """A message written as a plain dict: `{"role": "user", "content": "…"}`."""

    role: Role
    content: str


MessageLike = Message | MessageDict


def as_messages(messages: Sequence[MessageLike]) -> list[Message]:
    """Accept `Message` objects or `{"role", "content"}` dicts."""
    return [m if isinstance(m, Message) else Message.model_validate(m) for m in messages]


class LLMError(MemagentError, RuntimeError):
    """The backend could not produce a reply (server down, model missing, …).

    A `MemagentError`, so interfaces report it as one clean line, never a traceback.
    """


@runtime_checkable
class LLM(Protocol):
    """What the agent, the profile pipeline and deep recall need from a model."""

    name: str

    def chat(
        self,
        messages: Sequence[MessageLike],
        *,
        response_schema: JsonSchema | None = None,
        stop: Sequence[str] | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
    ) -> ChatResult: ...

    def stream(
        self,
        messages: Sequence[MessageLike],
        *,
        response_schema: JsonSchema | None = None,
        stop: Sequence[str] | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
    ) -> Iterator[str]: ...
