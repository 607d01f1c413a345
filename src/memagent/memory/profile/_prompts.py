"""The profile pipeline's prompt files (`prompts/<name>.yaml` beside the code),
read once each: prompts are data, shared by the extraction and the older
switchboard/planner path."""

from __future__ import annotations

from functools import cache
from importlib.resources import files as package_files
from typing import Any

import yaml


@cache
def load_prompt(name: str) -> dict[str, Any]:
    """The mapping in `prompts/<name>.yaml`; `RuntimeError` when it is not one
    (a broken package, not a user's input)."""
    text = (package_files("memagent.memory.profile") / "prompts" / f"{name}.yaml").read_text(
        encoding="utf-8"
    )
    data = yaml.safe_load(text)
    if not isinstance(data, dict):
        raise RuntimeError(f"prompt file {name}.yaml is not a mapping")
    return data
