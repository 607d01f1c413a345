"""Structured profile memory: JSON resource files, the operations that change
them, and the pipeline that learns them from conversation (DESIGN.md part 3)."""

from typing import TYPE_CHECKING, Any

from memagent.memory.profile.handler import (
    AppliedOps,
    OperationRejected,
    Outcome,
    apply_operations,
    prune,
)
from memagent.memory.profile.history import HistoryEntry, UndoResult, history, undo
from memagent.memory.profile.item_keys import match_key, slug
from memagent.memory.profile.models import Item, Metadata, Resource, ResourceFile
from memagent.memory.profile.operations import (
    AnyOp,
    AppendOp,
    NoChangeOp,
    OperationBatch,
    RemoveOp,
    UpdateOp,
    operation_schema,
    parse_operation,
    resolve_expiry,
)
from memagent.memory.profile.router import Route, route
from memagent.memory.profile.store import (
    GENERAL_RESOURCE,
    STARTER_FILES,
    ProfileStore,
    init_profile,
    parse_resource,
)

if TYPE_CHECKING:
    from memagent.memory.profile.extract import StatementLearned, learn_statement, worth_learning
    from memagent.memory.profile.pipeline import (
        Fact,
        LearnFailed,
        LearnResult,
        SwitchboardOutput,
        learn,
        learn_with_planner,
        plan_memory,
        route_facts,
        switchboard,
    )

__all__ = [
    "GENERAL_RESOURCE",
    "STARTER_FILES",
    "AnyOp",
    "AppendOp",
    "AppliedOps",
    "Fact",
    "HistoryEntry",
    "Item",
    "LearnFailed",
    "LearnResult",
    "Metadata",
    "NoChangeOp",
    "OperationBatch",
    "OperationRejected",
    "Outcome",
    "ProfileStore",
    "RemoveOp",
    "Resource",
    "ResourceFile",
    "Route",
    "StatementLearned",
    "SwitchboardOutput",
    "UndoResult",
    "UpdateOp",
    "apply_operations",
    "history",
    "init_profile",
    "learn",
    "learn_statement",
    "learn_with_planner",
    "match_key",
    "operation_schema",
    "parse_operation",
    "parse_resource",
    "plan_memory",
    "prune",
    "resolve_expiry",
    "route",
    "route_facts",
    "slug",
    "switchboard",
    "undo",
    "worth_learning",
]

_LEARNING = {
    "StatementLearned": "extract",
    "learn_statement": "extract",
    "worth_learning": "extract",
    "Fact": "pipeline",
    "LearnFailed": "pipeline",
    "LearnResult": "pipeline",
    "SwitchboardOutput": "pipeline",
    "learn": "pipeline",
    "learn_with_planner": "pipeline",
    "plan_memory": "pipeline",
    "route_facts": "pipeline",
    "switchboard": "pipeline",
}


def __getattr__(name: str) -> Any:
    """Learning (`extract`, `pipeline`) imports lazily: its rules compile hundreds of
    regexes, which a command that only reads or changes the profile never needs."""
    module = _LEARNING.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
