"""Yes/no questions answered by the model's token probabilities, not its text.

A small model asked "does this say X? yes or no" mostly generates "Yes"; how sure
it is shows in the probability of its first token. `yes_probability(messages)`
(on the backends that can give it: the embedded instruct model and OpenAI-
compatible servers through `logprobs`, the scripted model for tests) returns a
`YesNo`: P(yes) / (P(yes) + P(no)) over the first token's most likely alternatives
("Yes", " yes", "YES" all count as yes), and the tokens the request cost as the
backend counted them (the prompt is sent whole each time, so it is counted whole).
The agent uses it to check an answer against the recalled lines
(`memagent.agent.verify`); profile learning asks its yes/no questions through
`ask_yes_no`, which falls back to a grammar-constrained reply on a backend
without probabilities.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from memagent.llm.base import LLM, LLMError, MessageLike, Usage

TOP_ALTERNATIVES = 20
"""How many of the first token's alternatives are read (OpenAI's API allows 20)."""


@dataclass(frozen=True)
class YesNo:
    """A yes/no verdict read from token probabilities."""

    p_yes: float
    """P(yes) / (P(yes) + P(no)) of the reply's first token."""
    usage: Usage | None = None
    """The request's tokens as the backend counted them; None when it sent none."""


@runtime_checkable
class YesNoJudge(Protocol):
    """A backend that can say how likely its reply to `messages` begins with yes."""

    def yes_probability(self, messages: Sequence[MessageLike]) -> YesNo: ...


def p_yes_of(verdict: object) -> float | None:
    """The P(yes) a judge returned (a `YesNo`, or a bare float from a plain judge)
    when it is a probability: a finite number in [0, 1], not a bool; else None."""
    p = verdict.p_yes if isinstance(verdict, YesNo) else verdict
    if isinstance(p, bool) or not isinstance(p, int | float) or not math.isfinite(p):
        return None
    return float(p) if 0.0 <= p <= 1.0 else None


def verdict_schema(key: str) -> dict[str, object]:
    """The JSON Schema of a constrained yes/no reply, `{key: "yes" | "no"}`."""
    return {
        "type": "object",
        "properties": {key: {"type": "string", "enum": ["yes", "no"]}},
        "required": [key],
        "additionalProperties": False,
    }


def ask_yes_no(llm: LLM, messages: Sequence[MessageLike], key: str) -> float | None:
    """P(yes) of a yes/no question: from the first token's probabilities when `llm`
    is a `YesNoJudge` and gives one; else the grammar-constrained reply
    `{key: "yes" | "no"}` (`verdict_schema`) read as 1.0 or 0.0; None when neither
    gives a usable verdict (a model error, a reply that is not the schema's)."""
    if isinstance(llm, YesNoJudge):
        try:
            p = p_yes_of(llm.yes_probability(messages))
        except LLMError:
            p = None
        if p is not None:
            return p
    try:
        reply = llm.chat(messages, response_schema=verdict_schema(key), max_tokens=32,
                         temperature=0.0)  # fmt: skip
        data = json.loads(reply.text.strip().removeprefix("```json").removesuffix("```"))
    except (LLMError, ValueError):
        return None
    answer = data.get(key) if isinstance(data, dict) else None
    return {"yes": 1.0, "no": 0.0}.get(answer) if isinstance(answer, str) else None


def _word(token: str) -> str:
    return token.strip().strip(".,!\"'").lower()


def yes_share(top: Iterable[tuple[str, float]]) -> float:
    """P(yes) / (P(yes) + P(no)) from (token, log probability) pairs of the first
    token's alternatives; `LLMError` when neither word is among them (the model
    meant to say something else: no verdict)."""
    yes = no = 0.0
    for token, logprob in top:
        if not isinstance(token, str) or not isinstance(logprob, int | float):
            raise LLMError("the model's token probabilities are malformed")
        if not math.isfinite(logprob) or logprob > 0:
            continue
        word = _word(token)
        if word == "yes":
            yes += math.exp(logprob)
        elif word == "no":
            no += math.exp(logprob)
    if yes + no <= 0.0:
        raise LLMError("the model's likely first tokens hold neither yes nor no")
    return yes / (yes + no)


def parse_probability(text: str) -> float:
    """A yes/no verdict written as text (the scripted model's): "yes" is 1, "no" is
    0, a number in [0, 1] is P(yes); anything else is an `LLMError`."""
    word = _word(text) if isinstance(text, str) else ""
    if word in ("yes", "no"):
        return 1.0 if word == "yes" else 0.0
    try:
        p = float(word)
    except ValueError:
        raise LLMError(f"a yes/no verdict must be yes, no or a probability: {text!r:.60}") from None
    if not 0.0 <= p <= 1.0:
        raise LLMError(f"a yes/no probability must be in [0, 1], not {p}")
    return p
