"""Structured replies: check a response schema, pull JSON out of model text,
validate it, and render the prompt-and-repair messages for servers that cannot
constrain decoding.

The prompts are data (`prompts/structured.yaml`); this module only renders them.
"""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files
from typing import Any

import jsonschema
import yaml
from jinja2 import Environment, StrictUndefined

from memagent.core.errors import InvalidInput

_MAX_ERROR_CHARS = 300
_env = Environment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=False)


@cache
def _prompts() -> dict[str, str]:
    raw = files("memagent.llm").joinpath("prompts/structured.yaml").read_text(encoding="utf-8")
    data = yaml.safe_load(raw)
    return {str(k): str(v) for k, v in data.items()}


def render(name: str, **values: Any) -> str:
    """Render one prompt of `prompts/structured.yaml` (`instruction`, `repair`)."""
    return _env.from_string(_prompts()[name]).render(**values).strip()


def check_schema(schema: Any) -> dict[str, Any]:
    """Refuse a response schema that is not a JSON object holding a valid JSON Schema."""
    if not isinstance(schema, dict):
        raise InvalidInput(
            f"response_schema must be a JSON Schema object, not {type(schema).__name__}"
        )
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise InvalidInput(f"response_schema is not a valid JSON Schema: {exc.message}") from exc
    return schema


def extract_json(text: str) -> Any:
    """The first JSON document in `text`, tolerating a code fence or prose around it.

    Raises `ValueError` with a short reason when there is none.
    """
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.split("\n", 1)[1] if "\n" in stripped else ""
        stripped = stripped.rsplit("```", 1)[0].strip()
    try:
        return json.loads(stripped)
    except json.JSONDecodeError:
        pass
    decoder = json.JSONDecoder()
    for i, ch in enumerate(stripped):
        if ch in "{[":
            try:
                value, _ = decoder.raw_decode(stripped, i)
            except json.JSONDecodeError:
                continue
            return value
    raise ValueError("it contains no JSON document")


def validate_reply(text: str, schema: dict[str, Any]) -> tuple[str | None, str | None]:
    """`(json_text, None)` when `text` holds JSON valid against `schema`, else `(None, why)`.

    The JSON text returned is the document alone (fences and prose removed).
    """
    try:
        value = extract_json(text)
    except ValueError as exc:
        return None, str(exc)
    error = jsonschema.exceptions.best_match(
        jsonschema.validators.validator_for(schema)(schema).iter_errors(value)
    )
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "the top level"
        return None, f"at {where}: {error.message[:_MAX_ERROR_CHARS]}"
    return json.dumps(value, ensure_ascii=False), None
