"""The response protocol of one model step, and its JSON Schema.

A step is `<think>…</think>`, then `<actions>[…]</actions>` (JSON mode) or
`<python>…</python>` / a ```python block (Python mode), and/or `<reply>…</reply>`
for the user. Where the backend takes a schema the same parts are requested as
one JSON object: `{"think": …, "actions": […], "reply": …}` or
`{"think": …, "python": "…", "reply": …}`.

`parse_step` never raises on model text: it returns a `Step`, or a `StepInvalid`
whose message says precisely what is wrong and shows the right shape, so the
loop can feed it back to the model.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal, TypedDict

from memagent.actions import ActionList
from memagent.agent.tools import Tool
from memagent.core import InvalidInput
from memagent.core.jsontext import JsonSchema

Mode = Literal["json", "python"]
MODES: tuple[str, ...] = ("json", "python")
MAX_ACTIONS_PER_STEP = 20
_FLAGS = re.IGNORECASE | re.DOTALL
_TAG = {
    name: re.compile(rf"<\s*{name}\s*>(.*?)(?:<\s*/\s*{name}\s*>|\Z)", _FLAGS)
    for name in ("think", "actions", "python", "reply")
}
_PY_FENCE = re.compile(r"```(?:python|py)[ \t]*\n(.*?)(?:```|\Z)", _FLAGS)
_FENCE = re.compile(r"^\s*```[A-Za-z0-9_-]*[ \t]*\n?(.*?)\n?```\s*$", re.DOTALL)
KEYS = {"json": ("think", "actions", "reply"), "python": ("think", "python", "reply")}
JSON_EXAMPLE = (
    '{"think": "The user told me a fact; I note it.", "actions": [{"action": "append_file", '
    '"path": "user.md", "content": "- Sister: Ana\\n"}], "reply": "Noted: your sister is Ana."}'
)
PYTHON_EXAMPLE = '{"think": "I look it up.", "python": "hits = recall(\\"sister\\")\\nprint(hits)"}'


class StepInvalid(InvalidInput):
    """A model step that cannot be used; the message is written for the model."""


class StepJson(TypedDict, total=False):
    think: str
    actions: list[Any]
    """As the model wrote them (validated when they run)."""
    python: str
    reply: str


@dataclass
class Step:
    think: str | None = None
    actions: list[Any] | None = None
    python: str | None = None
    reply: str | None = None

    def to_json(self) -> StepJson:
        out: StepJson = {}
        if self.think is not None:
            out["think"] = self.think
        if self.actions is not None:
            out["actions"] = self.actions
        if self.python is not None:
            out["python"] = self.python
        if self.reply is not None:
            out["reply"] = self.reply
        return out


def _example(mode: str) -> str:
    return JSON_EXAMPLE if mode == "json" else PYTHON_EXAMPLE


def _strip_fence(text: str) -> str:
    m = _FENCE.match(text)
    return m.group(1) if m else text


def _json_problem(text: str, exc: json.JSONDecodeError) -> str:
    line = (text.splitlines() or [""])[min(exc.lineno, len(text.splitlines()) or 1) - 1]
    start = max(0, exc.colno - 30)
    return f"{exc.msg} at line {exc.lineno}, column {exc.colno}: {line[start : exc.colno + 30]!r}"


def _from_object(obj: dict[str, Any], mode: str) -> Step:
    allowed = KEYS[mode]
    extra = [k for k in obj if k not in allowed]
    if extra:
        other = "python" if mode == "json" else "actions"
        if other in extra:
            raise StepInvalid(
                f'"{other}" is not available in {mode} mode; use '
                f'"{allowed[1]}". Example: {_example(mode)}'
            )
        raise StepInvalid(
            f"unknown keys {extra[:5]}; a step has only {list(allowed)}. Example: {_example(mode)}"
        )
    step = Step()
    for key in ("think", "reply", "python"):
        if key in obj and obj[key] is not None:
            if not isinstance(obj[key], str):
                raise StepInvalid(f'"{key}" must be a string. Example: {_example(mode)}')
            setattr(step, key, obj[key].strip() or None)
    if "actions" in obj and obj["actions"] is not None:
        acts = obj["actions"]
        if isinstance(acts, dict):
            acts = [acts]
        if not isinstance(acts, list):
            raise StepInvalid(f'"actions" must be a JSON array. Example: {JSON_EXAMPLE}')
        step.actions = acts or None
    return step


def parse_step(text: str, mode: str, *, structured: bool) -> Step:
    """The parts of one model response; `StepInvalid` when unusable.

    A JSON object is read as the structured form. Otherwise tags are read; with
    `structured=False`, plain text with no tags is taken as the reply.
    """
    if mode not in MODES:
        raise InvalidInput(f"unknown mode {mode!r}: use json or python")
    if not isinstance(text, str):
        raise StepInvalid("the response must be text")
    body = _strip_fence(text.strip()).strip()
    if not body:
        raise StepInvalid(f"the response is empty. Respond like this: {_example(mode)}")
    if body.startswith("{"):
        try:
            obj = json.loads(body)
        except json.JSONDecodeError as exc:
            raise StepInvalid(
                f"the response is not valid JSON: {_json_problem(body, exc)}. "
                f"Respond with one JSON object, e.g. {_example(mode)}"
            ) from None
        except RecursionError:
            raise StepInvalid("the response is nested too deeply") from None
        if not isinstance(obj, dict):
            raise StepInvalid(f"the response must be a JSON object, e.g. {_example(mode)}")
        step = _from_object(obj, mode)
    else:
        step = _from_tags(text, mode, structured=structured)
    if step.actions is None and step.python is None and step.reply is None:
        raise StepInvalid(
            "the response has no reply and nothing to do: give "
            f'"reply" for the user or "{KEYS[mode][1]}". Example: {_example(mode)}'
        )
    if step.actions is not None and len(step.actions) > MAX_ACTIONS_PER_STEP:
        raise StepInvalid(
            f"{len(step.actions)} actions in one step; at most {MAX_ACTIONS_PER_STEP}"
        )
    return step


def _from_tags(text: str, mode: str, *, structured: bool) -> Step:
    found = {name: rx.search(text) for name, rx in _TAG.items()}
    step = Step()
    if found["think"]:
        step.think = found["think"].group(1).strip() or None
    if found["reply"]:
        step.reply = _strip_fence(found["reply"].group(1).strip()).strip() or None
    code = found["python"] or _PY_FENCE.search(text)
    if found["actions"]:
        if mode != "json":
            raise StepInvalid(
                f"<actions> is not available in python mode; write code in <python>. "
                f"Example: {PYTHON_EXAMPLE}"
            )
        block = _strip_fence(found["actions"].group(1).strip()).strip()
        try:
            acts = json.loads(block)
        except json.JSONDecodeError as exc:
            raise StepInvalid(
                f"the <actions> block is not valid JSON: {_json_problem(block, exc)}. "
                f"Example: {JSON_EXAMPLE}"
            ) from None
        except RecursionError:
            raise StepInvalid("the <actions> block is nested too deeply") from None
        if isinstance(acts, dict):
            acts = [acts]
        if not isinstance(acts, list):
            raise StepInvalid(f"<actions> must hold a JSON array. Example: {JSON_EXAMPLE}")
        step.actions = acts or None
    elif code is not None:
        if mode != "python":
            raise StepInvalid(
                f"python code is not available in json mode; use actions. Example: {JSON_EXAMPLE}"
            )
        step.python = code.group(1).strip() or None
    if step.actions is None and step.python is None and step.reply is None:
        if structured:
            raise StepInvalid(
                f"the response is not a JSON object. Respond with one JSON object, e.g. "
                f"{_example(mode)}"
            )
        rest = _TAG["think"].sub("", text).strip()
        step.reply = rest or None
    return step


# -- schemas ------------------------------------------------------------------------------


def reply_schema(max_chars: int = 300) -> JsonSchema:
    """The smallest step: only a reply (the embedded model's default prompt set)."""
    return {
        "type": "object",
        "properties": {"reply": {"type": "string", "minLength": 1, "maxLength": max_chars}},
        "required": ["reply"],
        "additionalProperties": False,
    }


def step_schema(mode: str, tools: list[Tool]) -> JsonSchema:
    """JSON Schema of one step in `mode`, with the loaded tools as actions."""
    props: dict[str, JsonSchema] = {"think": {"type": "string", "maxLength": 1000}}
    defs: dict[str, JsonSchema] = {}
    if mode == "json":
        vault = ActionList.json_schema()
        defs.update(vault.pop("$defs", {}))
        items: list[JsonSchema] = [vault["items"]]
        for tool in tools:
            ts = tool.action_schema()
            defs.update(ts.pop("$defs", {}))
            items.append(ts)
        props["actions"] = {
            "type": "array",
            "items": {"anyOf": items},
            "maxItems": MAX_ACTIONS_PER_STEP,
        }
    else:
        props["python"] = {"type": "string", "maxLength": 20000}
    props["reply"] = {"type": "string", "maxLength": 4000}
    schema: JsonSchema = {
        "type": "object",
        "properties": props,
        "additionalProperties": False,
    }
    if defs:
        schema["$defs"] = defs
    return schema
