"""A model wrapper that answers a prompt it has seen from a file, not the model.

Why: an answer benchmark on the embedded model costs seconds a call; re-scoring,
a threshold sweep or a leave-one-out grid re-sends mostly the same prompts. With
temperature 0 the same prompt gives the same reply, so the reply is kept by the
prompt's hash and replayed.

Contract: `cached_llm(inner, path)` returns an object with the `LLM` interface
(and `yes_probability` when `inner` has it). The key is the SHA-256 of the model
name, the call kind, the messages, the response schema, stop strings, max tokens
and temperature. A hit returns the stored text (or P(yes)) and usage and adds the
call's original seconds to `replayed_s`, so latency figures can count what the call
cost when it ran. Misses and failures go to `inner`; failures are not stored. The
cache file is JSON lines under `bench/results/` (gitignored), appended and flushed
per entry; a torn last line (a killed run) is skipped when loading. `calls` and
`hits` count model calls asked for and those answered from the file.

Cost: a CPU model's time goes to the prompt tokens it evaluates and the tokens it
generates. llama.cpp (one slot) serves again the longest prefix a prompt shares
with the previous request's prompt and reply; `PrefixCache` replays that for every
call, hit or miss, so `evaluated` (prompt tokens not served from the reused prefix,
estimated) and `generated` count what the calls in this order would cost, also when
an earlier run in another order recorded them. `measured_cached` sums the cached
tokens llama.cpp reported for the calls that ran now (a check of the estimate).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from memagent.llm.base import LLM, ChatResult, LLMError, MessageLike, Usage, as_messages
from memagent.llm.yesno import YesNo, YesNoJudge

RESULTS = Path(__file__).resolve().parent / "results"


def rendered(messages: Sequence[MessageLike]) -> str:
    """The prompt as a ChatML template lays it out (Qwen's): the text whose prefix
    llama.cpp's prompt cache reuses, up to where the reply begins."""
    parts = [f"<|im_start|>{m.role}\n{m.content}<|im_end|>\n" for m in as_messages(messages)]
    return "".join(parts) + "<|im_start|>assistant\n"


def shared_prefix(a: str, b: str) -> int:
    """How many leading characters `a` and `b` share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class PrefixCache:
    """One llama.cpp slot's prompt cache, replayed: each call reuses the characters
    its prompt shares with the slot's last prompt and reply, counted in tokens at the
    prompt's own characters per token (an estimate: the model's tokenizer is not
    loaded for a replay). At least one prompt token is always evaluated."""

    def __init__(self) -> None:
        self.slot = ""
        self.prompt = 0
        self.evaluated = 0
        self.generated = 0

    def call(self, messages: Sequence[MessageLike], usage: Usage, reply: str) -> int:
        """Count one call; the prompt tokens it reuses (estimated)."""
        text = rendered(messages)
        common = shared_prefix(self.slot, text)
        tokens = usage.prompt_tokens
        reused = min(tokens - 1, round(tokens * common / len(text))) if tokens else 0
        self.prompt += tokens
        self.evaluated += tokens - max(reused, 0)
        self.generated += usage.completion_tokens
        self.slot = text + reply
        return max(reused, 0)


def prompt_key(kind: str, model: str, messages: Sequence[MessageLike], **params: Any) -> str:
    body = {
        "kind": kind,
        "model": model,
        "messages": [m.model_dump() for m in as_messages(messages)],
        **params,
    }
    raw = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


class CachedLLM:
    """`inner` behind a prompt-hash cache (module doc)."""

    def __init__(self, inner: LLM, path: Path, *, offline: bool = False) -> None:
        self.inner = inner
        self.offline = offline
        """Never call `inner`: a miss is an `LLMError` (re-scoring what is cached)."""
        self.misses = 0
        self.name = inner.name
        self.path = path
        self.calls = 0
        self.hits = 0
        self.replayed_s = 0.0
        self.prefix = PrefixCache()
        self.measured_cached = 0
        """Cached prompt tokens llama.cpp reported for the calls run now (not replayed)."""
        self.estimated_cached = 0
        """`PrefixCache`'s estimate of the same, for the same calls."""
        self.judged: list[float] = []
        """Every P(yes) returned, in order (a question's checks: `judged[before:]`)."""
        self._entries: dict[str, dict[str, Any]] = {}
        if path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines():
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a torn last line from a killed run
                if isinstance(entry, dict) and isinstance(entry.get("key"), str):
                    self._entries[entry["key"]] = entry

    def __len__(self) -> int:
        return len(self._entries)

    def _store(self, entry: dict[str, Any]) -> None:
        self._entries[entry["key"]] = entry
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(entry, ensure_ascii=False) + "\n")
            f.flush()
            os.fsync(f.fileno())

    def _hit(self, key: str) -> dict[str, Any] | None:
        self.calls += 1
        entry = self._entries.get(key)
        if entry is not None:
            self.hits += 1
            self.replayed_s += float(entry.get("seconds", 0.0))
            return entry
        self.misses += 1
        if self.offline:
            raise LLMError("not in the answer cache (offline)")
        return None

    def chat(
        self,
        messages: Sequence[MessageLike],
        *,
        response_schema: dict[str, Any] | None = None,
        stop: Sequence[str] | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
    ) -> ChatResult:
        key = prompt_key(
            "chat",
            self.name,
            messages,
            schema=response_schema,
            stop=list(stop or []),
            max_tokens=max_tokens,
            temperature=temperature,
        )
        entry = self._hit(key)
        if entry is not None:
            usage = Usage(**entry["usage"])
            self.prefix.call(messages, usage, entry["text"])
            return ChatResult(text=entry["text"], usage=usage, model=self.name)
        t0 = time.perf_counter()
        res = self.inner.chat(
            messages,
            response_schema=response_schema,
            stop=stop,
            max_tokens=max_tokens,
            temperature=temperature,
        )
        self._store(
            {
                "key": key,
                "text": res.text,
                "usage": res.usage.model_dump(),
                "seconds": round(time.perf_counter() - t0, 3),
            }
        )
        self.estimated_cached += self.prefix.call(messages, res.usage, res.text)
        self.measured_cached += res.usage.cached_tokens
        return res

    def stream(
        self,
        messages: Sequence[MessageLike],
        *,
        response_schema: dict[str, Any] | None = None,
        stop: Sequence[str] | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
    ) -> Iterator[str]:
        """The cached whole reply, in pieces (a benchmark needs no live tokens)."""
        text = self.chat(
            messages,
            response_schema=response_schema,
            stop=stop,
            max_tokens=max_tokens,
            temperature=temperature,
        ).text
        for i in range(0, len(text), 16):
            yield text[i : i + 16]


class CachedJudgeLLM(CachedLLM):
    """A `CachedLLM` whose inner model also gives yes/no token probabilities."""

    def yes_probability(self, messages: Sequence[MessageLike]) -> YesNo:
        key = prompt_key("yes_probability", self.name, messages)
        entry = self._hit(key)
        if entry is not None:
            usage = Usage(**entry["usage"]) if entry.get("usage") else None
            self.prefix.call(messages, usage or Usage(), "")
            self.judged.append(float(entry["p_yes"]))
            return YesNo(float(entry["p_yes"]), usage)
        assert isinstance(self.inner, YesNoJudge)
        t0 = time.perf_counter()
        got = self.inner.yes_probability(messages)
        self._store(
            {
                "key": key,
                "p_yes": got.p_yes,
                "usage": got.usage.model_dump() if got.usage else None,
                "seconds": round(time.perf_counter() - t0, 3),
            }
        )
        self.estimated_cached += self.prefix.call(messages, got.usage or Usage(), "")
        self.measured_cached += got.usage.cached_tokens if got.usage else 0
        self.judged.append(float(got.p_yes))
        return got


def cached_llm(inner: LLM, path: Path, *, offline: bool = False) -> CachedLLM:
    """`inner` behind the cache at `path`; judge-capable when `inner` is."""
    if isinstance(inner, YesNoJudge):
        return CachedJudgeLLM(inner, path, offline=offline)
    return CachedLLM(inner, path, offline=offline)
