"""A deterministic LLM double for tests (in the spirit of pydantic-ai's
`TestModel` / `FunctionModel`): it replays given responses, or calls a function
with the conversation, and records every call so tests can assert on prompts.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from memagent.core.deadline import current_budget
from memagent.core.jsontext import JsonSchema
from memagent.llm.base import ChatResult, LLMError, Message, MessageLike, Usage, as_messages
from memagent.llm.yesno import YesNo, parse_probability

Responder = Callable[[list[Message], JsonSchema | None], str]


@dataclass
class ScriptedCall:
    messages: list[Message]
    response_schema: JsonSchema | None
    reply: str


class ScriptExhausted(LLMError):
    """The scripted model was asked for more replies than it was given."""


class ScriptedLLM:
    """Replays `responses` in order, or answers with `fn(messages, schema)`.

    Token usage is counted as whitespace-separated words, so it is deterministic.
    """

    name = "scripted"

    def __init__(
        self,
        responses: Iterable[str] | None = None,
        *,
        fn: Responder | None = None,
        delay_s: float = 0.0,
        token_delay_s: float = 0.0,
        verdicts: Iterable[str] | None = None,
    ) -> None:
        """`delay_s`: seconds each reply takes before its first token, like a slow
        model; `token_delay_s`: seconds per generated token (a word). Both waits
        check the request's budget (`memagent.core.deadline`), so a deadline or a
        cancel event stops the reply as it stops a real model's decoding:
        `tokens_produced` counts the tokens generated before it stopped.
        `verdicts`: the replies of `yes_probability` calls, in order, apart from the
        chat replies ("yes", "no" or a probability); without them such a call is an
        `LLMError`, as a backend that gives no token probabilities."""
        if (responses is None) == (fn is None):
            raise ValueError("give exactly one of `responses` or `fn`")
        self.delay_s = delay_s
        self.token_delay_s = token_delay_s
        self.tokens_produced = 0
        self._responses = list(responses) if responses is not None else []
        self._fn = fn
        self._verdicts = list(verdicts) if verdicts is not None else None
        self.calls: list[ScriptedCall] = []

    @property
    def remaining(self) -> int:
        return len(self._responses)

    def _next(self, messages: list[Message], schema: JsonSchema | None) -> str:
        budget = current_budget()
        end = time.monotonic() + self.delay_s
        while (left := end - time.monotonic()) > 0:
            budget.check("the model call")
            time.sleep(min(left, 0.01))
        if self._fn is not None:
            reply = self._fn(messages, schema)
        elif not self._responses:
            raise ScriptExhausted(f"scripted model ran out of replies after {len(self.calls)}")
        else:
            reply = self._responses.pop(0)
        for _ in reply.split():  # "decode" token by token
            budget.check("the model call")
            if self.token_delay_s > 0:
                time.sleep(self.token_delay_s)
            self.tokens_produced += 1
        return reply

    def chat(
        self,
        messages: Sequence[MessageLike],
        *,
        response_schema: JsonSchema | None = None,
        stop: Sequence[str] | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
    ) -> ChatResult:
        msgs = as_messages(messages)
        reply = self._next(msgs, response_schema)
        if stop:
            cut = min((i for s in stop if (i := reply.find(s)) >= 0), default=-1)
            if cut >= 0:
                reply = reply[:cut]
        self.calls.append(ScriptedCall(msgs, response_schema, reply))
        usage = Usage(
            prompt_tokens=sum(len(m.content.split()) for m in msgs),
            completion_tokens=len(reply.split()),
        )
        return ChatResult(text=reply, usage=usage, model=self.name)

    def yes_probability(self, messages: Sequence[MessageLike]) -> YesNo:
        """The next scripted verdict read as P(yes): "yes" (1.0), "no" (0.0) or a
        probability such as "0.3"; anything else, or no verdict left, is an
        `LLMError` (as a real model's first token that is neither word is)."""
        msgs = as_messages(messages)
        if not self._verdicts:
            raise ScriptExhausted(f"scripted model has no yes/no verdict left ({self.name})")
        reply = self._verdicts.pop(0)
        self.calls.append(ScriptedCall(msgs, None, reply))
        words = sum(len(m.content.split()) for m in msgs)
        return YesNo(parse_probability(reply), Usage(prompt_tokens=words, completion_tokens=1))

    def stream(
        self,
        messages: Sequence[MessageLike],
        *,
        response_schema: JsonSchema | None = None,
        stop: Sequence[str] | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
    ) -> Iterator[str]:
        text = self.chat(
            messages, response_schema=response_schema, stop=stop, max_tokens=max_tokens
        ).text
        for i in range(0, len(text), 16):
            yield text[i : i + 16]
