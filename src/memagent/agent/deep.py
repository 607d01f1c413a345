"""Recursive retrieval (`memagent ask --deep`): the model searches memory by
writing code in the sandbox, with `search_chunks`, `read_chunk` and
`llm_query`, and ends with `FINAL(answer)`.

Bounded: at most `max_iterations` model steps, and `llm_query` may recurse
into sub-questions at most `max_depth` levels deep (each sub-call is a plain
completion, counted in the trace). When the budget runs out the answer says so.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NotRequired, TypedDict

from memagent.agent.acting import PythonRun
from memagent.agent.memory import MemoryAccess
from memagent.agent.prompts import PromptSet, load_prompt_set
from memagent.agent.protocol import StepInvalid, parse_step
from memagent.agent.traces import StepRecord, StepRecordJson
from memagent.core import InvalidInput, MemagentError
from memagent.core.jsontext import JsonSchema
from memagent.llm import LLM, Message, Usage

if TYPE_CHECKING:
    from memagent.sandbox import IsolatedSession

_SCHEMA: JsonSchema = {
    "type": "object",
    "properties": {"python": {"type": "string", "minLength": 1, "maxLength": 4000}},
    "required": ["python"],
    "additionalProperties": False,
}


class DeepUsage(TypedDict):
    prompt_tokens: int
    completion_tokens: int
    tokens_per_second: NotRequired[float]


class DeepJson(TypedDict):
    """`DeepResult.to_json` (what `memagent ask --deep --json` prints)."""

    answer: str
    ok: bool
    iterations: int
    llm_queries: int
    usage: DeepUsage
    seconds: float
    steps: list[StepRecordJson]


class ChunkHit(TypedDict):
    """One hit of `search_chunks`, as the code sees it."""

    id: str
    content: str
    score: float


@dataclass
class DeepResult:
    answer: str
    ok: bool
    iterations: int
    llm_queries: int
    usage: Usage = field(default_factory=Usage)
    seconds: float = 0.0
    steps: list[StepRecord] = field(default_factory=list)

    def to_json(self) -> DeepJson:
        return {
            "answer": self.answer,
            "ok": self.ok,
            "iterations": self.iterations,
            "llm_queries": self.llm_queries,
            "usage": _usage_json(self.usage),
            "seconds": round(self.seconds, 3),
            "steps": [s.to_json() for s in self.steps],
        }


def _usage_json(usage: Usage) -> DeepUsage:
    out: DeepUsage = {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
    }
    if usage.tokens_per_second is not None:
        out["tokens_per_second"] = usage.tokens_per_second
    return out


def deep_ask(
    memory: MemoryAccess,
    llm: LLM,
    question: str,
    *,
    max_iterations: int = 6,
    max_depth: int = 2,
    max_tokens: int = 400,
) -> DeepResult:
    """Answer `question` by recursive retrieval (the module doc): at most
    `max_iterations` model steps, sub-questions at most `max_depth` deep."""
    from memagent.sandbox import IsolatedSession, Limits

    if not isinstance(question, str) or not question.strip():
        raise InvalidInput("the question is empty")
    if len(question) > 4000:
        raise InvalidInput("the question is longer than 4000 characters")
    if not 1 <= max_iterations <= 30 or not 0 <= max_depth <= 5:
        raise InvalidInput("max_iterations must be 1..30 and max_depth 0..5")
    started = time.perf_counter()
    prompts = load_prompt_set("deep")
    calls = _Calls(llm, max_depth, max_tokens)
    session = IsolatedSession(
        tools=_tools(memory, calls), limits=Limits(timeout_s=20.0, max_operations=2_000_000)
    )
    messages = [
        Message(role="system", content=prompts.render("system")),
        *prompts.example_messages(structured=True),
        Message(role="user", content=prompts.render("user_turn", message=question.strip())),
    ]
    steps: list[StepRecord] = []
    seen: set[str] = set()
    last_error = "no answer"
    for i in range(1, max_iterations + 1):
        record = StepRecord(i, "deep")
        steps.append(record)
        try:
            record.raw = calls.chat(messages, _SCHEMA)
        except MemagentError as exc:
            last_error = record.error = f"the model failed: {exc}"
            continue
        answer, error = _step(record, session, seen, messages, prompts)
        if answer is not None:
            return DeepResult(answer, True, i, calls.queries, calls.usage, _since(started), steps)
        last_error = error or last_error
    answer = f"I couldn't find an answer within {max_iterations} steps ({last_error})."
    return DeepResult(
        answer, False, max_iterations, calls.queries, calls.usage, _since(started), steps
    )


@dataclass
class _Calls:
    """The model calls of one deep answer: their tokens, and the sub-questions
    (`llm_query`) asked and nested so far."""

    llm: LLM
    max_depth: int
    max_tokens: int
    usage: Usage = field(default_factory=Usage)
    queries: int = 0
    depth: int = 0

    def chat(self, messages: list[Message], schema: JsonSchema | None = None) -> str:
        res = self.llm.chat(messages, response_schema=schema, max_tokens=self.max_tokens)
        self.usage.prompt_tokens += res.usage.prompt_tokens
        self.usage.completion_tokens += res.usage.completion_tokens
        return res.text

    def llm_query(self, prompt: str) -> str:
        if self.depth >= self.max_depth:
            raise RuntimeError(f"llm_query is nested deeper than {self.max_depth} levels")
        if not isinstance(prompt, str) or len(prompt) > 16000:
            raise ValueError("llm_query takes a text prompt of at most 16000 characters")
        self.depth += 1
        self.queries += 1
        try:
            return self.chat([Message(role="user", content=prompt)])
        finally:
            self.depth -= 1


def _tools(memory: MemoryAccess, calls: _Calls) -> dict[str, Callable[..., object]]:
    """The functions the model's code may call."""

    def search_chunks(query: str, k: int = 5) -> list[ChunkHit]:
        hits = memory.recall(str(query), k=max(1, min(int(k), 20)))
        hits = [h for h in hits if h["score"] >= 0.5 * hits[0]["score"]] if hits else []
        return [
            {"id": h["id"], "content": h["content"][:300], "score": round(h["score"], 3)}
            for h in hits
        ]

    def read_chunk(chunk_id: str) -> str:
        return memory.read_chunk(str(chunk_id))

    def llm_query(prompt: str) -> str:
        return calls.llm_query(prompt)

    return {"search_chunks": search_chunks, "read_chunk": read_chunk, "llm_query": llm_query}


def _step(
    record: StepRecord,
    session: IsolatedSession,
    seen: set[str],
    messages: list[Message],
    prompts: PromptSet,
) -> tuple[str | None, str | None]:
    """The model's response (`record.raw`): its code run, or its reply taken.
    (the answer, None) when it gives one; else (None, what went wrong, if anything),
    and what it did goes back to the model."""
    text = record.raw or ""
    try:
        step = parse_step(text, "python", structured=True)
    except StepInvalid as exc:
        record.error = str(exc)
        _feed(messages, prompts, text or "(empty)", json.dumps({"error": record.error}))
        return None, record.error
    if step.python is None:
        return step.reply or None, None
    if step.python in seen:
        record.error = "you ran exactly this code before; its result will not change"
        _feed(messages, prompts, text, json.dumps({"error": record.error}))
        return None, record.error
    seen.add(step.python)
    run = session.run(step.python)
    out = run.to_json()
    record.result = PythonRun.of(run)
    if run.final and run.error is None:
        return run.result if isinstance(run.result, str) else json.dumps(out["result"]), None
    _feed(messages, prompts, text, json.dumps(out, ensure_ascii=False, default=str)[:6000])
    return None, f"the code failed: {run.error}" if run.error else None


def _feed(messages: list[Message], prompts: PromptSet, text: str, result: str) -> None:
    messages += [
        Message(role="assistant", content=text),
        Message(role="user", content=prompts.render("result", result=result)),
    ]


def _since(t: float) -> float:
    return time.perf_counter() - t
