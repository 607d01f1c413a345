"""JSON actions on the vault: schemas, the LLM-response parser and the runner.

An LLM acts on the vault by emitting `<actions>[…]</actions>`; `parse_response`
validates it (precise messages for the LLM, never exceptions), `run_actions`
runs it as one plan (`plan_actions`: independent actions concurrently,
conflicting ones in list order) and returns one JSON-able result object. Each
action is a plain function in `SPECS` with declared resources (`resources_of`).
`vault_tools` gives the same actions as plain functions for sandboxed code.
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
from memagent.actions._runner import (
    arun_actions,
    plan_actions,
    run_action,
    run_actions,
    run_actions_in_order,
)
from memagent.actions._tools import SPECS, WHOLE_VAULT, ActionSpec, overlaps, resources_of
from memagent.actions.sandbox_tools import vault_tools

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
    "arun_actions",
    "overlaps",
    "parse_actions_json",
    "parse_response",
    "plan_actions",
    "resources_of",
    "run_action",
    "run_actions",
    "run_actions_in_order",
    "validate_actions",
    "vault_tools",
]
