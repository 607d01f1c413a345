"""What an `Agent` is given: its settings are one validated `AgentConfig` (the home's
`[agent]` section, `config=`, keyword overrides on top), its model one spec."""

from __future__ import annotations

from typing import Any

import pytest

from memagent.agent import Agent
from memagent.agent.turn import agent_config
from memagent.core import InvalidInput, MemoryHome
from memagent.core.config import AgentConfig
from memagent.llm import ScriptedLLM


def test_settings_come_from_the_home_then_config_then_the_keywords(home: MemoryHome) -> None:
    home.config.agent.max_steps = 9
    with Agent(home, ScriptedLLM([]), embeddings=False, learn_profile=False) as a:
        assert a.config.max_steps == 9 and not a.config.learn_profile
        assert a.config.mode == "json" and a.prompts.name == "json"
    given = home.config.agent.model_copy(update={"recall_k": 8, "mode": "python"})
    with Agent(home, ScriptedLLM([]), config=given, max_steps=3, embeddings=False) as a:
        assert (a.config.recall_k, a.config.mode, a.config.max_steps) == (8, "python", 3)
        assert a.prompts.name == "python"  # the mode's prompt set
    assert home.config.agent.max_steps == 9  # the home's config is not changed


def test_a_keyword_of_none_keeps_the_configs_value() -> None:
    base = AgentConfig(planning_interval=2, mode="python")
    merged = agent_config(base, {"planning_interval": None, "mode": None, "prompt_set": "qa"})
    assert (merged.planning_interval, merged.mode, merged.prompt_set) == (2, "python", "qa")
    assert merged is not base


@pytest.mark.parametrize(
    ("overrides", "config", "message"),
    [
        ({"mode": "yaml"}, None, "agent setting mode: Input should be 'json' or 'python'"),
        ({"max_steps": 0}, None, "agent setting max_steps: Input should be greater than"),
        ({"max_steps": "many"}, None, "agent setting max_steps: Input should be a valid int"),
        ({"planning_interval": 0}, None, "agent setting planning_interval"),
        ({"learn_profle": False}, None, "unknown agent setting 'learn_profle'"),
        ({"verify_min": 0.0}, None, "unknown agent setting 'verify_min'.*config="),
        ({}, {"max_steps": 99}, "agent setting max_steps: Input should be less than"),
        ({}, {"recall_k": -1}, "agent setting recall_k"),
        ({"prompt_set": "nope"}, None, "unknown prompt set 'nope'"),
    ],
)
def test_a_bad_setting_is_one_clear_error(
    home: MemoryHome, overrides: dict[str, Any], config: dict[str, Any] | None, message: str
) -> None:
    """Also a config made by `model_copy(update=…)`, which pydantic does not check."""
    cfg = home.config.agent.model_copy(update=config) if config else None
    ops_before = home.layout.ops_log.read_bytes()
    with pytest.raises(InvalidInput, match=message) as err:
        Agent(home, ScriptedLLM([]), config=cfg, embeddings=False, **overrides)
    assert "\n" not in str(err.value)
    assert home.layout.ops_log.read_bytes() == ops_before


def test_retrieval_and_structured_are_settings_too(home: MemoryHome) -> None:
    off = home.config.agent.model_copy(update={"retrieval": False, "structured": False})
    llm = ScriptedLLM(["<reply>Hi.</reply>"])
    with Agent(home, llm, config=off, embeddings=False, learn_profile=False) as a:
        assert a.run("What is my dog called?") == "Hi."
    assert llm.calls[0].response_schema is None  # tagged text, no schema
