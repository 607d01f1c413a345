"""The step protocol, schemas, prompt sets, tools and the reply streamer."""

from __future__ import annotations

import json

import jsonschema
import pytest

from memagent.agent import StepInvalid, Tool, ToolRegistry, parse_step, step_schema
from memagent.agent.prompts import PROMPT_SETS, as_tags, load_prompt_set
from memagent.agent.protocol import reply_schema
from memagent.agent.streaming import ReplyStreamer
from memagent.agent.tools import calculate, now
from memagent.core import InvalidInput, NotFound


def test_json_object_step() -> None:
    s = parse_step(
        '{"think": "t", "actions": [{"action": "list_files"}], "reply": "r"}',
        "json",
        structured=True,
    )
    assert (s.think, s.actions, s.reply) == ("t", [{"action": "list_files"}], "r")
    s = parse_step('```json\n{"python": "x = 1"}\n```', "python", structured=True)
    assert s.python == "x = 1"


def test_tagged_steps() -> None:
    s = parse_step(
        '<think>a</think>\n<actions>[{"action": "list_files"}]</actions>', "json", structured=False
    )
    assert s.think == "a" and s.actions == [{"action": "list_files"}]
    s = parse_step("Let me run:\n```python\nprint(1)\n```", "python", structured=False)
    assert s.python == "print(1)"
    s = parse_step("<python>x = 2</python><reply>two</reply>", "python", structured=True)
    assert (s.python, s.reply) == ("x = 2", "two")
    assert parse_step("just words", "json", structured=False).reply == "just words"


@pytest.mark.parametrize(
    ("text", "mode", "needle"),
    [
        ("", "json", "empty"),
        ("{", "json", "not valid JSON"),
        ('{"reply": 3}', "json", '"reply" must be a string'),
        ('{"python": "x"}', "json", "not available in json mode"),
        ('{"actions": []}', "python", "not available in python mode"),
        ('{"tool": "x"}', "json", "unknown keys"),
        ("[1, 2]", "json", "not a JSON object"),
        ('{"actions": "list"}', "json", "must be a JSON array"),
        ("{}", "json", "no reply and nothing to do"),
        ("<actions>{nope</actions>", "json", "<actions> block is not valid JSON"),
        ("<python>x</python>", "json", "not available in json mode"),
        ("<actions>[]</actions>", "python", "not available in python mode"),
        ("plain", "json", "not a JSON object"),
        (
            '{"actions": [' + ",".join(['{"action": "list_files"}'] * 21) + "]}",
            "json",
            "at most 20",
        ),
        ("[" * 100_000, "json", "not a JSON object"),
    ],
)
def test_invalid_steps_explain_themselves(text: str, mode: str, needle: str) -> None:
    with pytest.raises(StepInvalid) as exc:
        parse_step(text, mode, structured=True)
    assert needle in str(exc.value)
    assert len(str(exc.value)) < 2000


def test_unknown_mode() -> None:
    with pytest.raises(InvalidInput):
        parse_step("{}", "yaml", structured=True)


def test_every_prompt_example_is_a_valid_step_for_its_schema() -> None:
    registry = ToolRegistry()
    registry.add(Tool.of(now, default=True))
    for name in PROMPT_SETS:
        ps = load_prompt_set(name)
        mode = "python" if name in ("python", "deep") else "json"
        schema = (
            reply_schema() if ps.schema == "reply" else step_schema(mode, registry.loaded_tools())
        )
        assert ps.examples or name in ("instruct", "qa", "expand"), name  # rules, no examples
        for m in ps.example_messages(structured=True):
            if m.role == "assistant":
                step = parse_step(m.content, mode, structured=True)
                if name != "deep":
                    jsonschema.validate(json.loads(m.content), schema)
                assert (
                    parse_step(as_tags(m.content), mode, structured=True).to_json()
                    == step.to_json()
                )


def test_step_schema_lists_vault_actions_and_tools() -> None:
    tool = Tool.of(calculate)
    schema = step_schema("json", [tool])
    jsonschema.Draft202012Validator.check_schema(schema)
    good = {"actions": [{"action": "calculate", "expression": "1+1"}, {"action": "list_files"}]}
    jsonschema.validate(good, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"actions": [{"action": "calculate", "expr": "1"}]}, schema)
    py = step_schema("python", [])
    assert set(py["properties"]) == {"think", "python", "reply"}


def test_tools_validate_arguments_and_registry_search_load() -> None:
    def add(a: int, b: int = 2) -> int:
        """Add two numbers."""
        return a + b

    tool = Tool.of(add)
    assert tool.signature() == "add(a: int, b: int = 2)"
    assert tool.call({"a": 1}) == 3 and tool(1, b=5) == 6
    with pytest.raises(InvalidInput, match="a: Input should be a valid integer"):
        tool.call({"a": "x"})
    with pytest.raises(InvalidInput):
        tool.call({"a": 1, "c": 3})
    with pytest.raises(InvalidInput, match="invalid tool name"):
        Tool.of(add, name="Bad Name")

    def untyped(x):  # type: ignore[no-untyped-def]
        return x

    with pytest.raises(InvalidInput, match="needs a type hint"):
        Tool.of(untyped)
    reg = ToolRegistry()
    reg.add(tool)
    reg.add(Tool.of(now))
    with pytest.raises(InvalidInput, match="already registered"):
        reg.add(tool)
    assert reg.search("add numbers")[0]["name"] == "add"
    assert reg.loaded == []
    assert reg.load(["add"])["loaded"] == ["add"] and reg.is_loaded("add")
    with pytest.raises(NotFound, match="unknown tools"):
        reg.load(["add", "nope"])
    assert reg.loaded == ["add"]  # all or nothing
    with pytest.raises(InvalidInput):
        reg.search("x" * 501)


def test_calculate_is_sandboxed() -> None:
    assert calculate("2 ** 10") == 1024
    assert calculate("math.sqrt(16)") == 4.0
    with pytest.raises(InvalidInput):
        calculate("__import__('os').system('true')")
    with pytest.raises(InvalidInput):
        calculate("9 ** 9 ** 9")
    assert "T" in now()


@pytest.mark.parametrize("chunk", [1, 3, 7, 100])
def test_streamer_decodes_reply_across_piece_boundaries(chunk: int) -> None:
    reply = 'Say "hi" — naïve \\ café\nnext line'
    text = json.dumps({"think": "hmm", "reply": reply})
    out: list[str] = []
    s = ReplyStreamer(out.append)
    for i in range(0, len(text), chunk):
        s.feed(text[i : i + chunk])
    assert "".join(out) == reply


def test_streamer_stays_silent_for_acting_steps_and_reads_tags() -> None:
    out: list[str] = []
    s = ReplyStreamer(out.append)
    s.feed('{"actions": [{"action": "list_files"}], "reply": "done"}')
    assert out == []
    s = ReplyStreamer(out.append)
    for piece in ("<reply>Hel", "lo</re", "ply>"):
        s.feed(piece)
    assert "".join(out) == "Hello"


def test_plugin_tools_from_entry_points(monkeypatch: pytest.MonkeyPatch) -> None:
    import memagent.agent.tools as tools_mod

    def weather(city: str) -> str:
        """Today's weather for a city."""
        return f"sunny in {city}"

    class EP:
        def __init__(self, name: str, obj: object) -> None:
            self.name, self.obj = name, obj

        def load(self) -> object:
            if isinstance(self.obj, Exception):
                raise self.obj
            return self.obj

    monkeypatch.setattr(tools_mod, "entry_points", lambda group: [EP("w", [weather])])
    (tool,) = tools_mod.plugin_tools()
    assert tool.name == "weather" and tool.call({"city": "Oslo"}) == "sunny in Oslo"
    monkeypatch.setattr(tools_mod, "entry_points", lambda group: [EP("bad", ImportError("x"))])
    with pytest.raises(InvalidInput, match="tool plugin 'bad' failed to load"):
        tools_mod.plugin_tools()
