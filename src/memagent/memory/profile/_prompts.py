"""The profile pipeline's prompt files (`prompts/<name>.yaml` beside the code),
read once each: prompts are data, shared by the extraction and the older
switchboard/planner path."""

from __future__ import annotations

from functools import cache
from importlib.resources import files as package_files
from typing import Any

import yaml
from jinja2 import Environment, StrictUndefined
from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

_env = Environment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=True)


def render(template: str, **values: Any) -> str:
    """A prompt's user turn with `values` filled in (Jinja: a value is never read as
    a template, so a statement that says "{{ line }}" stays as it was said)."""
    return _env.from_string(template).render(**values).strip()


class Example(BaseModel):
    """A few-shot turn: what the user says and the JSON the assistant replies."""

    model_config = ConfigDict(extra="forbid")

    user: str
    assistant: JsonValue


class KindQuestion(BaseModel):
    """The question asked of a value in one list (`valuekind`): the list, the
    prefix its lines begin with, a Jinja template over `value`, and the P(yes)
    under which the line is not written."""

    model_config = ConfigDict(extra="forbid")

    path: str
    prefix: str = ""
    question: str
    keep_at: float = Field(ge=0.0, le=1.0)
    refile: str | None = None
    """The list (in the general file) a line goes to instead when its value is not
    of this list's kind: "Dislikes horror films" is no food, but still a dislike."""


class PromptSpec(BaseModel):
    """One prompt file: the system text, few-shot examples, and the user turns
    (Jinja templates) a stage sends; a stage reads the turns it needs."""

    model_config = ConfigDict(extra="forbid")

    system: str = ""
    examples: list[Example] = []
    user: str = ""
    gate: str = ""
    kinds: list[KindQuestion] = []


@cache
def load_prompt(name: str) -> PromptSpec:
    """The prompt in `prompts/<name>.yaml`; `RuntimeError` when it is not one
    (a broken package, not a user's input)."""
    text = (package_files("memagent.memory.profile") / "prompts" / f"{name}.yaml").read_text(
        encoding="utf-8"
    )
    try:
        return PromptSpec.model_validate(yaml.safe_load(text))
    except ValidationError as exc:
        raise RuntimeError(f"prompt file {name}.yaml is not a prompt: {exc}") from exc
