"""Any OpenAI-compatible chat server (OpenAI, Ollama, vLLM, llama.cpp server,
LM Studio) through the official `openai` client.

Structured replies: a `response_schema` is sent as `response_format` (JSON
schema) while the server accepts it; a server that rejects it (400/422) is asked
with the schema in the prompt instead, for the rest of this object's life. Either
way the reply is validated, and an invalid one gets exactly one repair round
before an `LLMError`. Transport and server failures become an `LLMError` that
says what to check, never a raw client traceback.

Deadlines: a call made under a request's budget (`core.deadline`) is decoded as a
stream even when the caller wants the whole reply, and the budget is checked per
streamed chunk, so a cancel (a 504, a client gone) or the end of the time closes
the connection within one token instead of when the server finishes. Token usage
then comes from `stream_options.include_usage`; a server that rejects that option
is asked without it, and one that sends no usage is counted one token per chunk.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from typing import Any, TypedDict

import openai
import pydantic
from openai.types.chat import ChatCompletion, ChatCompletionStreamOptionsParam
from openai.types.shared_params import ResponseFormatJSONSchema

from memagent.core.deadline import Budget, check_deadline, current_budget, remaining_time
from memagent.core.jsontext import JsonSchema
from memagent.llm._checks import checked_request
from memagent.llm._structured import render, validate_reply
from memagent.llm.base import ChatResult, LLMError, Message, MessageLike, Usage
from memagent.llm.yesno import TOP_ALTERNATIVES, YesNo, yes_share

_DETAIL_CHARS = 300
# What a non-conforming server body turns into inside the client's parsed objects.
_MALFORMED = (AttributeError, TypeError, ValueError, IndexError, KeyError)


class RequestOptions(TypedDict, total=False):
    """What a completion request carries besides the model, the messages and `stream`."""

    max_tokens: int
    temperature: float
    stop: list[str]
    response_format: ResponseFormatJSONSchema
    stream_options: ChatCompletionStreamOptionsParam
    logprobs: bool
    top_logprobs: int
    timeout: float


class OpenAICompatLLM:
    """One model on one OpenAI-compatible server."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str = "not-needed",
        timeout_s: float = 120.0,
        max_retries: int = 1,
    ) -> None:
        self.model = model
        self.name = f"openai:{model}"
        self._client = openai.OpenAI(
            base_url=base_url, api_key=api_key, timeout=timeout_s, max_retries=max_retries
        )
        self.base_url = str(self._client.base_url)
        self.supports_response_format: bool | None = None
        """None until the server has accepted or rejected a JSON-schema `response_format`."""
        self.supports_stream_usage: bool | None = None
        """None until the server has accepted or rejected `stream_options.include_usage`."""

    def close(self) -> None:
        self._client.close()

    # -- the LLM interface -------------------------------------------------------------

    def chat(
        self,
        messages: Sequence[MessageLike],
        *,
        response_schema: JsonSchema | None = None,
        stop: Sequence[str] | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
    ) -> ChatResult:
        msgs, stops = checked_request(messages, response_schema, stop, max_tokens, temperature)
        base: RequestOptions = {"max_tokens": max_tokens, "temperature": temperature}
        if stops:
            base["stop"] = stops
        if response_schema is None:
            return self._complete(msgs, base)
        return self._structured(msgs, base, response_schema)

    def stream(
        self,
        messages: Sequence[MessageLike],
        *,
        response_schema: JsonSchema | None = None,
        stop: Sequence[str] | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
    ) -> Iterator[str]:
        """Yield text as the server sends it.

        With a schema the reply must be validated as a whole, so: where the server
        takes `response_format` the pieces stream and the complete text is checked at
        the end (`LLMError` if invalid); otherwise the validated (maybe repaired)
        reply of `chat` is yielded in one piece. Bad arguments raise at the call,
        server errors on iteration.
        """
        msgs, stops = checked_request(messages, response_schema, stop, max_tokens, temperature)
        base: RequestOptions = {"max_tokens": max_tokens, "temperature": temperature}
        if stops:
            base["stop"] = stops
        return self._stream(msgs, base, response_schema)

    def yes_probability(self, messages: Sequence[MessageLike]) -> YesNo:
        """P(yes) / (P(yes) + P(no)) of the reply's first token (`memagent.llm.yesno`),
        from the server's `logprobs`; a server that sends none is an `LLMError`."""
        msgs, _ = checked_request(messages, None, None, 1, 0.0)
        probe: RequestOptions = {
            "max_tokens": 1,
            "temperature": 0.0,
            "logprobs": True,
            "top_logprobs": TOP_ALTERNATIVES,
        }
        resp = self._create(msgs, probe, stream=False)
        try:
            top = resp.choices[0].logprobs.content[0].top_logprobs
            pairs = [(t.token, t.logprob) for t in top]
        except (*_MALFORMED, pydantic.ValidationError) as exc:
            raise LLMError(f"{self.name} at {self.base_url} sent no token probabilities") from exc
        usage = None
        if getattr(resp, "usage", None) is not None:
            usage = Usage(
                prompt_tokens=resp.usage.prompt_tokens or 0,
                completion_tokens=resp.usage.completion_tokens or 0,
            )
        return YesNo(yes_share(pairs), usage)

    # -- internals ---------------------------------------------------------------------

    def _stream(
        self, msgs: list[Message], base: RequestOptions, response_schema: JsonSchema | None
    ) -> Iterator[str]:
        if response_schema is not None and self.supports_response_format is False:
            yield self._structured(msgs, base, response_schema).text
            return
        kwargs = base.copy()
        if response_schema is not None:
            kwargs["response_format"] = _response_format(response_schema)
        try:
            pieces = self._create(msgs, kwargs, stream=True)
        except LLMError as exc:
            if response_schema is not None and _rejects_format(exc):
                self.supports_response_format = False
                yield self._structured(msgs, base, response_schema).text
                return
            raise
        text: list[str] = []
        events = 0
        try:
            for chunk in pieces:
                check_deadline("the model call")
                events += 1
                if not chunk.choices:
                    continue
                piece = chunk.choices[0].delta.content
                if piece:
                    text.append(piece)
                    yield piece
        except openai.OpenAIError as exc:
            raise self._error(exc) from exc
        except _MALFORMED as exc:
            raise LLMError(f"{self.name} at {self.base_url} sent a malformed stream") from exc
        finally:
            pieces.close()
        if not events:
            raise LLMError(f"{self.name} at {self.base_url} sent no stream events")
        if response_schema is not None:
            self.supports_response_format = True
            _, why = validate_reply("".join(text), response_schema)
            if why is not None:
                raise LLMError(f"{self.name} streamed a reply that does not fit the schema: {why}")

    def _complete(self, msgs: list[Message], kwargs: RequestOptions) -> ChatResult:
        budget = current_budget()
        if budget.bounded:  # a deadline or a cancel can stop it: decode chunk by chunk
            return self._complete_streamed(msgs, kwargs, budget)
        started = time.perf_counter()
        try:
            resp = self._create(msgs, kwargs, stream=False)
        except _MALFORMED as exc:  # a body the client cannot even decode
            raise LLMError(f"{self.name} at {self.base_url} returned a malformed reply") from exc
        return self._result(resp, time.perf_counter() - started)

    def _result(self, resp: Any, elapsed: float) -> ChatResult:
        """The `ChatResult` of a whole (non-streamed) completion."""
        try:
            if not resp.choices:
                raise LLMError(f"{self.name} at {self.base_url} returned no choices")
            text = resp.choices[0].message.content or ""
            usage = Usage()
            if resp.usage is not None:
                usage = Usage(
                    prompt_tokens=resp.usage.prompt_tokens or 0,
                    completion_tokens=resp.usage.completion_tokens or 0,
                )
            model = str(resp.model or self.model)
        except _MALFORMED as exc:
            raise LLMError(f"{self.name} at {self.base_url} returned a malformed reply") from exc
        return ChatResult(text=str(text), usage=_with_speed(usage, elapsed), model=model)

    def _complete_streamed(
        self, msgs: list[Message], kwargs: RequestOptions, budget: Budget
    ) -> ChatResult:
        """The whole reply, read as a stream so that `budget` is checked per chunk;
        leaving early (`DeadlineExceeded`) closes the connection, which tells the
        server to stop generating."""
        started = time.perf_counter()
        pieces = self._open_stream(msgs, kwargs)
        text: list[str] = []
        events = chunks = 0
        usage: Usage | None = None
        model = self.model
        try:
            if _is_json(pieces):  # a server that ignores `stream` sends the whole reply
                body = ChatCompletion.model_validate_json(pieces.response.read())
                return self._result(body, time.perf_counter() - started)
            for chunk in pieces:
                budget.check("the model call")
                events += 1
                model = str(chunk.model or model)
                if chunk.usage is not None:
                    usage = Usage(
                        prompt_tokens=chunk.usage.prompt_tokens or 0,
                        completion_tokens=chunk.usage.completion_tokens or 0,
                    )
                if chunk.choices and chunk.choices[0].delta.content:
                    text.append(chunk.choices[0].delta.content)
                    chunks += 1
        except openai.OpenAIError as exc:
            budget.check("the model call")  # a read broken off by the cancel itself
            raise self._error(exc) from exc
        except (*_MALFORMED, pydantic.ValidationError) as exc:
            raise LLMError(f"{self.name} at {self.base_url} returned a malformed reply") from exc
        finally:
            pieces.close()
        if not events:
            raise LLMError(f"{self.name} at {self.base_url} sent no stream events")
        if usage is None:  # no usage chunk: one token per content chunk, prompt unknown
            usage = Usage(completion_tokens=chunks)
        return ChatResult(
            text="".join(text), usage=_with_speed(usage, time.perf_counter() - started), model=model
        )

    def _open_stream(self, msgs: list[Message], kwargs: RequestOptions) -> Any:
        """A streamed completion that asks for usage in its last chunk while the server
        takes `stream_options`; one that rejects it (400/422) is asked without it, and
        from then on never with it."""
        if self.supports_stream_usage is False:
            return self._create(msgs, kwargs, stream=True)
        try:
            pieces = self._create(
                msgs, {**kwargs, "stream_options": {"include_usage": True}}, stream=True
            )
        except LLMError as exc:
            if self.supports_stream_usage is not None or not _rejects_format(exc):
                raise
            pieces = self._create(msgs, kwargs, stream=True)  # the same refusal: raised
            self.supports_stream_usage = False
            return pieces
        self.supports_stream_usage = True
        return pieces

    def _structured(
        self, msgs: list[Message], base: RequestOptions, schema: JsonSchema
    ) -> ChatResult:
        kwargs = base.copy()
        if self.supports_response_format is not False:
            kwargs["response_format"] = _response_format(schema)
            try:
                first = self._complete(msgs, kwargs)
                self.supports_response_format = True
            except LLMError as exc:
                if not _rejects_format(exc):
                    raise
                self.supports_response_format = False
                kwargs = base.copy()
        if self.supports_response_format is False:
            msgs = _with_instruction(msgs, schema)
            first = self._complete(msgs, kwargs)
        good, why = validate_reply(first.text, schema)
        if good is not None:
            return first.model_copy(update={"text": good})
        repair = [
            *msgs,
            Message(role="assistant", content=first.text),
            Message(role="user", content=render("repair", error=why)),
        ]
        second = self._complete(repair, kwargs)
        usage = Usage(
            prompt_tokens=first.usage.prompt_tokens + second.usage.prompt_tokens,
            completion_tokens=first.usage.completion_tokens + second.usage.completion_tokens,
            tokens_per_second=second.usage.tokens_per_second,
        )
        good, why2 = validate_reply(second.text, schema)
        if good is None:
            raise LLMError(
                f"{self.name} did not produce JSON valid against the schema, "
                f"even after one repair round: {why2}"
            )
        return ChatResult(text=good, usage=usage, model=second.model)

    def _create(self, msgs: list[Message], kwargs: RequestOptions, *, stream: bool) -> Any:
        check_deadline("the model call")
        left = remaining_time()  # a request's deadline bounds the call to the server
        if left is not None:
            kwargs = {**kwargs, "timeout": max(0.001, left)}
        try:
            return self._client.chat.completions.create(
                model=self.model,
                messages=[m.model_dump() for m in msgs],  # type: ignore[misc]
                stream=stream,
                **kwargs,
            )
        except openai.OpenAIError as exc:
            raise self._error(exc) from exc

    def _error(self, exc: openai.OpenAIError) -> LLMError:
        where = f"{self.name} at {self.base_url}"
        if isinstance(exc, openai.APITimeoutError):
            err = LLMError(f"{where} did not answer in time")
        elif isinstance(exc, openai.APIConnectionError):
            err = LLMError(f"cannot reach {where}: is the server running? ({_cause(exc)})")
        elif isinstance(exc, openai.AuthenticationError):
            err = LLMError(f"{where} refused the API key (401): check llm.api_key_env")
        elif isinstance(exc, openai.NotFoundError):
            err = LLMError(f"{where}: not found (404): is the model name right? {_detail(exc)}")
        elif isinstance(exc, openai.APIStatusError):
            err = LLMError(f"{where} answered {exc.status_code}: {_detail(exc)}")
        else:
            err = LLMError(f"{where} failed: {str(exc)[:_DETAIL_CHARS]}")
        err.status_code = getattr(exc, "status_code", None)  # type: ignore[attr-defined]
        return err


def _with_speed(usage: Usage, elapsed: float) -> Usage:
    if usage.completion_tokens and elapsed > 0:
        usage.tokens_per_second = usage.completion_tokens / elapsed
    return usage


def _is_json(pieces: Any) -> bool:
    """Whether a streamed call was answered with a plain JSON body instead of events."""
    kind = str(pieces.response.headers.get("content-type", ""))
    return kind.split(";")[0].strip().lower() == "application/json"


def _response_format(schema: JsonSchema) -> ResponseFormatJSONSchema:
    return {
        "type": "json_schema",
        "json_schema": {"name": "response", "schema": schema, "strict": False},
    }


def _rejects_format(exc: LLMError) -> bool:
    return getattr(exc, "status_code", None) in (400, 422)


def _with_instruction(msgs: list[Message], schema: JsonSchema) -> list[Message]:
    """The messages with the schema instruction in the (first) system message."""
    instruction = render("instruction", schema_json=json.dumps(schema, ensure_ascii=False))
    if msgs and msgs[0].role == "system":
        head = Message(role="system", content=f"{msgs[0].content}\n\n{instruction}")
        return [head, *msgs[1:]]
    return [Message(role="system", content=instruction), *msgs]


def _cause(exc: BaseException) -> str:
    inner = exc.__cause__ or exc.__context__
    return str(inner or exc)[:_DETAIL_CHARS]


def _detail(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        msg = inner.get("message") if isinstance(inner, dict) else inner
        if msg:
            return str(msg)[:_DETAIL_CHARS]
    return str(exc.message)[:_DETAIL_CHARS]
