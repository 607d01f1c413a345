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
from dataclasses import dataclass, field
from typing import NotRequired, TypedDict

from memagent.agent.acting import PythonRun
from memagent.agent.memory import MemoryAccess
from memagent.agent.prompts import load_prompt_set
from memagent.agent.protocol import StepInvalid, parse_step
from memagent.agent.traces import StepRecord, StepRecordJson
from memagent.core import InvalidInput, MemagentError
from memagent.llm import LLM, Message, Usage

_SCHEMA = {
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
    from memagent.sandbox import IsolatedSession, Limits

    if not isinstance(question, str) or not question.strip():
        raise InvalidInput("the question is empty")
    if len(question) > 4000:
        raise InvalidInput("the question is longer than 4000 characters")
    if not 1 <= max_iterations <= 30 or not 0 <= max_depth <= 5:
        raise InvalidInput("max_iterations must be 1..30 and max_depth 0..5")
    started = time.perf_counter()
    prompts = load_prompt_set("deep")
    usage = Usage()
    queries = 0
    depth = 0

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
        nonlocal queries, depth
        if depth >= max_depth:
            raise RuntimeError(f"llm_query is nested deeper than {max_depth} levels")
        if not isinstance(prompt, str) or len(prompt) > 16000:
            raise ValueError("llm_query takes a text prompt of at most 16000 characters")
        depth += 1
        queries += 1
        try:
            res = llm.chat([Message(role="user", content=prompt)], max_tokens=max_tokens)
        finally:
            depth -= 1
        usage.prompt_tokens += res.usage.prompt_tokens
        usage.completion_tokens += res.usage.completion_tokens
        return res.text

    session = IsolatedSession(
        tools={"search_chunks": search_chunks, "read_chunk": read_chunk, "llm_query": llm_query},
        limits=Limits(timeout_s=20.0, max_operations=2_000_000),
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
            res = llm.chat(messages, response_schema=_SCHEMA, max_tokens=max_tokens)
        except MemagentError as exc:
            last_error = f"the model failed: {exc}"
            record.error = last_error
            continue
        usage.prompt_tokens += res.usage.prompt_tokens
        usage.completion_tokens += res.usage.completion_tokens
        record.raw = res.text
        try:
            step = parse_step(res.text, "python", structured=True)
        except StepInvalid as exc:
            last_error = str(exc)
            record.error = last_error
            messages += [
                Message(role="assistant", content=res.text or "(empty)"),
                Message(
                    role="user",
                    content=prompts.render("result", result=json.dumps({"error": last_error})),
                ),
            ]
            continue
        if step.python is None:
            if step.reply:
                return DeepResult(step.reply, True, i, queries, usage, _since(started), steps)
            continue
        if step.python in seen:
            last_error = "you ran exactly this code before; its result will not change"
            record.error = last_error
            messages += [
                Message(role="assistant", content=res.text),
                Message(
                    role="user",
                    content=prompts.render("result", result=json.dumps({"error": last_error})),
                ),
            ]
            continue
        seen.add(step.python)
        run = session.run(step.python)
        out = run.to_json()
        record.result = PythonRun.of(run)
        if run.final and run.error is None:
            answer = run.result if isinstance(run.result, str) else json.dumps(out["result"])
            return DeepResult(answer, True, i, queries, usage, _since(started), steps)
        if run.error:
            last_error = f"the code failed: {run.error}"
        payload = json.dumps(out, ensure_ascii=False, default=str)[:6000]
        messages += [
            Message(role="assistant", content=res.text),
            Message(role="user", content=prompts.render("result", result=payload)),
        ]
    answer = f"I couldn't find an answer within {max_iterations} steps ({last_error})."
    return DeepResult(answer, False, max_iterations, queries, usage, _since(started), steps)


def _since(t: float) -> float:
    return time.perf_counter() - t
