"""Chat with memory: one agent turn (`/v1/chat`, or streamed as server-sent events
at `/v1/chat/stream`), and an OpenAI-compatible `/v1/chat/completions` that adds
the user's memory to any client's conversation.

The agent turn is `memagent.agent.Agent.turn` on the caller's memory home with
the server's LLM. `/v1/chat/completions` does not run the agent loop: it puts
the memory relevant to the last user message in a system message, asks the
model, returns an OpenAI `chat.completion` (or `chat.completion.chunk` events
ending in `data: [DONE]`), and stores the exchange as an episodic memory unless
`memory.remember` is false.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Annotated, Any, Literal, TypedDict

from fastapi import APIRouter
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator

from memagent.core.jsontext import JsonObject, JsonSchema
from memagent.llm import Message
from memagent.server._admission import RouteClass, admits
from memagent.server._context import Caller, CallerDep
from memagent.server._streams import SSE_MEDIA_TYPE, Emit, events_from_thread, sse_event

router = APIRouter(tags=["chat"])

MAX_MESSAGE_CHARS = 20_000
MAX_MESSAGES = 200
COMPAT_CONVERSATION = "openai-compat"


class ChatRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    message: str = Field(min_length=1, max_length=MAX_MESSAGE_CHARS)
    conversation_id: str | None = Field(
        default=None,
        pattern=r"^c-[0-9]{8}-[0-9]{6}-[0-9a-f]{6}$",
        description="Continue this conversation (default: a new one).",
    )
    mode: Literal["json", "python"] | None = Field(
        default=None, description="How the agent acts (default: the user's config)."
    )
    prompt_set: Literal["instruct", "qa", "small", "json", "python"] | None = Field(
        default=None,
        description="The agent's prompts (default: chosen by model and mode). `qa` answers "
        "with a short phrase and refuses when the memory does not ground the answer.",
    )
    asked_at: str | None = Field(
        default=None,
        max_length=64,
        description="When the question is asked (YYYY-MM-DD or ISO 8601): 'now' for relative "
        "times ('last week', 'how many days ago'), recall's time signals and the answer's "
        "prompt. Default: now.",
    )

    @field_validator("asked_at")
    @classmethod
    def _a_date(cls, value: str | None) -> str | None:
        from memagent.core import InvalidInput
        from memagent.index.temporal import parse_as_of

        if value is None:
            return None
        try:
            return parse_as_of(value).isoformat()
        except InvalidInput as exc:
            raise ValueError(str(exc)) from exc


class ChatUsage(BaseModel):
    prompt_tokens: int
    completion_tokens: int


class ChatReply(BaseModel):
    reply: str
    ok: bool = Field(description="False when the agent fell back to an honest non-answer.")
    conversation_id: str
    steps: int
    usage: ChatUsage
    seconds: float
    memory_tokens: int
    memory_sources: list[JsonObject]
    error: str | None = None


def agent_turn(
    caller: Caller, body: ChatRequest, on_text: Callable[[str], None] | None
) -> ChatReply:
    """One agent turn on the caller's memory with the server's model (`on_text`: each
    piece of the reply as the model writes it); the web page's chat runs it too."""
    from memagent.agent import Agent

    server = caller.server
    home = caller.home
    if body.conversation_id is not None:
        server.settle(caller.user)
    agent = Agent(
        home,
        server.llm(home),
        mode=body.mode,
        prompt_set=body.prompt_set,
        conversation=body.conversation_id,
        embeddings=server.embeddings,
        stores=server.stores_for(caller.user),
    )
    try:
        result = agent.turn(body.message, on_text=on_text, as_of=body.asked_at)
    finally:
        # The agent's memory writes finish after the reply, never before it.
        server.after_reply(caller.user, agent.close)
    return ChatReply.model_validate(result.to_json())


def _event_schema(names: list[str]) -> JsonSchema:
    """JSON Schema of one server-sent event (`event` name, `data` text)."""
    return {
        "type": "object",
        "properties": {"event": {"enum": names}, "data": {"type": "string"}},
        "required": ["event", "data"],
    }


@router.post("/v1/chat", response_model=ChatReply, summary="One agent turn with memory")
@admits(RouteClass.MODEL)
def chat(body: ChatRequest, caller: CallerDep) -> ChatReply:
    return agent_turn(caller, body, None)


@router.post(
    "/v1/chat/stream",
    summary="One agent turn, streamed as server-sent events",
    response_class=StreamingResponse,
    responses={
        200: {
            "description": 'Events `delta` ({"text"}), then `done` (the ChatReply) or '
            "`error` (a problem document).",
            "content": {SSE_MEDIA_TYPE: {"schema": _event_schema(["delta", "done", "error"])}},
        }
    },
)
@admits(RouteClass.MODEL)
def chat_stream(body: ChatRequest, caller: CallerDep) -> StreamingResponse:
    _ = caller.user  # an admin key without a user fails here, before the stream starts

    def work(emit: Emit) -> None:
        reply = agent_turn(caller, body, lambda text: emit("delta", {"text": text}))
        emit("done", reply.model_dump())

    async def events() -> AsyncIterator[bytes]:
        async for event, data in events_from_thread(work, "/v1/chat/stream"):
            yield sse_event(event, data)

    return StreamingResponse(events(), media_type=SSE_MEDIA_TYPE)


# -- OpenAI-compatible ---------------------------------------------------------------------
class CompatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[JsonObject] | None = None

    def text(self) -> str:
        if isinstance(self.content, list):
            parts = [p.get("text") for p in self.content if p.get("type") == "text"]
            return "\n".join(p for p in parts if isinstance(p, str))
        return self.content or ""


def _integral(value: Any) -> Any:
    """JSON has one number type: `25.0` is a valid JSON Schema integer, so take it as 25."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


class MemoryOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    recall_k: Annotated[int, BeforeValidator(_integral)] = Field(
        default=5, ge=0, le=50, description="Memories to add (0: none)."
    )
    remember: bool = Field(default=True, description="Store this exchange as a memory.")


class CompletionRequest(BaseModel):
    """An OpenAI chat-completions request; fields memagent does not use are ignored."""

    model_config = ConfigDict(extra="ignore")

    model: str = Field(default="memagent", max_length=256)
    messages: Annotated[list[CompatMessage], Field(min_length=1, max_length=MAX_MESSAGES)]
    stream: bool = False
    max_tokens: int | None = Field(default=None, ge=1, le=32_768)
    max_completion_tokens: int | None = Field(default=None, ge=1, le=32_768)
    temperature: float | None = Field(default=None, ge=0, le=2)
    stop: str | list[str] | None = None
    memory: MemoryOptions = Field(default_factory=MemoryOptions)


class CompatChoiceMessage(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: str


class CompatChoice(BaseModel):
    index: int
    message: CompatChoiceMessage
    finish_reason: str


class CompatUsage(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class Completion(BaseModel):
    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    choices: list[CompatChoice]
    usage: CompatUsage
    memory_sources: list[JsonObject] = Field(
        default_factory=list, description="What memagent put in context (ids and kinds)."
    )


class _Prepared(BaseModel):
    messages: list[Message]
    user: str
    sources: list[JsonObject]


def _prepare(caller: Caller, body: CompletionRequest) -> _Prepared:
    from memagent.core import InvalidInput

    convo = [(m.role, m.text()) for m in body.messages]
    total = sum(len(text) for _, text in convo)
    if total > MAX_MESSAGE_CHARS * 5:
        raise InvalidInput(f"the messages hold {total} characters; at most {MAX_MESSAGE_CHARS * 5}")
    users = [text for role, text in convo if role == "user" and text.strip()]
    if not users:
        raise InvalidInput("the conversation has no user message")
    last = users[-1]
    sources: list[JsonObject] = []
    messages: list[Message] = []
    memory = caller.server.memory_access_for(caller.user)
    if body.memory.recall_k > 0:
        budget = caller.home.config.agent.context_tokens
        ctx = memory.context(last[:MAX_MESSAGE_CHARS], budget_tokens=budget, k=body.memory.recall_k)
        if ctx.text:
            sources = [dict(s.to_json()) for s in ctx.sources]
            messages.append(
                Message(
                    role="system",
                    content="What you remember about the user (from memagent; use it when "
                    "it helps, never invent beyond it):\n" + ctx.text,
                )
            )
    for role, text in convo:
        if role in ("system", "developer"):
            messages.append(Message(role="system", content=text))
        elif role == "user":
            messages.append(Message(role="user", content=text))
        elif role == "assistant":
            messages.append(Message(role="assistant", content=text))
        elif text:
            messages.append(Message(role="user", content=f"(tool result) {text}"))
    return _Prepared(messages=messages, user=last, sources=sources)


def _remember(caller: Caller, body: CompletionRequest, user: str, reply: str) -> None:
    if body.memory.remember and reply.strip():
        memory = caller.server.memory_access_for(caller.user)
        memory.store_exchange(COMPAT_CONVERSATION, user[:MAX_MESSAGE_CHARS], reply, turn=0)


class ChatOptions(TypedDict):
    """The model call's options of one completion request (within the server's cap)."""

    max_tokens: int
    temperature: float
    stop: list[str] | None


def _options(body: CompletionRequest, caller: Caller) -> ChatOptions:
    cfg = caller.home.config.llm
    stop = [body.stop] if isinstance(body.stop, str) else body.stop
    return {
        "max_tokens": min(
            body.max_completion_tokens or body.max_tokens or cfg.max_tokens,
            caller.server.max_tokens,
        ),
        "temperature": cfg.temperature if body.temperature is None else body.temperature,
        "stop": stop,
    }


@router.post(
    "/v1/chat/completions",
    response_model=Completion,
    summary="OpenAI-compatible chat completions, with the user's memory added",
    responses={
        200: {
            "description": "A chat.completion, or with `stream: true` server-sent "
            "chat.completion.chunk events ending in `data: [DONE]`.",
            "content": {SSE_MEDIA_TYPE: {"schema": _event_schema(["message"])}},
        }
    },
)
@admits(RouteClass.MODEL)
def chat_completions(body: CompletionRequest, caller: CallerDep) -> Any:
    llm = caller.server.llm(caller.home)
    prepared = _prepare(caller, body)
    options = _options(body, caller)
    completion_id = "chatcmpl-" + secrets.token_hex(12)
    created = int(time.time())
    model = body.model
    if not body.stream:
        result = llm.chat(prepared.messages, **options)
        _remember(caller, body, prepared.user, result.text)
        usage = result.usage
        return Completion(
            id=completion_id,
            created=created,
            model=model,
            choices=[
                CompatChoice(
                    index=0, message=CompatChoiceMessage(content=result.text), finish_reason="stop"
                )
            ],
            usage=CompatUsage(
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
                total_tokens=usage.total_tokens,
            ),
            memory_sources=prepared.sources,
        )

    def chunk(delta: JsonObject, finish: str | None) -> JsonObject:
        return {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    def work(emit: Emit) -> None:
        pieces: list[str] = []
        emit("data", chunk({"role": "assistant", "content": ""}, None))
        stream: Iterator[str] = llm.stream(prepared.messages, **options)
        for piece in stream:
            pieces.append(piece)
            emit("data", chunk({"content": piece}, None))
        emit("data", chunk({}, "stop"))
        _remember(caller, body, prepared.user, "".join(pieces))

    async def events() -> AsyncIterator[bytes]:
        async for event, data in events_from_thread(work, "/v1/chat/completions"):
            if event == "error":
                yield sse_event(None, {"error": data})
                break
            yield sse_event(None, data)
        yield sse_event(None, "[DONE]")

    return StreamingResponse(events(), media_type=SSE_MEDIA_TYPE)
