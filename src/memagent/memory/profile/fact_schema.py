"""What the model is asked to read in a statement: the kinds of fact, one fact as
read (`Extracted`: its kind, the thing copied from the statement, a name) and the
reply schema the model is held to. What becomes of a fact is `facts`' job."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StringConstraints

Kind = Literal[
    "allergy",
    "diet",
    "food_like",
    "food_dislike",
    "drink_like",
    "drink_dislike",
    "condition",
    "medication",
    "exercise",
    "routine",
    "plan",
    "whereabouts",
    "home",
    "work",
    "name",
    "pet",
    "family",
    "language",
    "like",
    "dislike",
    "communication",
]
KINDS: tuple[str, ...] = Kind.__args__  # type: ignore[attr-defined]
MAX_FACTS_PER_CALL = 6
"""The schema's `maxItems`: a self-introduction says five facts or more in one line."""
MAX_VALUE_CHARS = 60
MAX_NAME_CHARS = 40


class Extracted(BaseModel):
    """One fact as the model reads it: its kind, the thing (copied from the
    statement) and, for a pet or a relative, their name."""

    model_config = ConfigDict(extra="forbid")

    kind: Kind
    value: Annotated[str, StringConstraints(min_length=1, max_length=MAX_VALUE_CHARS)]
    name: Annotated[str, StringConstraints(max_length=MAX_NAME_CHARS)] = ""


def _first_facts(value: object) -> object:
    """A model that lists more facts than the schema allows (a hosted one need not
    honour `maxItems`) keeps its first ones rather than losing the whole reply."""
    return value[:MAX_FACTS_PER_CALL] if isinstance(value, list) else value


class Extraction(BaseModel):
    model_config = ConfigDict(extra="forbid")

    facts: Annotated[list[Extracted], BeforeValidator(_first_facts)] = Field(
        max_length=MAX_FACTS_PER_CALL
    )


def extraction_schema(min_facts: int = 0) -> dict[str, object]:
    """The reply schema, written out so llama.cpp supports every part of it:
    enums, bounded strings and arrays, no regex `pattern`, no `$ref`.
    `min_facts` 1: the reply must list a fact (`minItems`)."""
    fact = {
        "type": "object",
        "properties": {
            "kind": {"type": "string", "enum": list(KINDS)},
            "value": {"type": "string", "minLength": 1, "maxLength": MAX_VALUE_CHARS},
            "name": {"type": "string", "maxLength": MAX_NAME_CHARS},
        },
        "required": ["kind", "value", "name"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {
            "facts": {
                "type": "array",
                "items": fact,
                **({"minItems": min_facts} if min_facts else {}),
                "maxItems": MAX_FACTS_PER_CALL,
            }
        },
        "required": ["facts"],
        "additionalProperties": False,
    }
