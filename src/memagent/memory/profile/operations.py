"""Operations on resource files, as the LLM (or a person) writes them.

```json
{"operation": "append", "file": "resource_user_food_prefs.json", "path": "food.likes",
 "value": {"item": "kung_pao_chicken", "display": "Kung pao chicken"}, "expiry": null}
```

`append` adds an item (a duplicate by `match_key` becomes `no_change`), `update`
changes an item's fields by key, `remove` deletes it, `no_change` records a
decision to do nothing. `expiry` is a date (`YYYY-MM-DD`) or relative (`+7d`,
`+2w`); `added` and `updated` are never accepted here: Python sets them.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    TypeAdapter,
    field_validator,
)

from memagent.memory.profile.models import (
    FILE_NAME,
    MAX_DISPLAY_CHARS,
    MAX_KEY_CHARS,
    MAX_NOTE_CHARS,
    PATH,
)

MAX_BATCH_OPERATIONS = 1000
MAX_RELATIVE_DAYS = 3660

_RELATIVE = re.compile(r"^\+(\d{1,4})([dw])$")
EXPIRY_PATTERN = r"^(\d{4}-\d{2}-\d{2}|\+\d{1,4}[dw])$"

FileName = Annotated[str, StringConstraints(pattern=FILE_NAME)]
OpPath = Annotated[str, StringConstraints(pattern=PATH)]
Expiry = Annotated[str, StringConstraints(pattern=EXPIRY_PATTERN)]
ItemKey = Annotated[str, StringConstraints(min_length=1, max_length=MAX_KEY_CHARS)]


def resolve_expiry(spec: str | None, today: date) -> date | None:
    """`YYYY-MM-DD` → that day; `+Nd` / `+Nw` → today plus N days / weeks."""
    if spec is None:
        return None
    m = _RELATIVE.match(spec)
    if m:
        days = int(m.group(1)) * (7 if m.group(2) == "w" else 1)
        if days > MAX_RELATIVE_DAYS:
            raise ValueError(f"expiry {spec!r} is more than {MAX_RELATIVE_DAYS} days away")
        return today + timedelta(days=days)
    return date.fromisoformat(spec)


class _Op(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @field_validator("expiry", mode="after", check_fields=False)
    @classmethod
    def _valid_expiry(cls, value: str | None) -> str | None:
        if value is not None:
            resolve_expiry(value, date(2000, 1, 1))
        return value


class NewItem(BaseModel):
    """What an `append` adds; `display` defaults to the key made readable."""

    model_config = ConfigDict(extra="forbid")

    item: ItemKey
    display: (
        Annotated[str, StringConstraints(min_length=1, max_length=MAX_DISPLAY_CHARS)] | None
    ) = None
    note: Annotated[str, StringConstraints(max_length=MAX_NOTE_CHARS)] | None = None


class ItemChanges(BaseModel):
    """What an `update` changes: the key that finds the item, then any fields."""

    model_config = ConfigDict(extra="forbid")

    item: ItemKey
    display: (
        Annotated[str, StringConstraints(min_length=1, max_length=MAX_DISPLAY_CHARS)] | None
    ) = None
    note: Annotated[str, StringConstraints(max_length=MAX_NOTE_CHARS)] | None = None


class ItemRef(BaseModel):
    model_config = ConfigDict(extra="forbid")

    item: ItemKey


class AppendOp(_Op):
    operation: Literal["append"]
    file: FileName
    path: OpPath
    value: NewItem
    expiry: Expiry | None = None


class UpdateOp(_Op):
    """Fields left out of `value` stay as they are; `expiry` changes only when
    given (`null` clears it)."""

    operation: Literal["update"]
    file: FileName
    path: OpPath
    value: ItemChanges
    expiry: Expiry | None = None


class RemoveOp(_Op):
    operation: Literal["remove"]
    file: FileName
    path: OpPath
    value: ItemRef


class NoChangeOp(_Op):
    operation: Literal["no_change"]
    file: FileName | None = None
    path: OpPath | None = None
    reason: Annotated[str, StringConstraints(max_length=MAX_NOTE_CHARS)] | None = None


Operation = Annotated[AppendOp | UpdateOp | RemoveOp | NoChangeOp, Field(discriminator="operation")]
OPERATION_ADAPTER: TypeAdapter[AppendOp | UpdateOp | RemoveOp | NoChangeOp] = TypeAdapter(Operation)
AnyOp = AppendOp | UpdateOp | RemoveOp | NoChangeOp


class OperationBatch(BaseModel):
    """What the memory planner returns: the operations for one message."""

    model_config = ConfigDict(extra="forbid")

    operations: list[Operation] = Field(max_length=MAX_BATCH_OPERATIONS)


def parse_operation(data: Any) -> AnyOp:
    return OPERATION_ADAPTER.validate_python(data)


def operation_schema() -> dict[str, Any]:
    return OPERATION_ADAPTER.json_schema()
