"""JSON actions on the vault: schemas, the LLM-response parser and the runner.

An LLM acts on the vault by emitting `<actions>[…]</actions>`; `parse_response`
validates it (precise messages for the LLM, never exceptions), `run_actions`
runs it and returns one JSON-able result object. Each action is a plain
function in `SPECS` with declared resources (`resources_of`), so a planner can
schedule actions as steps.
"""

from memagent.actions._models import (
    ACTION_MODELS,
    MODELS_BY_NAME,
    Action,
    ActionList,
    BaseAction,
    VarRef,
    action_json_schema,
)
from memagent.actions._parse import (
    EXAMPLE,
    ActionsInvalid,
    ParsedResponse,
    parse_actions_json,
    parse_response,
    validate_actions,
)
from memagent.actions._runner import run_action, run_actions
from memagent.actions._tools import SPECS, WHOLE_VAULT, ActionSpec, overlaps, resources_of

__all__ = [
    "ACTION_MODELS",
    "EXAMPLE",
    "MODELS_BY_NAME",
    "SPECS",
    "WHOLE_VAULT",
    "Action",
    "ActionList",
    "ActionSpec",
    "ActionsInvalid",
    "BaseAction",
    "ParsedResponse",
    "VarRef",
    "action_json_schema",
    "overlaps",
    "parse_actions_json",
    "parse_response",
    "resources_of",
    "run_action",
    "run_actions",
    "validate_actions",
]
