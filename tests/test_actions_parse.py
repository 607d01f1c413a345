from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memagent.actions import (
    MODELS_BY_NAME,
    ActionList,
    ActionsInvalid,
    action_json_schema,
    parse_response,
    validate_actions,
)

READ = '[{"action": "read_file", "path": "user.md"}]'


def test_all_twelve_actions_exist_with_valid_examples() -> None:
    assert set(MODELS_BY_NAME) == {
        "read_file",
        "create_file",
        "update_file",
        "append_file",
        "delete_file",
        "check_file_exists",
        "create_dir",
        "list_files",
        "check_dir_exists",
        "get_size",
        "go_to_link",
        "search_files",
    }
    examples = [m.example for m in MODELS_BY_NAME.values()]
    assert validate_actions(examples) == ActionList.validate_python(examples)
    assert len(validate_actions(examples)) == 12


def test_schema_is_a_discriminated_array() -> None:
    schema = action_json_schema()
    assert schema["type"] == "array"
    assert schema["items"]["discriminator"]["propertyName"] == "action"
    assert len(schema["items"]["oneOf"]) == 12
    json.dumps(schema)


@pytest.mark.parametrize(
    "text",
    [
        f"<actions>{READ}</actions>",
        f"  <ACTIONS >\n{READ}\n</ actions>  ",
        f"<actions>\n```json\n{READ}\n```\n</actions>",
        f"```\n<think>x</think>\n<actions>{READ}</actions>\n<reply>ok</reply>\n```",
        READ,
        f"```json\n{READ}\n```",
        '{"action": "read_file", "path": "user.md"}',
        f"<actions>{READ}",
    ],
)
def test_tolerant_forms(text: str) -> None:
    parsed = parse_response(text)
    assert parsed.error is None, parsed.error
    assert parsed.actions_found
    assert [a.model_dump(exclude_none=True) for a in parsed.actions] == [
        {"action": "read_file", "path": "user.md"}
    ]


def test_think_and_reply_are_split_out() -> None:
    parsed = parse_response(
        "<think>mention <actions> here is ignored</think>\n"
        f"<actions>{READ}</actions>\n<reply>\nDone.\n</reply>"
    )
    assert parsed.think == "mention <actions> here is ignored"
    assert parsed.reply == "Done."
    assert parsed.ok and len(parsed.actions) == 1


def test_plain_reply_has_no_actions() -> None:
    parsed = parse_response("Hello there!")
    assert parsed.ok and not parsed.actions_found and parsed.reply == "Hello there!"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('<actions>[{"action": "read_file", "path": "a",}]</actions>', "line 1, column 38"),
        ("<actions>[{'action': 'read_file'}]</actions>", "not valid JSON"),
        ("<actions></actions>", "empty"),
        (f"<actions>{READ}</actions><actions>{READ}</actions>", "2 <actions> blocks"),
        (f"{READ}</actions>", "without an opening"),
        ('<actions>"read_file"</actions>', "JSON array"),
        ('<actions>[{"action": "write_file", "path": "a"}]</actions>', "unknown action"),
        ('<actions>[{"path": "a"}]</actions>', 'no "action" field'),
        ("<actions>[5]</actions>", "action 0 is int"),
        ('<actions>[{"action": "read_file"}]</actions>', 'missing field "path"'),
        ('<actions>[{"action": "read_file", "path": 1}]</actions>', 'field "path" must be text'),
        ('<actions>[{"action": "read_file", "path": "a", "x": 1}]</actions>', 'unknown field "x"'),
        (
            '<actions>[{"action": "read_file", "path": "a", "assign_to": "1x"}]</actions>',
            "assign_to must be a name",
        ),
        (
            '<actions>[{"action": "read_file", "path": {"$var": "nope"}}]</actions>',
            'no earlier action has "assign_to": "nope"',
        ),
        ('<actions>[{"action": "read_file", "path": {"$var": "a b"}}]</actions>', "bad $var"),
        (
            '<actions>[{"action": "read_file", "path": "a", "assign_to": "r"},'
            '{"action": "read_file", "path": "b", "assign_to": "r"}]</actions>',
            "already used",
        ),
        (
            '<actions>[{"action": "read_file", "path": {"$var": "r"}, "assign_to": "r"}]</actions>',
            "no earlier action",
        ),
        ("<actions>" + "[" * 100000 + "</actions>", "nested too deeply"),
    ],
)
def test_malformed_gives_precise_message_never_raises(text: str, expected: str) -> None:
    parsed = parse_response(text)
    assert parsed.error is not None
    assert expected in parsed.error, parsed.error
    assert parsed.actions == []


def test_messages_include_a_correct_example() -> None:
    err = parse_response('<actions>[{"action": "update_file", "path": "a"}]</actions>').error
    assert err is not None and 'Example: {"action": "update_file"' in err
    example = err.split("Example: ", 1)[1]
    assert validate_actions(json.loads(example))


def test_too_many_actions() -> None:
    with pytest.raises(ActionsInvalid, match="at most"):
        validate_actions([{"action": "read_file", "path": "a"}] * 201)


def test_non_text_response() -> None:
    assert parse_response(None).error is not None


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_parser_never_raises_on_arbitrary_text(text: str) -> None:
    parsed = parse_response(text)
    assert parsed.error is None or isinstance(parsed.error, str)


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=10),
        lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=8), c, max_size=4),
        max_leaves=20,
    )
)
def test_parser_never_raises_on_arbitrary_json(value: object) -> None:
    parsed = parse_response(f"<actions>{json.dumps(value)}</actions>")
    assert parsed.error is not None or all(a.model_dump() for a in parsed.actions)
