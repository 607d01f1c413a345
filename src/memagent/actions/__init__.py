"""JSON actions on the vault: schemas, the LLM-response parser and the runner.

Each action is declared once (`_vault_actions`: a model, a function and what it
reads and writes, registered by `action`); `SPECS`, the `Action` union and its
schema, the parser, the plan steps and the sandbox functions (`vault_tools`)
all come from that declaration.

An LLM acts on the vault by emitting `<actions>[…]</actions>`; `parse_response`
validates it (precise messages for the LLM, never exceptions), `run_actions`
runs it as one plan (`plan_actions`: independent actions concurrently,
conflicting ones in list order) and returns an `ActionsOutcome` whose
`to_json()` is the object the LLM reads. `vault_tools` gives the same actions
as plain functions for sandboxed code.
"""

from memagent.actions._catalog import (
    ACTION_MODELS,
    MODELS_BY_NAME,
    SPECS,
    Action,
    ActionList,
    action_json_schema,
)
from memagent.actions._models import BaseAction, DirField, PathField, VarRef
from memagent.actions._parse import (
    EXAMPLE,
    ActionsInvalid,
    ParsedResponse,
    parse_actions_json,
    parse_response,
    validate_actions,
)
from memagent.actions._registry import ActionSpec, action
from memagent.actions._resources import WHOLE_VAULT, overlaps, resources_of
from memagent.actions._results import ActionOutcome, ActionOutcomeJson, ActionsOutcome, json_value
from memagent.actions._runner import (
    arun_actions,
    plan_actions,
    run_action,
    run_actions,
    run_actions_in_order,
)
from memagent.actions.sandbox_tools import vault_tools

__all__ = [
    "ACTION_MODELS",
    "EXAMPLE",
    "MODELS_BY_NAME",
    "SPECS",
    "WHOLE_VAULT",
    "Action",
    "ActionList",
    "ActionOutcome",
    "ActionOutcomeJson",
    "ActionSpec",
    "ActionsInvalid",
    "ActionsOutcome",
    "BaseAction",
    "DirField",
    "ParsedResponse",
    "PathField",
    "VarRef",
    "action",
    "action_json_schema",
    "arun_actions",
    "json_value",
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
