"""Checks of a reply from memory after the model gave it: no model call.

The checks before the answer (`memagent.agent.honesty`) judge the recalled lines.
Some replies show by themselves that they answer nothing, and get "I don't have
that in memory." instead:

1. *About someone else* (every reply path): the question names a speaker of the
   recalled lines, and the reply's own words (those the question did not hold)
   rest more on sentences about someone else than on sentences about that
   person (`memagent.agent.support`). Asked "How did Caroline's son handle the
   accident?", a small model answers "glad your son is okay", the words Caroline
   said to Melanie about Melanie's son. The other person's line never answers a
   question about the named one.
2. *A question for an answer* (short answers, the `qa` set): a reply that ends in
   "?" copied a line that asks ("For walking or running?"); a question tells
   nothing.
3. *A bare yes or no to a wh-question or a choice* (short answers): "How does
   Maria plan to honour her pet?" or "Did I increase or decrease the limit?"
   answered "Yes" answers nothing ("... or not?", "yes or no", "and/or" ask for
   a verdict and keep it).

Measured on LoCoMo's dev questions with the embedded model (bench.qa_locomo,
relaxed runs): rule 1 refused 3 adversarial questions of 27 that reached the
model and 2 answerable ones (F1 0.5 and 0); rules 2 and 3 refused 2 adversarial
and 1 answerable (F1 0). None of them has a constant to tune.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memagent.agent.memory import MemoryContext
from memagent.agent.support import support

_WH = re.compile(r"^\W*(?:what|who|whom|whose|where|when|why|how|which)\b", re.IGNORECASE)
_CHOICE = re.compile(
    r"^\W*(?:did|do|does|is|are|was|were|has|have|had|will|would|should|can|could)\b"
    r"(?!.*\b(?:or not|yes or no|and/or)\b).*\bor\b",
    re.IGNORECASE | re.DOTALL,
)
_BARE_VERDICT = re.compile(r"^\W*(?:yes|no|yeah|nope)\W*$", re.IGNORECASE)


@dataclass(frozen=True)
class ReplyMiss:
    """Why a reply answers nothing (`rule`: `someone_else`, `question`, `verdict`)."""

    rule: str

    def reason(self) -> str:
        return {
            "someone_else": "the reply rests on what was said about someone else",
            "question": "the reply is a question, not an answer",
            "verdict": "a bare yes or no does not answer a what/who/how or either-or question",
        }[self.rule]


def check_reply(reply: str, question: str, ctx: MemoryContext, *, short: bool) -> ReplyMiss | None:
    """Why `reply` (to `question`, from the memory in `ctx`) answers nothing, or
    None (module doc). `short`: the prompt set answers in a short phrase (`qa`)."""
    text = reply.strip()
    if not text:
        return None
    if short and text.rstrip("\"' ").endswith("?"):
        return ReplyMiss("question")
    if short and _BARE_VERDICT.match(text) and (_WH.match(question) or _CHOICE.match(question)):
        return ReplyMiss("verdict")
    if ctx.named:
        got = support(text, question, ctx.hits, ctx.named)
        if got.words and got.others > got.named:
            return ReplyMiss("someone_else")
    return None
