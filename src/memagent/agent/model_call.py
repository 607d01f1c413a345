"""One exchange of the agent loop with the model: asking it for a step (the reply
whole, or streamed to the user as it is written, its usage counted either way),
and giving it back what the step did."""

from __future__ import annotations

import json
from collections.abc import Mapping

from memagent.agent.memory import count_tokens
from memagent.agent.prompts import PromptSet
from memagent.agent.streaming import ReplyStreamer
from memagent.agent.turn import add_estimated_usage, add_usage
from memagent.core.jsontext import JsonSchema
from memagent.llm import LLM, Message, Usage

MAX_RESULT_CHARS = 8000
"""A step's result longer than this reaches the model cut (it says so)."""


def ask_for_step(
    llm: LLM,
    messages: list[Message],
    usage: Usage,
    streamer: ReplyStreamer | None,
    *,
    schema: JsonSchema | None,
    max_tokens: int,
    temperature: float,
) -> str:
    """The model's text for the next step; with a `streamer`, each piece goes to it
    as it comes (a stream reports no usage: it is estimated from the tokens)."""
    if streamer is None:
        res = llm.chat(
            messages, response_schema=schema, max_tokens=max_tokens, temperature=temperature
        )
        add_usage(usage, res.usage)
        return res.text
    pieces: list[str] = []
    for piece in llm.stream(
        messages, response_schema=schema, max_tokens=max_tokens, temperature=temperature
    ):
        pieces.append(piece)
        streamer.feed(piece)
    text = "".join(pieces)
    add_estimated_usage(usage, messages, count_tokens(text))
    return text


def feed_result(
    prompts: PromptSet, work: list[Message], text: str, result: Mapping[str, object]
) -> None:
    """Append the model's step (`text`) and what it did (`result`, as the prompt set's
    `result` message) to the turn's `work`, which the model reads next."""
    work.append(Message(role="assistant", content=text.strip() or "(empty)"))
    payload = json.dumps(result, ensure_ascii=False, default=str)
    if len(payload) > MAX_RESULT_CHARS:
        payload = payload[:MAX_RESULT_CHARS] + "… [cut]"
    work.append(Message(role="user", content=prompts.render("result", result=payload)))
