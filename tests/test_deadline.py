"""One budget per request (`memagent.core.deadline`): a time limit and a cancel
event that the model call, plan steps and the agent loop all honour. The tests
stop a slow scripted model mid-reply and assert on what it had generated when it
stopped, never on wall time."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from memagent.agent import Agent
from memagent.core import MemoryHome
from memagent.core.deadline import check_deadline, current_budget, deadline, remaining_time
from memagent.core.errors import DeadlineExceeded
from memagent.llm import ScriptedLLM
from memagent.plan import ExecutionError, PlanStep, run_plan_sync, tool_spec

LONG_REPLY = " ".join(f"word{i}" for i in range(400))


def _slow_model(reply: str = LONG_REPLY) -> ScriptedLLM:
    return ScriptedLLM(fn=lambda messages, schema: reply, token_delay_s=0.01)


def _cancel_after(llm: ScriptedLLM, tokens: int, event: threading.Event) -> threading.Thread:
    """Set `event` once the model has generated `tokens` tokens."""

    def watch() -> None:
        while llm.tokens_produced < tokens and not event.is_set():
            time.sleep(0.002)
        event.set()

    t = threading.Thread(target=watch, daemon=True)
    t.start()
    return t


def _stopped_early(llm: ScriptedLLM, at_least: int) -> None:
    # it got going, then stopped within a few tokens of the cancel, far from the end
    assert at_least <= llm.tokens_produced < at_least + 20, llm.tokens_produced


def test_budget_nesting_keeps_the_earlier_end_and_every_cancel() -> None:
    assert remaining_time() is None and not current_budget().bounded
    outer, inner = threading.Event(), threading.Event()
    with deadline(10, cancel=outer), deadline(100, cancel=inner) as budget:
        left = budget.remaining()
        assert left is not None and left <= 10
        assert not budget.stopped()
        outer.set()  # the outer request's cancel reaches the nested work
        assert budget.stopped()
        with pytest.raises(DeadlineExceeded, match="cancelled"):
            check_deadline("the nested work")
    with deadline(0) as spent, pytest.raises(DeadlineExceeded, match="ran out of time"):
        spent.check("the work")
    assert not current_budget().bounded


def test_a_cancel_stops_the_model_mid_reply() -> None:
    llm, cancel = _slow_model(), threading.Event()
    _cancel_after(llm, 5, cancel)
    with deadline(None, cancel=cancel), pytest.raises(DeadlineExceeded):
        llm.chat([{"role": "user", "content": "talk"}])
    _stopped_early(llm, 5)


def test_a_plan_step_gets_the_request_budget_in_its_thread() -> None:
    llm, cancel = _slow_model(), threading.Event()
    seen: list[bool] = []

    @tool_spec(reads=[], writes=[], idempotent=True)
    def answer() -> str:
        seen.append(current_budget().bounded)
        return llm.chat([{"role": "user", "content": "talk"}]).text

    _cancel_after(llm, 5, cancel)
    with deadline(60, cancel=cancel), pytest.raises((ExecutionError, DeadlineExceeded)) as info:
        run_plan_sync([PlanStep("s1", answer, {}, produces=["a"])])
    assert "DeadlineExceeded" in repr(info.value) or isinstance(info.value, DeadlineExceeded)
    assert seen and seen[0]  # the thread saw the budget (not retried past it)
    _stopped_early(llm, 5)


def test_the_agent_loop_stops_mid_reply_without_retrying(tmp_path: Path) -> None:
    home = MemoryHome.open(tmp_path / "home")
    from memagent.setup import init_home

    init_home(home)
    llm, cancel = _slow_model(), threading.Event()
    _cancel_after(llm, 5, cancel)
    with (
        Agent(home, llm, learn_profile=False, embeddings=False, record=False) as agent,
        deadline(None, cancel=cancel),
        pytest.raises(DeadlineExceeded),
    ):
        agent.turn("Tell me everything.")
    assert len(llm.calls) == 0  # the one model call was stopped; no second step ran
    _stopped_early(llm, 5)
