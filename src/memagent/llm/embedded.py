"""The embedded models run in-process by llama.cpp through `xllamacpp`.

- `embedded` is Qwen2.5-Coder-1.5B-Instruct (Q4_K_M); `embedded:gemma-270m` is
  Gemma 3 270M, a small base model for low-memory machines and fast tests. Both
  ship as PyPI packages holding parts of the GGUF; `memagent.llm.models`
  assembles and verifies them once into the model cache.
- The model is loaded lazily, on the first request, and once per process: every
  `EmbeddedLLM` with the same model and settings shares one engine.
- The instruct model gets real chat messages through the chat template stored
  in its GGUF (llama.cpp's chat-completions path). The base model's turn tokens
  are untrained, so it gets a plain transcript (`prompts/transcript.jinja`)
  completed until the next `User:` line; it does what few-shot turns show it.
- Prompts put the fixed part first (system, examples), so llama.cpp's prompt
  cache (`cache_prompt`) serves that prefix again on the next request.
- With a `response_schema`, decoding is always constrained by it (llama.cpp turns
  the JSON Schema into a grammar), and the result is validated once more.
"""

from __future__ import annotations

import json
import os
import queue
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any, TypedDict

from jinja2 import Environment, StrictUndefined

from memagent.core.deadline import Budget, current_budget
from memagent.core.jsontext import JsonObject, JsonSchema
from memagent.llm._checks import checked_request
from memagent.llm._structured import validate_reply
from memagent.llm.base import ChatResult, LLMError, Message, MessageLike, Usage
from memagent.llm.models import DEFAULT_MODEL, MODELS, ModelSpec, model_dir, model_path
from memagent.llm.yesno import TOP_ALTERNATIVES, YesNo, yes_share

__all__ = ["EmbeddedLLM", "model_dir", "model_path", "render_transcript", "spec_for"]

TURN_STOPS = ("\nUser:", "\nAssistant:")


class LlamaRequest(TypedDict, total=False):
    """What a request to the in-process llama.cpp server holds (its chat or text
    completion body): the instruct model gets `messages`, the base model `prompt`."""

    max_tokens: int
    temperature: float
    cache_prompt: bool
    messages: list[dict[str, str]]
    prompt: str
    stop: list[str]
    json_schema: JsonSchema
    stream: bool
    stream_options: dict[str, bool]
    logprobs: bool
    top_logprobs: int


# -- the engine: one per process and settings --------------------------------------------


@dataclass
class _Engine:
    server: Any
    path: Path
    load_seconds: float
    threads: int
    """The threads it runs with (`auto_threads()` when asked for 0)."""


def auto_threads(cores: int | None = None, load: float | None = None) -> int:
    """What `llm.threads = 0` (the default) means: the cores this process may run
    on less the one-minute load average, rounded, at least 1 (so 2 on an idle
    2-core machine, 1 as soon as another process keeps a core busy). Why: llama.cpp's
    threads meet at a barrier after every matrix product, so one that loses its
    core stalls the rest; on a busy 2-core machine 2 threads ran many times slower
    than 1 (`python -m bench.llm_threads`; docs/guides/models.md)."""
    if cores is None:
        cores = (
            len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        ) or 1
    if load is None:
        try:
            load = os.getloadavg()[0]
        except (AttributeError, OSError):  # no load average on this system
            load = 0.0
    return max(1, min(cores, round(cores - load)))


_EngineKey = tuple[str, int, int, str]
_engines: dict[_EngineKey, _Engine] = {}
_engines_lock = threading.Lock()


def spec_for(model: str) -> ModelSpec:
    """The embedded model named `model` (a key of `memagent.llm.models.MODELS`)."""
    try:
        return MODELS[model]
    except KeyError:
        raise LLMError(
            f"unknown embedded model {model[:80]!r}: one of {', '.join(MODELS)}"
        ) from None


def _engine(spec: ModelSpec, n_ctx: int, threads: int, directory: Path | None) -> _Engine:
    key = (spec.key, n_ctx, threads, str(directory or ""))
    with _engines_lock:
        if key in _engines:
            return _engines[key]
        path = model_path(spec, directory)
        try:
            import xllamacpp as xlc
        except ImportError as exc:
            raise LLMError(
                "llama.cpp bindings are not installed: pip install 'memagent[embedded]'"
            ) from exc
        # the first request waits for this (seconds for the default model): say so
        print(f"memagent: loading {spec.description} …", file=sys.stderr, flush=True)
        started = time.perf_counter()
        params = xlc.CommonParams()
        params.model.path = str(path)
        params.n_ctx = n_ctx
        params.n_parallel = 1
        n_threads = threads if threads > 0 else auto_threads()
        params.cpuparams.n_threads = n_threads
        params.cpuparams_batch.n_threads = n_threads
        params.n_gpu_layers = 0
        params.verbosity = -1
        params.warmup = False
        try:
            server = xlc.Server(params)
        except Exception as exc:
            raise LLMError(f"llama.cpp could not load {path}: {exc}") from exc
        _engines[key] = _Engine(server, path, time.perf_counter() - started, n_threads)
        return _engines[key]


@cache
def _transcript_template() -> Any:
    env = Environment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=True)
    raw = files("memagent.llm").joinpath("prompts/transcript.jinja").read_text(encoding="utf-8")
    return env.from_string(raw)


def render_transcript(messages: Sequence[Message]) -> str:
    """The prompt the base model completes (system text, then User/Assistant turns)."""
    return str(_transcript_template().render(messages=messages)).rstrip()


class EmbeddedLLM:
    """An embedded model; cheap to construct (nothing loads until the first request).

    `model` is a key of `memagent.llm.models.MODELS`: `qwen2.5-coder-1.5b` (the
    default, spec `embedded`) or `gemma-270m` (spec `embedded:gemma-270m`).
    """

    def __init__(
        self,
        *,
        model: str = DEFAULT_MODEL,
        n_ctx: int = 4096,
        threads: int = 0,
        model_directory: Path | None = None,
    ) -> None:
        self.spec = spec_for(model)
        self.name = "embedded" if model == DEFAULT_MODEL else f"embedded:{model}"
        self.n_ctx = n_ctx
        self.threads = threads
        self.model_directory = model_directory

    @property
    def instruct(self) -> bool:
        """True when the model follows instructions (chat template), False for a base model."""
        return self.spec.instruct

    def _key(self) -> _EngineKey:
        return (self.spec.key, self.n_ctx, self.threads, str(self.model_directory or ""))

    def _server(self) -> Any:
        return _engine(self.spec, self.n_ctx, self.threads, self.model_directory).server

    def _handle(self, request: LlamaRequest, callback: Any = None) -> Any:
        server = self._server()
        handler = server.handle_chat_completions if self.instruct else server.handle_completions
        return handler(request) if callback is None else handler(request, callback)

    def load(self) -> float:
        """Load the model now (if not yet loaded in this process); its load time in seconds."""
        return _engine(self.spec, self.n_ctx, self.threads, self.model_directory).load_seconds

    @property
    def loaded(self) -> bool:
        return self._key() in _engines

    def chat(
        self,
        messages: Sequence[MessageLike],
        *,
        response_schema: JsonSchema | None = None,
        stop: Sequence[str] | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
    ) -> ChatResult:
        request = self._request(messages, response_schema, stop, max_tokens, temperature)
        request["stream"] = True  # token by token, so the request's budget can stop it
        if self.instruct:
            request["stream_options"] = {"include_usage": True}  # a last chunk with usage
        self._server()  # load errors are LLMErrors of their own
        budget = current_budget()  # read here: llama.cpp may call back from its own thread
        reply = _Collected()

        def on_chunk(chunk: Any) -> bool:
            reply.add(chunk)
            return reply.failed is not None or budget.stopped()

        try:
            resp = self._handle(request, on_chunk)
        except Exception as exc:
            raise LLMError(f"the embedded model failed: {exc}") from exc
        if isinstance(resp, dict) and "error" in resp:  # refused before decoding
            reply.failed = resp
        if reply.failed is not None:
            raise LLMError(f"the embedded model failed: {_error_text(reply.failed)}")
        if reply.finish is None:
            budget.check("the model call")  # stopped by the budget: DeadlineExceeded
            raise LLMError("the embedded model stopped without finishing its reply")
        text = "".join(reply.text).strip()
        if response_schema is not None:
            text = self._checked_json(text, response_schema, reply.finish)
        return ChatResult(text=text, usage=reply.usage, model=self.name)

    def yes_probability(self, messages: Sequence[MessageLike]) -> YesNo:
        """P(yes) / (P(yes) + P(no)) of the reply's first token (`memagent.llm.yesno`):
        one token decoded, its top alternatives read from llama.cpp's logprobs; the
        prompt's prefix comes from the cache like any other request's. The base model
        has no chat turns to ask in: `LLMError`."""
        if not self.instruct:
            raise LLMError(f"{self.name} cannot judge yes/no questions (a base model)")
        request = self._request(messages, None, None, 1, 0.0)
        request["logprobs"], request["top_logprobs"] = True, TOP_ALTERNATIVES
        self._server()
        current_budget().check("the model call")
        try:
            resp = self._handle(request)
        except Exception as exc:
            raise LLMError(f"the embedded model failed: {exc}") from exc
        if not isinstance(resp, dict) or "error" in resp:
            raise LLMError(f"the embedded model failed: {_error_text(resp)}")
        try:
            top = resp["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
            pairs = [(t["token"], t["logprob"]) for t in top]
        except (KeyError, IndexError, TypeError) as exc:
            raise LLMError("the embedded model gave no token probabilities") from exc
        return YesNo(yes_share(pairs), _usage(resp))

    def stream(
        self,
        messages: Sequence[MessageLike],
        *,
        response_schema: JsonSchema | None = None,
        stop: Sequence[str] | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
    ) -> Iterator[str]:
        """Yield text pieces as they are decoded; closing the iterator stops decoding.

        With a schema the pieces are constrained as in `chat`, and the whole reply is
        validated at the end (`LLMError` if it was cut short by `max_tokens`).
        Bad arguments raise at the call; the model loads on first iteration.
        """
        request = self._request(messages, response_schema, stop, max_tokens, temperature)
        request["stream"] = True
        return self._stream(request, response_schema, current_budget())

    # -- internals ---------------------------------------------------------------------

    def _stream(
        self, request: LlamaRequest, response_schema: JsonSchema | None, budget: Budget
    ) -> Iterator[str]:
        self._server()
        pieces: queue.Queue[tuple[str, Any]] = queue.Queue()
        cancelled = threading.Event()

        def on_chunk(chunk: Any) -> bool:
            pieces.put(("chunk", chunk))
            return cancelled.is_set() or budget.stopped()

        def work() -> None:
            try:
                self._handle(request, on_chunk)
            except Exception as exc:
                pieces.put(("error", exc))
            pieces.put(("done", None))

        worker = threading.Thread(target=work, name="memagent-embedded-stream", daemon=True)
        worker.start()
        text: list[str] = []
        finish: Any = None
        leading = True
        try:
            while True:
                kind, item = pieces.get()
                if kind == "done":
                    break
                if kind == "error":
                    raise LLMError(f"the embedded model failed: {item}")
                if not isinstance(item, dict) or "error" in item:
                    raise LLMError(f"the embedded model failed: {_error_text(item)}")
                for choice in item.get("choices") or []:
                    piece = _choice_text(choice)
                    finish = choice.get("finish_reason") or finish
                    if leading:
                        piece = piece.lstrip()
                        leading = not piece
                    if piece:
                        text.append(piece)
                        yield piece
        finally:
            cancelled.set()
            worker.join()
        if finish is None:
            budget.check("the model call")  # stopped by the budget: DeadlineExceeded
        if not text and finish is None:
            raise LLMError("the embedded model produced no output")
        if response_schema is not None:
            self._checked_json("".join(text).strip(), response_schema, finish)

    def _request(
        self,
        messages: Sequence[MessageLike],
        response_schema: JsonSchema | None,
        stop: Sequence[str] | None,
        max_tokens: int,
        temperature: float,
    ) -> LlamaRequest:
        msgs, stops = checked_request(messages, response_schema, stop, max_tokens, temperature)
        request: LlamaRequest = {
            "max_tokens": max_tokens,
            "temperature": temperature,
            "cache_prompt": True,
        }
        if self.instruct:
            request["messages"] = [
                {"role": m.role, "content": _valid_unicode(m.content)} for m in msgs
            ]
            if stops:
                request["stop"] = stops
        else:
            request["prompt"] = _valid_unicode(render_transcript(msgs))
            request["stop"] = [*TURN_STOPS, *(stops or [])]
        if response_schema is not None:
            request["json_schema"] = _compact(response_schema)
        return request

    def _checked_json(self, text: str, schema: JsonSchema, finish: Any) -> str:
        good, why = validate_reply(text, schema)
        if good is not None:
            return good
        if finish == "length":
            raise LLMError(
                "the embedded model's JSON reply was cut off at max_tokens; raise max_tokens "
                "or bound the schema (maxLength, maximum, maxItems)"
            )
        raise LLMError(f"the embedded model's reply does not fit the schema: {why}")


class _Collected:
    """A streamed reply as its chunks arrive: text, finish reason, usage, or an error."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.finish: Any = None
        self.usage = Usage()
        self.failed: Any = None

    def add(self, chunk: Any) -> None:
        if not isinstance(chunk, dict) or "error" in chunk:
            self.failed = chunk
            return
        for choice in chunk.get("choices") or []:
            self.text.append(_choice_text(choice))
            self.finish = choice.get("finish_reason") or self.finish
        if chunk.get("usage") or chunk.get("timings"):
            self.usage = _usage(chunk)


def _valid_unicode(text: str) -> str:
    """Lone surrogates (which llama.cpp's JSON layer refuses) become U+FFFD."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _compact(schema: JsonSchema) -> JsonSchema:
    """The schema with JSON whitespace fixed (llguidance's `x-guidance` option).

    Flexible whitespace lets a small model spend its tokens on indentation, or
    loop on newlines until `max_tokens`; compact JSON is shorter and cannot.
    """
    if "x-guidance" in schema:
        return schema
    return {**schema, "x-guidance": {"whitespace_flexible": False}}


def _choice_text(choice: JsonObject) -> str:
    """The text of a completion choice, a chat choice, or a streamed chat delta."""
    for key in ("message", "delta"):
        part = choice.get(key)
        if isinstance(part, dict):
            return str(part.get("content") or "")
    return str(choice.get("text") or "")


def _usage(resp: JsonObject) -> Usage:
    """Token counts from `usage`, else from llama.cpp's `timings` (a streamed reply
    without usage: prompt tokens evaluated plus those served from the cache); the
    cached part from `timings.cache_n`, else `usage.prompt_tokens_details`."""
    raw = resp.get("usage") or {}
    timings = resp.get("timings") or {}
    speed = timings.get("predicted_per_second")
    prompt = raw.get("prompt_tokens")
    if prompt is None:
        prompt = int(timings.get("prompt_n") or 0) + int(timings.get("cache_n") or 0)
    completion = raw.get("completion_tokens")
    if completion is None:
        completion = timings.get("predicted_n")
    cached = timings.get("cache_n")
    if cached is None:
        details = raw.get("prompt_tokens_details")
        cached = details.get("cached_tokens") if isinstance(details, dict) else 0
    return Usage(
        prompt_tokens=int(prompt or 0),
        completion_tokens=int(completion or 0),
        tokens_per_second=float(speed) if speed else None,
        cached_tokens=min(int(cached or 0), int(prompt or 0)),
    )


def _error_text(resp: Any) -> str:
    if isinstance(resp, dict) and isinstance(resp.get("error"), dict):
        return str(resp["error"].get("message") or resp["error"])[:300]
    return json.dumps(resp, default=str)[:300]
