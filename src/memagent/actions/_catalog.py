"""Everything derived from the declared actions (`_registry`): the specs, the
models by name, the discriminated `Action` union, the batch adapter and its
JSON Schema. Importing this module imports the declarations."""

from __future__ import annotations

from typing import Annotated, Any, Union

from pydantic import Field, TypeAdapter

from memagent.actions import _vault_actions  # noqa: F401 (declares the vault actions)
from memagent.actions._models import BaseAction
from memagent.actions._registry import REGISTRY, ActionSpec
from memagent.core.jsontext import JsonSchema

SPECS: dict[str, ActionSpec] = dict(REGISTRY)
"""Every action's spec by name, in declaration order."""

ACTION_MODELS: tuple[type[BaseAction], ...] = tuple(s.model for s in SPECS.values())
MODELS_BY_NAME: dict[str, type[BaseAction]] = {n: s.model for n, s in SPECS.items()}

Action: Any = Annotated[Union[ACTION_MODELS], Field(discriminator="action")]  # noqa: UP007
"""One action of any kind, told apart by its `action` field (a pydantic type)."""
ActionList: TypeAdapter[list[BaseAction]] = TypeAdapter(list[Action])


def action_json_schema() -> JsonSchema:
    """JSON Schema of a batch: an array of actions (for constrained decoding, docs)."""
    schema = ActionList.json_schema()
    schema["title"] = "memagent vault actions"
    schema["description"] = (
        "A JSON array of actions run in order on the markdown vault. Any field but "
        '"action" and "assign_to" may be {"$var": "name"}: the value of an earlier '
        'action that had "assign_to": "name".'
    )
    return schema
