"""The base of every action schema. Each action's own model is declared beside
its function (`_vault_actions`); the union of them comes from the registry.

Every field except `action` and `assign_to` may instead hold `{"$var": "name"}`
(or `{"$var": "name.key"}`), the value of an earlier action that had
`"assign_to": "name"`."""

from __future__ import annotations

import json
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

VAR_NAME = r"^[A-Za-z_][A-Za-z0-9_]{0,63}$"
VAR_REF = r"^[A-Za-z_][A-Za-z0-9_]{0,63}(\.[A-Za-z0-9_]{1,64}){0,8}$"
NOT_ARGUMENTS = ("action", "assign_to")
"""The fields of an action model that are not arguments of its function."""


class VarRef(BaseModel):
    """`{"$var": "name"}`: the value an earlier action assigned to `name`;
    `name.key` picks a key of an object value (or an index of a list)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)

    var: str = Field(alias="$var", pattern=VAR_REF)

    @property
    def name(self) -> str:
        return self.var.split(".", 1)[0]

    @property
    def keys(self) -> list[str]:
        return self.var.split(".")[1:]


Str = str | VarRef
Bool = bool | VarRef
Int = int | VarRef

PathField = Annotated[Str, Field(description="Path relative to the vault root, e.g. 'user.md'.")]
DirField = Annotated[Str, Field(description="Folder relative to the vault root; '' is the root.")]


class BaseAction(BaseModel):
    """An action object as the model writes it: `action` (a `Literal` naming it,
    declared by each subclass), its arguments, and an optional `assign_to`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    example: ClassVar[dict[str, Any]] = {}

    assign_to: str | None = Field(
        default=None,
        pattern=VAR_NAME,
        description='Name this result; later actions use it as {"$var": "name"}.',
    )

    def fields(self) -> dict[str, object]:
        """The action's arguments (everything but `action` and `assign_to`)."""
        return {
            name: getattr(self, name)
            for name in type(self).model_fields
            if name not in NOT_ARGUMENTS
        }

    @classmethod
    def example_json(cls) -> str:
        return json.dumps(cls.example, ensure_ascii=False)
