"""The full-context arm of `bench.qa_locomo`: the whole conversation, each session
headed by its date, in the system message (a fixed prefix llama.cpp's prompt cache
keeps) after the `qa` rules, then one question a call. It shows what the same model
does with everything in view, at many times memagent's prompt tokens; slow on a
small CPU (use `--n-ctx 32768`).

Contract: `ask_full(llm, conv, questions)` returns one line a question in the shape
of an `ask --batch --json` line (answer, ok, latency_s, tokens, cached).
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from bench.recall_locomo import session_time

if TYPE_CHECKING:
    from bench.qa_cache import CachedLLM
    from bench.qa_locomo import Question


def transcript(conv: dict[str, Any]) -> str:
    lines: list[str] = []
    n = 1
    while f"session_{n}" in conv:
        when = session_time(conv[f"session_{n}_date_time"])
        lines.append(f"Session {n}, {when.day} {when:%B %Y}, {when:%H:%M}:")
        for t in conv[f"session_{n}"]:
            text = f"{t['speaker']}: {t['text']}"
            if t.get("blip_caption"):
                text += f" [shares a photo: {t['blip_caption']}]"
            lines.append(text)
        n += 1
    return "\n".join(lines)


def ask_full(
    llm: CachedLLM, conv: dict[str, Any], questions: list[Question]
) -> list[dict[str, Any]]:
    """The whole conversation in the system message, the qa rules, one question each."""
    from memagent.agent.prompts import load_prompt_set
    from memagent.agent.protocol import reply_schema
    from memagent.llm import LLMError

    rules = load_prompt_set("qa").render("system", persona="")
    system = f"{rules.replace('Memory: lines', 'the conversation below')}\n\nConversation:\n"
    system += transcript(conv)
    out: list[dict[str, Any]] = []
    for q in questions:
        t0, before, missed = time.perf_counter(), llm.replayed_s, llm.misses
        msgs = [
            {"role": "system", "content": system},
            {"role": "user", "content": f"Question: {q.question}"},
        ]
        try:
            res = llm.chat(msgs, response_schema=reply_schema(), max_tokens=96)
            answer, ok = str(json.loads(res.text)["reply"]), True
            pt, ct = res.usage.prompt_tokens, res.usage.completion_tokens
        except (LLMError, ValueError, KeyError) as exc:
            answer, ok, pt, ct = f"(failed: {exc})", False, 0, 0
        secs = time.perf_counter() - t0 + llm.replayed_s - before
        out.append(
            {
                "answer": answer if ok else "",
                "ok": ok,
                "latency_s": secs,
                "prompt_tokens": pt,
                "completion_tokens": ct,
                "p_grounded": None,
                "cached": llm.misses == missed,
            }
        )
    return out
