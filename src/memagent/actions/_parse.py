"""From raw LLM text to validated actions, with messages written for the LLM.

`parse_response` splits `<think>`, `<actions>` and `<reply>` (case-insensitive
tags, stray whitespace and code fences tolerated) and validates the actions.
It never raises: a malformed block yields `ParsedResponse.error`, a message
that says what is wrong, where, and shows a correct example, so the LLM can
fix it on its next turn. `validate_actions` checks a decoded JSON value:
every action against its schema, and every `$var` against an earlier, unique
`assign_to`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from memagent.actions._catalog import MODELS_BY_NAME
from memagent.actions._models import BaseAction, VarRef
from memagent.core import InvalidInput

MAX_ACTIONS = 200
_FLAGS = re.IGNORECASE | re.DOTALL
_THINK = re.compile(r"<\s*think\s*>(.*?)(?:<\s*/\s*think\s*>|$)", _FLAGS)
_ACTIONS_OPEN = re.compile(r"<\s*actions\s*>", re.IGNORECASE)
_ACTIONS_CLOSE = re.compile(r"<\s*/\s*actions\s*>", re.IGNORECASE)
_REPLY = re.compile(r"<\s*reply\s*>(.*?)(?:<\s*/\s*reply\s*>|$)", _FLAGS)
_FENCE = re.compile(r"^\s*```[A-Za-z0-9_-]*[ \t]*\n?(.*?)\n?```\s*$", re.DOTALL)
EXAMPLE = (
    '<actions>[{"action": "read_file", "path": "user.md", "assign_to": "me"}, '
    '{"action": "append_file", "path": "user.md", "content": "- Likes tea\\n"}]</actions>'
)


class ActionsInvalid(InvalidInput):
    """A batch of actions that cannot run; the message is meant for the LLM."""


@dataclass
class ParsedResponse:
    """The parts of one LLM response. `error` is None when the actions are valid."""

    think: str | None = None
    reply: str | None = None
    actions: list[BaseAction] = field(default_factory=list)
    actions_found: bool = False
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def strip_fences(text: str) -> str:
    """`text` without one surrounding ``` fence (``` or ```json)."""
    m = _FENCE.match(text)
    return m.group(1) if m else text


def _json_error(block: str, exc: json.JSONDecodeError) -> str:
    lines = block.splitlines() or [""]
    line = lines[min(exc.lineno, len(lines)) - 1]
    start = max(0, exc.colno - 40)
    snippet = line[start : exc.colno + 40]
    caret = " " * (exc.colno - 1 - start) + "^"
    return (
        f"the <actions> block is not valid JSON: {exc.msg} at line {exc.lineno}, "
        f"column {exc.colno}:\n    {snippet}\n    {caret}\n"
        "Write a JSON array of objects (double quotes, no trailing commas, newlines in "
        f"strings written as \\n). Example:\n{EXAMPLE}"
    )


def _describe_type(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return type(value).__name__ if value is not None else "null"


def _validate_one(index: int, item: Any) -> BaseAction | list[str]:
    """The validated action, or the problems with it (for the LLM)."""
    where = f"action {index}"
    if not isinstance(item, dict):
        return [f'{where} is {_describe_type(item)}, not an object like {{"action": ...}}']
    name = item.get("action")
    if name is None:
        return [f'{where} has no "action" field; one of: {", ".join(MODELS_BY_NAME)}']
    model = MODELS_BY_NAME.get(name) if isinstance(name, str) else None
    if model is None:
        return [f"{where}: unknown action {name!r}; valid actions: {', '.join(MODELS_BY_NAME)}"]
    try:
        return model.model_validate(item)
    except ValidationError as exc:
        problems: dict[str, str] = {}
        for err in exc.errors():
            loc = [str(p) for p in err["loc"]]
            fname = loc[0] if loc else "?"
            if fname in problems:
                continue
            if err["type"] == "missing":
                problems[fname] = f'missing field "{fname}"'
            elif err["type"] == "extra_forbidden":
                allowed = ", ".join(k for k in model.model_fields if k != "action")
                problems[fname] = f'unknown field "{fname}" (fields: {allowed})'
            elif fname == "assign_to":
                problems[fname] = 'assign_to must be a name like "note" (letters, digits, _)'
            else:
                got = _describe_type(item.get(fname))
                want = model.model_fields[fname].annotation if fname in model.model_fields else None
                kind = (
                    "text"
                    if "str" in str(want)
                    else "a boolean"
                    if "bool" in str(want)
                    else "a value"
                )
                if isinstance(item.get(fname), dict) and "$var" in item[fname]:
                    problems[fname] = f'field "{fname}": bad $var reference ({err["msg"]})'
                else:
                    problems[fname] = (
                        f'field "{fname}" must be {kind} or {{"$var": "name"}}, got {got}'
                    )
        return [
            f"{where} ({name}): {'; '.join(problems.values())}. Example: {model.example_json()}"
        ]


def _var_refs(action: BaseAction) -> list[tuple[str, VarRef]]:
    return [(k, v) for k, v in action.fields().items() if isinstance(v, VarRef)]


def validate_actions(data: Any) -> list[BaseAction]:
    """Validated actions from a decoded JSON value, or `ActionsInvalid` listing
    every problem. A single object is accepted as a batch of one."""
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        raise ActionsInvalid(
            f"actions must be a JSON array of objects, got {_describe_type(data)}. "
            f"Example:\n{EXAMPLE}"
        )
    if len(data) > MAX_ACTIONS:
        raise ActionsInvalid(f"{len(data)} actions in one batch; at most {MAX_ACTIONS}")
    problems: list[str] = []
    actions: list[BaseAction] = []
    for i, item in enumerate(data):
        checked = _validate_one(i, item)
        if isinstance(checked, list):
            problems.extend(checked)
        else:
            actions.append(checked)
    if problems:
        raise ActionsInvalid("invalid actions:\n- " + "\n- ".join(problems))
    assigned: dict[str, int] = {}
    for i, act in enumerate(actions):
        for fname, ref in _var_refs(act):
            if ref.name not in assigned:
                problems.append(
                    f'action {i} ({type(act).example["action"]}): field "{fname}" refers to '
                    f'$var "{ref.name}", but no earlier action has "assign_to": "{ref.name}"'
                )
        if act.assign_to is not None:
            if act.assign_to in assigned:
                problems.append(
                    f'action {i}: "assign_to": "{act.assign_to}" is already used by action '
                    f"{assigned[act.assign_to]}; use a new name"
                )
            else:
                assigned[act.assign_to] = i
    if problems:
        raise ActionsInvalid("invalid actions:\n- " + "\n- ".join(problems))
    return actions


def parse_actions_json(block: str) -> list[BaseAction]:
    """Decode and validate one actions block (fences tolerated)."""
    text = strip_fences(block.strip()).strip()
    if not text:
        raise ActionsInvalid(f"the <actions> block is empty. Example:\n{EXAMPLE}")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ActionsInvalid(_json_error(text, exc)) from None
    except RecursionError:
        raise ActionsInvalid("the <actions> block is nested too deeply") from None
    return validate_actions(data)


def parse_response(text: str) -> ParsedResponse:
    """Split an LLM response into think / actions / reply. Never raises."""
    out = ParsedResponse()
    if not isinstance(text, str):
        out.error = f"response must be text, got {_describe_type(text)}"
        return out
    think = _THINK.search(text)
    if think:
        out.think = think.group(1).strip()
    rest = _THINK.sub("", text)
    reply = _REPLY.search(rest)
    if reply:
        out.reply = strip_fences(reply.group(1).strip()).strip()
    body = _REPLY.sub("", rest)
    opens = list(_ACTIONS_OPEN.finditer(body))
    if not opens:
        if _ACTIONS_CLOSE.search(body):
            out.actions_found = True
            out.error = f"found </actions> without an opening <actions>. Example:\n{EXAMPLE}"
            return out
        bare = strip_fences(body.strip()).strip()
        if bare.startswith(("[", "{")) and out.reply is None:
            out.actions_found = True
            try:
                out.actions = parse_actions_json(bare)
            except ActionsInvalid as exc:
                out.error = str(exc)
        elif out.reply is None and out.think is None:
            out.reply = body.strip() or None
        return out
    out.actions_found = True
    if len(opens) > 1:
        out.error = (
            f"found {len(opens)} <actions> blocks; put every action in one JSON array "
            f"inside a single <actions>…</actions>. Example:\n{EXAMPLE}"
        )
        return out
    start = opens[0].end()
    close = _ACTIONS_CLOSE.search(body, start)
    block = body[start : close.start()] if close else body[start:]
    try:
        out.actions = parse_actions_json(block)
    except ActionsInvalid as exc:
        msg = str(exc)
        if close is None:
            msg = f"the <actions> block is not closed with </actions>; {msg}"
        out.error = msg
    return out
