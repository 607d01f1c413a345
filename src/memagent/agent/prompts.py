"""Prompt sets: YAML files beside this module (`prompts/NAME.yaml`) holding Jinja
templates (system, user turn, result, planning) and few-shot example
conversations. Prompts are data: edit the YAML, not the code.

Sets: `instruct` (the embedded instruct model: reply only, memory handled by the
loop, no few-shot examples), `small` (the tiny embedded base model: the same job
shown by few-shot turns with placeholders), `qa` (short-phrase answers from
memory: `ask --short` and `ask --batch`), `json` and `python` (the two modes
for capable models), `deep` (recursive retrieval) and `expand` (search terms
for `recall --deep`). Examples are written as
JSON steps; for a model asked for tagged text instead (`structured=False`) they
are rendered as tags.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

import yaml
from jinja2 import Environment, StrictUndefined

from memagent.core import InvalidInput
from memagent.llm import Message

PROMPT_SETS = ("instruct", "qa", "small", "json", "python", "deep", "expand")
_env = Environment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=False)


@dataclass(frozen=True)
class PromptSet:
    name: str
    schema: str
    templates: dict[str, str]
    examples: list[list[dict[str, str]]]
    history_turns: int | None = None
    """Chat turns to show the model; None follows config `agent.history_turns`."""
    recall_for: str = "all"
    """`all` messages, or only `questions` (and requests): recalled memory in context."""

    def render(self, key: str, **values: Any) -> str:
        if key not in self.templates:
            raise InvalidInput(f"prompt set {self.name!r} has no {key!r} template")
        return _env.from_string(self.templates[key]).render(**values).strip()

    def example_messages(self, *, structured: bool) -> list[Message]:
        out: list[Message] = []
        for convo in self.examples:
            for m in convo:
                content = m["content"]
                if m["role"] == "assistant" and not structured:
                    content = as_tags(content)
                out.append(Message.model_validate({"role": m["role"], "content": content}))
        return out


def as_tags(step_json: str) -> str:
    """A JSON step as tagged text (`<think>`, `<actions>`, `<python>`, `<reply>`)."""
    obj = json.loads(step_json)
    parts = []
    if obj.get("think"):
        parts.append(f"<think>{obj['think']}</think>")
    if obj.get("actions") is not None:
        parts.append(f"<actions>{json.dumps(obj['actions'], ensure_ascii=False)}</actions>")
    if obj.get("python"):
        parts.append(f"<python>\n{obj['python']}\n</python>")
    if obj.get("reply"):
        parts.append(f"<reply>{obj['reply']}</reply>")
    return "\n".join(parts)


@cache
def load_prompt_set(name: str) -> PromptSet:
    if name not in PROMPT_SETS:
        raise InvalidInput(f"unknown prompt set {name!r}: one of {', '.join(PROMPT_SETS)}")
    raw = files("memagent.agent").joinpath(f"prompts/{name}.yaml").read_text(encoding="utf-8")
    data = yaml.safe_load(raw)
    templates = {k: v for k, v in data.items() if isinstance(v, str) and k not in ("schema",)}
    examples = data.get("examples") or []
    history = data.get("history_turns")
    return PromptSet(
        name,
        str(data.get("schema", "step")),
        templates,
        examples,
        history if isinstance(history, int) else None,
        "questions" if data.get("recall_for") == "questions" else "all",
    )
