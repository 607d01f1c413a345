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

The contrast probe (`agent.contrast_below`, `agent.contrast_margin`): LoCoMo's
adversarial questions ask about one speaker what the other one said or did, and
attribution shows the model only the named person's lines, on the same topic, so
P(yes) lands just over the threshold. When the check passes with P(yes) under
`contrast_below`, the question names one speaker and the recalled lines have
another, the same question is asked about the other speaker (the name swapped,
its own memory recalled as for any question) and checked too; when that one is
at least `contrast_margin` more likely grounded, the question fits the other
person's life better and the reply is the refusal. The swapped question is
asked before the question's own check when every probe is read (`contrast_below`
1, the default), so that the answer's prompt follows the check's and is served
from llama.cpp's prompt cache (`refusal_if_ungrounded`). A swapped question that speaker
attribution refuses (the lines that match are about the first person) or that
recalls nothing costs no model call and never refuses.

No verdict (a backend that gives no token probabilities, a first token that is
neither yes nor no, a model error) never refuses: the answer goes ahead as
without the check, and the trace says why. Only prompt sets with a `verify`
template are checked (`qa`: `ask --short`, `ask --batch`); the threshold was
picked by cross-validation on LoCoMo's dev conversations (see bench.qa_locomo).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from memagent.agent.memory import MemoryAccess, MemoryContext
from memagent.agent.prompts import PromptSet
from memagent.agent.traces import ContrastCheck, Grounding, Trace
from memagent.agent.turn import add_estimated_usage
from memagent.agent.voice import NOT_IN_MEMORY
from memagent.core import MemagentError
from memagent.core.config import AgentConfig
from memagent.llm import LLM, LLMError, Message, Usage
from memagent.llm.yesno import YesNo, YesNoJudge, p_yes_of

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
    usage: Usage | None = None
    """The check's tokens as the backend counted them (None: it sent no count)."""

    def refuses(self, threshold: float) -> bool:
        return self.p_yes is not None and self.p_yes < threshold


def _verdict(llm: LLM, messages: list[Message]) -> Verdict:
    if not isinstance(llm, YesNoJudge):
        return Verdict(error=f"{llm.name} gives no token probabilities", asked=False)
    try:
        got: object = llm.yes_probability(messages)
    except LLMError as exc:
        return Verdict(error=str(exc)[:300])
    usage = got.usage if isinstance(got, YesNo) else None
    p = p_yes_of(got)
    if p is None:
        shown = got.p_yes if isinstance(got, YesNo) else got  # a bare float from a plain judge
        return Verdict(error=f"the yes/no probability is malformed: {shown!r:.60}", usage=usage)
    return Verdict(p_yes=p, usage=usage)


def _count(usage: Usage, verdict: Verdict, messages: list[Message]) -> None:
    """The check's tokens: the backend's count, else estimated (as a streamed reply's)."""
    if verdict.usage is not None:
        usage.prompt_tokens += verdict.usage.prompt_tokens
        usage.completion_tokens += verdict.usage.completion_tokens
        usage.cached_tokens += verdict.usage.cached_tokens
    elif verdict.asked:
        add_estimated_usage(usage, messages, 1)


@dataclass
class Contrast:
    """The contrast probe of one question (module doc)."""

    below: float
    """Probe only when the check passed with P(yes) under this (0: never)."""
    margin: float
    """Refuse when the swapped question's P(yes) exceeds the question's by this."""
    question: str | None
    """The question about the other speaker; None when there is none to ask."""
    turn_for: Callable[[str], str | None]
    """The user turn for a question, with the memory recalled for it; None when
    speaker attribution refuses it or nothing is recalled."""


def swap_person(message: str, ctx: MemoryContext, other: str | None = None) -> str | None:
    """`message` asked about the other speaker of the recalled lines: the one
    speaker it names replaced by `other`, else by the most frequent other speaker
    of the lines; None when it names none or several, or there is no other one."""
    others = [s for s in ctx.speakers if s not in ctx.named]
    if other is None and others:
        other = others[0]
    if len(ctx.named) != 1 or other is None or other in ctx.named:
        return None
    pattern = rf"(?<![\w']){re.escape(ctx.named[0])}(?!\w)"
    return re.sub(pattern, lambda _: other, message)


def other_speaker(
    memory: MemoryAccess, message: str, ctx: MemoryContext, now: float | None
) -> str | None:
    """Who else the lines on `message`'s topic were said by, when the recalled lines
    hold only the person it names. Recall favours lines by a speaker the question
    names (its speaker boost), so a question about one person often recalls that
    person's lines alone, and the probe had no one to swap in: recalled again with
    the name left out, the most frequent other speaker of the hits is the one whose
    life the topic may belong to. None when the question names no single speaker,
    or recall finds no other speaker (a conversation of one person, the user's own
    notes)."""
    if len(ctx.named) != 1 or any(s not in ctx.named for s in ctx.speakers):
        return None
    name = ctx.named[0]
    blank = re.sub(rf"(?<![\w']){re.escape(name)}(?:'s)?(?!\w)", "someone", message)
    try:
        hits = memory.recalled(blank, k=RECALL_OTHERS, now=now)
    except MemagentError:
        return None
    said = Counter(s for h in hits if (s := h.speaker) and s != name)
    return said.most_common(1)[0][0] if said else None


RECALL_OTHERS = 15
"""Hits read to find another speaker of the question's topic (`other_speaker`)."""


def contrast_probe(
    memory: MemoryAccess,
    prompts: PromptSet,
    ctx: MemoryContext,
    message: str,
    cfg: AgentConfig,
    *,
    now: float | None = None,
    today: str | None = None,
) -> Contrast | None:
    """The contrast probe for `message` as the agent's config sets it; None when off.
    `now` / `today`: when the question is asked (as the answer's own recall and
    prompt have it)."""
    if cfg.contrast_below <= 0:
        return None

    def turn_for(question: str) -> str | None:
        try:
            other = memory.context(question, budget_tokens=cfg.context_tokens,
                                   k=cfg.recall_k, min_ratio=cfg.recall_min_ratio,
                                   now=now)  # fmt: skip
        except MemagentError:
            return None
        if other.about_others or not other.text:
            return None
        return prompts.render(
            "user_turn", memory=other.text, message=question, asking=True, today=today
        )

    other = other_speaker(memory, message, ctx, now)
    return Contrast(
        cfg.contrast_below, cfg.contrast_margin, swap_person(message, ctx, other), turn_for
    )


def _probe(
    llm: LLM, prompts: PromptSet, base: list[Message], contrast: Contrast | None,
    usage: Usage, trace: Trace,
) -> Verdict | None:  # fmt: skip
    """The swapped question's verdict, recorded in the trace (when it is asked:
    `refusal_if_ungrounded`); None when there is nothing to ask."""
    if contrast is None or contrast.below <= 0 or contrast.question is None:
        return None
    record = trace.memory.contrast = ContrastCheck(contrast.question[:300])
    turn = contrast.turn_for(contrast.question)
    if turn is None:
        record.skipped = "attribution refuses it, or nothing is recalled for it"
        return None
    messages = [*base, Message(role="user", content=prompts.render("verify", turn=turn))]
    verdict = _verdict(llm, messages)
    _count(usage, verdict, messages)
    record.p_yes = None if verdict.p_yes is None else round(verdict.p_yes, 4)
    record.error = verdict.error
    return verdict


def _contrasted(p: float, contrast: Contrast | None, probed: Verdict | None) -> bool:
    """Whether the question about the other speaker is clearly better grounded."""
    if contrast is None or probed is None or probed.p_yes is None or p >= contrast.below:
        return False
    return probed.p_yes - p >= contrast.margin


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
    contrast: Contrast | None = None,
) -> str | None:
    """The refusal when the grounding check says the memory in `turn` (the user
    turn as the answer's prompt renders it) does not answer `message`, else None.
    No check runs at a threshold of 0 or for a prompt set without a `verify`
    template. The verdict goes in the trace, the check's tokens in `usage` (the
    backend's count; estimated when it sent none).

    When every probe is read (`contrast_below` 1 or more, the default), the swapped
    question is asked first and the question's own check last: the answer's prompt
    is the check's prompt less its last line, so asked right after it, all but those
    tokens come from llama.cpp's prompt cache. Asked between them, the probe's other
    memory replaced the question's in the cache and the answer evaluated its memory
    lines a second time. Below 1, the probe runs after the check, only when the check
    passed under `contrast_below`. The decision is the same in either order."""
    if threshold <= 0 or "verify" not in prompts.templates:
        return None
    if asks_for_judgement(message):
        trace.memory.verify = Grounding(skipped="the question asks for a judgement")
        return None
    first = contrast is not None and contrast.below >= 1.0  # every probe is read
    probed = _probe(llm, prompts, base, contrast, usage, trace) if first else None
    messages = [*base, Message(role="user", content=prompts.render("verify", turn=turn))]
    verdict = _verdict(llm, messages)
    _count(usage, verdict, messages)
    p = None if verdict.p_yes is None else round(verdict.p_yes, 4)
    trace.memory.verify = Grounding(p, threshold, verdict.error)
    if verdict.p_yes is None:
        return None
    if verdict.refuses(threshold):
        trace.memory.refused = "the model judged that the recalled lines do not answer it"
        return NOT_IN_MEMORY
    if not first and contrast is not None and verdict.p_yes < contrast.below:
        probed = _probe(llm, prompts, base, contrast, usage, trace)
    if _contrasted(verdict.p_yes, contrast, probed):
        trace.memory.refused = "the lines fit the question about another person better"
        return NOT_IN_MEMORY
    return None
