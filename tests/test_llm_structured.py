"""JSON extraction and validation shared by the real backends."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memagent.core.errors import InvalidInput
from memagent.llm._structured import check_schema, extract_json, render, validate_reply

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["name"],
}


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "Ana"}',
        '  {"name": "Ana"}\n',
        '```json\n{"name": "Ana"}\n```',
        '```\n{"name": "Ana"}\n```',
        'Sure, here you go: {"name": "Ana"} Hope it helps!',
        'first {broken then {"name": "Ana"}',
    ],
)
def test_extracts_the_json_document(text: str) -> None:
    assert extract_json(text) == {"name": "Ana"}


@pytest.mark.parametrize("text", ["", "no json", "{unclosed", "```json\n```", "}{"])
def test_no_json_is_a_value_error(text: str) -> None:
    with pytest.raises(ValueError, match="no JSON document"):
        extract_json(text)


def test_validate_reply_normalises_or_explains() -> None:
    good, why = validate_reply('Here: {"name": "Ana", "tags": ["x"]}', SCHEMA)
    assert why is None and good is not None and json.loads(good) == {"name": "Ana", "tags": ["x"]}
    good, why = validate_reply('{"tags": ["x"]}', SCHEMA)
    assert good is None and why == "at the top level: 'name' is a required property"
    good, why = validate_reply('{"name": "A", "tags": [1]}', SCHEMA)
    assert good is None and why is not None and why.startswith("at tags/0:")
    assert validate_reply("nothing", SCHEMA) == (None, "it contains no JSON document")


def test_error_detail_is_bounded() -> None:
    _, why = validate_reply(
        json.dumps({"name": "x" * 100_000}), {"properties": {"name": {"maxLength": 1}}}
    )
    assert why is not None and len(why) < 400


@pytest.mark.parametrize(
    "schema",
    [None, [], "object", 3, {"type": "nonsense"}, {"properties": []}, {"required": "name"}],
)
def test_bad_schemas_rejected(schema: Any) -> None:
    with pytest.raises(InvalidInput):
        check_schema(schema)


def test_prompts_render_the_schema_and_error() -> None:
    text = render("instruction", schema_json='{"type": "object"}')
    assert '{"type": "object"}' in text and "JSON" in text
    assert "because it broke" in render("repair", error="because it broke")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_garbage_never_crashes(text: str) -> None:
    good, why = validate_reply(text, SCHEMA)
    assert (good is None) != (why is None)
    if good is not None:
        assert isinstance(json.loads(good), dict)


@settings(max_examples=100, deadline=None)
@given(
    st.dictionaries(st.text(max_size=10), st.text(max_size=20), max_size=4),
    st.text(alphabet="abc :\n", max_size=20),
)
def test_any_object_with_prose_around_is_found(value: dict[str, str], prose: str) -> None:
    assert extract_json(f"{prose}{json.dumps(value)}") == value


@pytest.mark.parametrize(
    "text",
    ["[" * 100_000, "{" * 200_000, "[1," * 100_000, '{"a":' * 50_000, "x{" * 100_000],
)
def test_hostile_text_is_cheap_and_clean(text: str) -> None:
    with pytest.raises(ValueError, match="no JSON document"):
        extract_json(text)
    assert validate_reply(text, SCHEMA) == (None, "it contains no JSON document")


def test_first_valid_document_wins() -> None:
    good, why = validate_reply('[note] {"name": "Ana"}', SCHEMA)
    assert why is None and good == '{"name": "Ana"}'
    good, why = validate_reply('{"tags": []} then {"tags": [2]}', SCHEMA)
    assert good is None and why == "at the top level: 'name' is a required property"
