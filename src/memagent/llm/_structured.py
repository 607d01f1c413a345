"""Structured replies: check a response schema, pull JSON out of model text,
validate it, and render the prompt-and-repair messages for servers that cannot
constrain decoding.

The prompts are data (`prompts/structured.yaml`); this module only renders them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import cache
from importlib.resources import files
from typing import Any

import jsonschema
import yaml
from jinja2 import Environment, StrictUndefined

from memagent.core.errors import InvalidInput
from memagent.core.jsontext import JsonSchema

_MAX_ERROR_CHARS = 300
_MAX_CANDIDATES = 32
_env = Environment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=False)


@cache
def _prompts() -> dict[str, str]:
    raw = files("memagent.llm").joinpath("prompts/structured.yaml").read_text(encoding="utf-8")
    data = yaml.safe_load(raw)
    return {str(k): str(v) for k, v in data.items()}


def render(name: str, **values: Any) -> str:
    """Render one prompt of `prompts/structured.yaml` (`instruction`, `repair`)."""
    return _env.from_string(_prompts()[name]).render(**values).strip()


def check_schema(schema: Any) -> JsonSchema:
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


def _candidates(text: str) -> Iterator[Any]:
    """JSON documents in `text`, in order: the whole (unfenced) text, then each value
    starting at a `{` or `[`. Bounded, so hostile text costs little."""
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.split("\n", 1)[1] if "\n" in stripped else ""
        stripped = stripped.rsplit("```", 1)[0].strip()
    try:
        yield json.loads(stripped)
        return
    except (json.JSONDecodeError, RecursionError):
        pass
    decoder = json.JSONDecoder()
    tries = 0
    for i, ch in enumerate(stripped):
        if ch not in "{[":
            continue
        tries += 1
        if tries > _MAX_CANDIDATES:
            return
        try:
            value, _ = decoder.raw_decode(stripped, i)
        except (json.JSONDecodeError, RecursionError):
            continue
        yield value


def extract_json(text: str) -> Any:
    """The first JSON document in `text`, tolerating a code fence or prose around it.

    Raises `ValueError` with a short reason when there is none.
    """
    for value in _candidates(text):
        return value
    raise ValueError("it contains no JSON document")


def validate_reply(text: str, schema: JsonSchema) -> tuple[str | None, str | None]:
    """`(json_text, None)` when `text` holds JSON valid against `schema`, else `(None, why)`.

    The first valid document wins (so `[note] {...}` still finds the object); the
    reason given is about the first document found. The JSON text returned is the
    document alone (fences and prose removed).
    """
    validator = jsonschema.validators.validator_for(schema)(schema)
    first_error: str | None = None
    for value in _candidates(text):
        try:
            error = jsonschema.exceptions.best_match(validator.iter_errors(value))
        except RecursionError:
            error = None
            why = "it is nested too deeply"
        else:
            if error is None:
                return json.dumps(value, ensure_ascii=False), None
            where = "/".join(str(p) for p in error.absolute_path) or "the top level"
            why = f"at {where}: {error.message[:_MAX_ERROR_CHARS]}"
        first_error = first_error or why
    return None, first_error or "it contains no JSON document"
