"""The checks before an answer from memory, in every reply path (chat, `ask`,
`Agent.run`, `/v1/chat`): the assistant answers only from what memory holds, and
a near miss gets "I don't have that in memory." In order, cheapest first:

0. the profile (`memagent.memory.profile.answers`): the question asks about a
   fact the profile and a recalled line disagree on, neither clearly the latest
   by its date: the reply says so and gives both;
1. speaker attribution (`memagent.agent.attribution`): the lines that match are
   about someone else than the person the question names;
2. the focus check (`memagent.agent.focus`, no model call): the person, thing
   or attribute the question asks about is in no recalled line;
3. the grounding check and its contrast probe (`memagent.agent.verify`, one
   yes/no model call, served mostly from the answer's prompt cache): the model
   judges that the lines do not contain the answer. In the chat sets it runs
   for questions about the user's own life ("my", "I"): a general question
   ("What is the capital of France?") may be answered from the model's own
   knowledge. The threshold is `agent.verify_min` for the `qa` set and
   `agent.chat_verify_min` for the chat sets (their prompts differ, so do the
   model's probabilities).

After the answer, `check_reply` refuses a reply that shows by itself that it
answers nothing (`memagent.agent.reply_check`: it rests on what was said about
someone else; in short answers, a question or a bare yes/no to a wh-question).

Only prompt sets that reply from memory (`schema: reply`) are checked; the
`json` and `python` sets act with tools and read memory themselves.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from memagent.agent.focus import check as focus_check
from memagent.agent.memory import MemoryAccess, MemoryContext
from memagent.agent.prompts import PromptSet
from memagent.agent.reply_check import check_reply as check_reply_text
from memagent.agent.traces import Trace
from memagent.agent.verify import contrast_probe, refusal_if_ungrounded
from memagent.agent.voice import NOT_IN_MEMORY, not_in_memory
from memagent.core.config import AgentConfig
from memagent.index import QueryFacts
from memagent.llm import LLM, Message, Usage


@dataclass
class Checked:
    """The verdict of the checks on one question."""

    reply: str | None = None
    """The refusal, or None: answer it."""
    refused_by: str | None = None
    """`profile`, `attribution`, `focus`, `verify`, `contrast` or `reply` (None: not
    refused)."""
    tokens: int = 0
    """Tokens the model's check cost (also counted in the turn's usage)."""
    seconds: float = 0.0
    asking: bool = False
    """The message asks something of memory (the reply is checked too)."""


def check_question(
    *,
    llm: LLM,
    prompts: PromptSet,
    memory: MemoryAccess,
    cfg: AgentConfig,
    base: list[Message],
    turn: str,
    facts: QueryFacts,
    ctx: MemoryContext,
    asking: bool,
    usage: Usage,
    trace: Trace,
    now: float | None = None,
    today: str | None = None,
) -> Checked:
    """Run the checks (module doc) on the message (`facts`, read once with it)
    asked with `ctx` in `turn` (the user turn as the answer's prompt renders it).
    `asking`: the message is a question or request answered from memory (not a
    statement, not small talk)."""
    started = time.perf_counter()
    message = facts.text
    out = Checked(asking=asking)
    if prompts.schema != "reply":
        return out
    if asking and ctx.profile_unsure:  # profile and memory disagree, neither clearly latest
        trace.memory.refused = "the profile and a recalled line disagree"
        out.reply, out.refused_by = ctx.profile_unsure, "profile"
    elif ctx.about_others:  # speaker attribution: not this person's life
        trace.memory.refused = "the lines that match are about someone else"
        out.reply, out.refused_by = not_in_memory(ctx.about_others), "attribution"
    elif asking and cfg.focus_check and (miss := focus_check(facts, ctx.text)) is not None:
        trace.memory.refused = miss.reason()
        out.reply, out.refused_by = NOT_IN_MEMORY, "focus"
    elif asking and ctx.text and (prompts.recall_for == "all" or facts.personal):
        threshold = cfg.verify_min if prompts.recall_for == "all" else cfg.chat_verify_min
        before = usage.prompt_tokens + usage.completion_tokens
        contrast = contrast_probe(memory, prompts, ctx, message, cfg, now=now, today=today)
        out.reply = refusal_if_ungrounded(llm, prompts, base, turn, message=message,
            threshold=threshold, usage=usage, trace=trace, contrast=contrast)  # fmt: skip
        out.tokens = usage.prompt_tokens + usage.completion_tokens - before
        if out.reply is not None:
            why = trace.memory.refused or ""
            out.refused_by = "contrast" if "another person" in why else "verify"
    out.seconds = time.perf_counter() - started
    return out


def check_reply(
    checked: Checked,
    reply: str,
    *,
    message: str,
    ctx: MemoryContext,
    prompts: PromptSet,
    trace: Trace,
    streamed: bool = False,
) -> str:
    """The reply to give: `reply`, or the refusal when it answers nothing
    (`memagent.agent.reply_check`); `checked` then says `reply` refused it. A
    reply already shown while it streamed is left as it is (it cannot be taken
    back; the trace says what the check found)."""
    if prompts.schema != "reply" or not checked.asking or checked.reply is not None:
        return reply
    miss = check_reply_text(reply, message, ctx, short=prompts.recall_for == "all")
    if miss is None:
        return reply
    if streamed:
        trace.memory.reply_check = miss.reason()
        return reply
    trace.memory.refused = miss.reason()
    checked.refused_by = "reply"
    return NOT_IN_MEMORY
