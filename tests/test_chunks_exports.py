"""The export readers: ChatGPT's mapping tree, Claude's chat_messages, `Name:`
transcripts and the importer's own JSON, detected from the text; every malformed
or hostile file fails with one error saying where."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memagent.core import InvalidInput
from memagent.memory.chunks import exports
from memagent.memory.chunks.exports import detect, read

FIXTURES = Path(__file__).parent / "fixtures" / "imports"


def text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("chatgpt_conversations.json", "chatgpt"),
        ("claude_conversations.json", "claude"),
        ("transcript.txt", "transcript"),
    ],
)
def test_each_fixture_is_detected(name: str, fmt: str) -> None:
    assert detect(text(name)) == fmt


def test_detect_tells_the_importers_own_shapes_apart() -> None:
    assert detect('{"content": "a"}\n{"content": "b"}\n') == "messages"
    assert detect('[{"content": "a"}]') == "messages"
    assert detect('{"messages": [{"content": "a"}]}') == "messages"
    assert detect("Ana: hi\nBen: hello\n") == "transcript"


def test_chatgpt_follows_current_node_and_keeps_roles_titles_times() -> None:
    msgs = read(text("chatgpt_conversations.json"), "conversations.json")
    assert [m.id for m in msgs] == ["m-2", "m-4", "m-5", "q-1", "q-2", "q-3"]
    assert "regenerated" not in " ".join(m.content for m in msgs)  # the branch not kept
    assert [m.role for m in msgs] == ["user", "assistant", "user", "user", "tool", "assistant"]
    assert msgs[0].title == "Sourdough starter troubleshooting"
    assert msgs[0].conversation_id == "6a1f0c2e-0d4b-4c1e-9a55-2b7d3c9e8f01"
    assert msgs[0].timestamp == "2024-05-01T10:01:00.250000+00:00"
    assert msgs[3].content.startswith("I'm hiking Reinebringen")  # multimodal text part
    assert msgs[4].speaker == "browser" and msgs[4].content.startswith("Reinebringen: 1,978")


def test_claude_maps_senders_and_reads_content_parts() -> None:
    msgs = read(text("claude_conversations.json"), "conversations.json")
    assert [m.id for m in msgs] == ["c1-m1", "c1-m2", "c1-m4", "c2-m1", "c2-m2"]  # c1-m3: file only
    assert [m.role for m in msgs] == ["user", "assistant", "user", "user", "assistant"]
    assert msgs[1].content.startswith("If the commute")  # from `content` when `text` is empty
    assert msgs[0].title == "Choosing a cello teacher" and msgs[3].title is None
    assert msgs[3].timestamp == "2024-04-10T07:30:05.000000Z"


def test_transcript_turns_continuations_and_stamps() -> None:
    msgs = read(text("transcript.txt"), "cabin.txt")
    assert [m.speaker for m in msgs] == ["Ingrid", "Tomas", "Ingrid", "Tomas", "Ingrid"]
    assert msgs[1].content == (
        "Tomas: Yes, two nights. It has a sauna.\nThe host said the key is under the blue pot."
    )
    assert msgs[0].timestamp == "2024-05-03T19:02" and msgs[0].conversation_id == "cabin"
    bot = read("Me: what is 2+2?\nAssistant: 4\n", "t.txt")
    assert [m.role for m in bot] == ["user", "assistant"]


def test_a_syntax_error_is_reported_at_its_line_and_column() -> None:
    body = '[\n  {"content": "a" "b"}\n]\n'
    with pytest.raises(InvalidInput, match=r"x.json, line 2, column 19: not valid JSON"):
        read(body, "x.json")
    with pytest.raises(InvalidInput, match=r"x.jsonl, line 2, column 13: not valid JSON"):
        read('{"content": "a"}\n{"content": }\n', "x.jsonl")
    pretty = json.dumps([{"title": "t", "mapping": {}, "current_node": None}], indent=2)
    broken = pretty.replace('"mapping": {}', '"mapping": {,}')
    with pytest.raises(InvalidInput, match=r"line 4, column 17"):
        read(broken, "conversations.json")


def chatgpt_conv(mapping: object, current: object = "b") -> str:
    return json.dumps([{"title": "T", "mapping": mapping, "current_node": current}])


def node(nid: str, parent: str | None, role: str = "user", text: str = "hi") -> dict[str, object]:
    msg = {
        "id": nid,
        "author": {"role": role},
        "content": {"content_type": "text", "parts": [text]},
    }
    return {"id": nid, "message": msg, "parent": parent, "children": []}


@pytest.mark.parametrize(
    ("body", "fmt", "error"),
    [
        (chatgpt_conv({"a": node("a", "b"), "b": node("b", "a")}), "auto", "form a cycle at 'b'"),
        (chatgpt_conv({"b": node("b", "b")}), "auto", "cycle"),
        (chatgpt_conv({"b": node("b", "zz")}), "auto", "node 'zz' is not in the mapping"),
        (chatgpt_conv({"a": node("a", None)}, "nope"), "auto", "current_node 'nope'"),
        (chatgpt_conv([1, 2]), "chatgpt", "`mapping` is not an object"),
        (chatgpt_conv({"b": {**node("b", None), "message": 3}}), "auto", "is not an object"),
        (
            chatgpt_conv({"b": {**node("b", None), "message": {"content": {"parts": ["x"]}}}}),
            "auto",
            "no author role",
        ),
        (json.dumps([{"chat_messages": [{"text": "x"}]}]), "auto", "sender None"),
        (json.dumps([{"chat_messages": "x"}]), "claude", "is not an array"),
        (json.dumps([{"chat_messages": [5]}]), "claude", "message 1: not an object"),
        (json.dumps({"title": "no mapping"}), "chatgpt", "an array of conversations"),
        (json.dumps([{"title": "no mapping"}]), "chatgpt", "not a ChatGPT conversation"),
        (json.dumps([{"uuid": "x"}]), "claude", "not a Claude conversation"),
        ("[" * 200 + "]" * 200, "auto", "nested too deeply"),
        ("hello there\n", "auto", "line 1: expected a `Name: text` line"),
        ("Ana: hi\n[2024-01-01 10:00] no name here\n", "auto", "line 2: expected"),
        ('{"content": "x"}', "transcript", "expected a `Name: text` line"),
        (chatgpt_conv({"b": node("b", None)}), "pdf", "unknown import format 'pdf'"),
        (
            json.dumps(
                [
                    {
                        "mapping": {
                            "b": {
                                **node("b", None),
                                "message": {
                                    "author": {"role": "user"},
                                    "create_time": 1e300,
                                    "content": {"parts": ["x"]},
                                },
                            }
                        },
                        "current_node": "b",
                    }
                ]
            ),
            "auto",
            "out of range",
        ),
        (json.dumps([{"mapping": {}, "current_node": None}]), "auto", "no messages found"),
    ],
)
def test_hostile_and_malformed_exports_fail_with_one_clear_error(
    body: str, fmt: str, error: str
) -> None:
    with pytest.raises(InvalidInput, match=error.replace("(", r"\(").replace("[", r"\[")):
        read(body, "f.json", fmt)


def test_a_long_chain_is_walked_without_recursion() -> None:
    n = 20_000
    mapping = {f"n{i}": node(f"n{i}", f"n{i - 1}" if i else None, text=f"m{i}") for i in range(n)}
    msgs = read(chatgpt_conv(mapping, f"n{n - 1}"), "big.json")
    assert len(msgs) == n and msgs[0].content == "m0" and msgs[-1].content == f"m{n - 1}"


def test_the_node_limit_stops_a_runaway_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(exports, "MAX_NODES", 3)
    mapping = {f"n{i}": node(f"n{i}", f"n{i - 1}" if i else None) for i in range(5)}
    with pytest.raises(InvalidInput, match="cycle"):
        read(chatgpt_conv(mapping, "n4"), "big.json")


def test_json_lines_end_at_newlines_only() -> None:
    """A raw U+2028 (or U+2029, U+0085) inside a message is text, not a line break."""
    rows = [
        {"id": "m1", "role": "user", "content": "first\u2028still the first\u0085too"},
        {"id": "m2", "role": "user", "content": "second\u2029message"},
    ]
    text = "\r\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n"
    messages = exports.json_lines(text, "chat.jsonl")
    assert [m.content for m in messages] == [r["content"] for r in rows]
