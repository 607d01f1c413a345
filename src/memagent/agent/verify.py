"""Grounding check: do the recalled lines answer the question at all?

A small model shown lines on the topic of a question answers from them, even
when they do not hold the answer (LoCoMo's adversarial questions ask about one
speaker what the other one did); asked to say "I don't know", it almost never
does. Asked a yes/no question instead, its confidence shows in the probability
of its first token: before answering, the agent asks "Do the Memory lines above
contain the answer to this question?" (the prompt set's `verify` template, after
the same system text, memory and question as the answer's prompt, so llama.cpp
serves all but the last few tokens from its cache) and reads P(yes) from the
token probabilities (`memagent.llm.yesno`). Below `agent.verify_min` the reply
is "I don't have that in memory." and the model is not asked to answer.

A question that asks for a judgement ("Would Caroline pursue writing as a
career?", "What might Melanie say…": would, could, might, likely, probably) is
not checked: its answer is worked out from the lines, never written in them, so
"do the lines contain the answer?" is the wrong test (on LoCoMo's dev questions
the model's P(yes) refused most such answerable questions; none of the 237
adversarial questions is worded so).

No verdict (a backend that gives no token probabilities, a first token that is
neither yes nor no, a model error) never refuses: the answer goes ahead as
without the check, and the trace says why. Only prompt sets with a `verify`
template are checked (`qa`: `ask --short`, `ask --batch`); the threshold was
picked by cross-validation on LoCoMo's dev conversations (see bench.qa_locomo).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from memagent.agent.prompts import PromptSet
from memagent.agent.traces import Trace
from memagent.agent.turn import add_estimated_usage
from memagent.agent.voice import NOT_IN_MEMORY
from memagent.llm import LLM, LLMError, Message, Usage
from memagent.llm.yesno import YesNoJudge

_JUDGEMENT = re.compile(r"\b(would|could|might|likely|probably)\b", re.IGNORECASE)


def asks_for_judgement(message: str) -> bool:
    """Whether `message` asks for an inference rather than a stated fact."""
    return _JUDGEMENT.search(message) is not None


@dataclass
class Verdict:
    """The grounding check of one question."""

    p_yes: float | None = None
    """P(yes) that the lines answer it; None when there was no verdict."""
    error: str | None = None
    """Why there was no verdict (the answer then goes ahead)."""
    asked: bool = True
    """Whether the model was asked (False: the backend cannot judge)."""

    def refuses(self, threshold: float) -> bool:
        return self.p_yes is not None and self.p_yes < threshold


def _verdict(llm: LLM, messages: list[Message]) -> Verdict:
    if not isinstance(llm, YesNoJudge):
        return Verdict(error=f"{llm.name} gives no token probabilities", asked=False)
    try:
        p = llm.yes_probability(messages)
    except LLMError as exc:
        return Verdict(error=str(exc)[:300])
    if not isinstance(p, int | float) or not math.isfinite(p) or not 0.0 <= p <= 1.0:
        return Verdict(error=f"the yes/no probability is malformed: {p!r:.60}")
    return Verdict(p_yes=float(p))


def refusal_if_ungrounded(
    llm: LLM,
    prompts: PromptSet,
    base: list[Message],
    turn: str,
    *,
    message: str,
    threshold: float,
    usage: Usage,
    trace: Trace,
) -> str | None:
    """The refusal when the grounding check says the memory in `turn` (the user
    turn as the answer's prompt renders it) does not answer `message`, else None.
    No check runs at a threshold of 0 or for a prompt set without a `verify`
    template. The verdict goes in the trace, the check's prompt in `usage` (as
    the agent counts a streamed call's: estimated)."""
    if threshold <= 0 or "verify" not in prompts.templates:
        return None
    if asks_for_judgement(message):
        trace.memory["verify"] = {"skipped": "the question asks for a judgement"}
        return None
    messages = [*base, Message(role="user", content=prompts.render("verify", turn=turn))]
    verdict = _verdict(llm, messages)
    if verdict.asked:
        add_estimated_usage(usage, messages, 1)
    p = None if verdict.p_yes is None else round(verdict.p_yes, 4)
    trace.memory["verify"] = {"p_yes": p, "threshold": threshold}
    if verdict.error is not None:
        trace.memory["verify"]["error"] = verdict.error
    if not verdict.refuses(threshold):
        return None
    trace.memory["refused"] = "the model judged that the recalled lines do not answer it"
    return NOT_IN_MEMORY
