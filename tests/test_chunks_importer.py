"""Imports infer what a file lacks (speakers from `Name:` lines, sessions from
time gaps) and take real exports end to end: each fixture imported twice adds
nothing the second time; a hostile file writes nothing."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from memagent.cli import app
from memagent.core import MemoryHome
from memagent.index.documents import chunk_doc
from memagent.memory.chunks import importer
from memagent.memory.chunks.importer import (
    drafts_from_messages,
    import_key,
    infer_metadata,
    parse_messages,
)
from memagent.memory.chunks.message import ImportedMessage

FIXTURES = Path(__file__).parent / "fixtures" / "imports"
runner = CliRunner()


def run(*args: str, input: str | bytes | None = None) -> Any:
    return runner.invoke(app, list(args), input=input)


def chunks(home: MemoryHome) -> list[dict[str, Any]]:
    files = sorted(home.layout.chunks.rglob("*.json"))
    return [json.loads(p.read_text(encoding="utf-8")) for p in files]


def minimal(*lines: tuple[str, str]) -> str:
    """JSON lines in the minimal shape: content `Name: text`, one conversation."""
    return "".join(
        json.dumps({"id": f"m{i}", "role": "user", "content": c, "timestamp": t,
                    "conversation_id": "chat"}) + "\n"
        for i, (c, t) in enumerate(lines)
    )  # fmt: skip


def test_speakers_come_from_name_prefixes_where_the_record_has_none() -> None:
    msgs = parse_messages(
        '{"content": "Caroline: I ran a charity race."}\n'
        '{"content": "Melanie: Great!", "speaker": "Mel"}\n'
        '{"content": "Note: buy milk"}\n'
        '{"content": "Bot: I can help.", "role": "assistant"}\n'
    )
    assert [m.speaker for m in msgs] == ["Caroline", "Mel", None, None]
    assert [sorted(m.inferred) for m in msgs] == [["speaker"], [], [], []]


def test_a_conversation_without_sessions_is_split_at_time_gaps() -> None:
    msgs = parse_messages(minimal(
        ("Ana: hi", "2024-01-01T10:00:00Z"),
        ("Ben: hello", "2024-01-01T10:20:00Z"),
        ("Ana: back again", "2024-01-01T11:00:00Z"),
        ("Ben: and later", "2024-01-03T09:00:00Z"),
    ))  # fmt: skip
    sessions = [m.session_id for m in msgs]
    assert sessions[0] == sessions[1] != sessions[2] != sessions[3]
    assert sessions[0] == "session-2024-01-01T10:00:00+00:00"
    assert all("session" in m.inferred for m in msgs)
    raw = [m.model_copy(update={"session_id": None}) for m in msgs[:2]]
    one = infer_metadata(raw, gap=timedelta(minutes=10))
    assert one[0].session_id != one[1].session_id


def test_sessions_the_file_gives_are_kept_and_untimed_messages_get_none() -> None:
    msgs = parse_messages(
        '{"content": "a", "timestamp": "2024-01-01T10:00:00Z", "session_id": "s1"}\n'
        '{"content": "b", "timestamp": "2024-01-05T10:00:00Z"}\n'
        '{"content": "c", "conversation_id": "other"}\n'
    )
    assert [m.session_id for m in msgs] == ["s1", None, None]


def test_a_longer_file_gives_earlier_messages_the_same_sessions() -> None:
    short = [("Ana: one", "2024-01-01T10:00:00Z"), ("Ben: two", "2024-01-02T10:00:00Z")]
    longer = [("Ana: zero", "2023-12-01T10:00:00Z"), *short]
    a = [m.session_id for m in parse_messages(minimal(*short))]
    b = [m.session_id for m in parse_messages(minimal(*longer))]
    assert a == b[1:]


def test_inference_does_not_change_what_identifies_a_message() -> None:
    raw = ImportedMessage(content="Ana: hi", timestamp="2024-01-01T10:00:00Z")
    inferred = infer_metadata([raw])[0]
    assert inferred.speaker == "Ana"
    assert import_key(inferred) == import_key(raw)
    stated = ImportedMessage(content="Ana: hi", timestamp="2024-01-01T10:00:00Z", speaker="Ana")
    assert import_key(stated) != import_key(raw)


def test_a_file_cannot_claim_inferred_fields() -> None:
    msg = parse_messages('{"content": "x", "inferred": ["speaker"]}\n')[0]
    assert msg.inferred == frozenset()


def test_repeated_lines_without_id_or_time_are_distinct_messages() -> None:
    msgs = parse_messages("Ana: ok\nBen: sure\nAna: ok\n", "t.txt")
    keys = [d.source["import_key"] for d in drafts_from_messages(msgs, origin="t", tags=[])]
    assert len(set(keys)) == 3


def test_drafts_record_speaker_session_title_and_what_was_inferred() -> None:
    msgs = parse_messages(minimal(("Ana: hi", "2024-01-01T10:00:00Z")))
    (draft,) = drafts_from_messages(msgs, origin="f.jsonl", tags=[])
    assert draft.session_id == "session-2024-01-01T10:00:00+00:00"
    assert draft.source["speaker"] == "Ana"
    assert draft.source["inferred"] == ["session", "speaker"]
    merged = drafts_from_messages(msgs, origin="f.jsonl", tags=[], merge=True)
    assert merged[0].content == "Ana: hi"  # the name not twice


def test_reindex_infers_the_speaker_of_chunks_imported_before() -> None:
    old = {"id": "chunk-20240101-aaaaaaaaaaaa", "content": "Caroline: I paint.",
           "source": {"kind": "import", "role": "user", "import_key": "k"}}  # fmt: skip
    doc = chunk_doc("2024-01-01/x.json", old)
    assert doc is not None and doc.speaker == "Caroline"
    assert doc.source is not None and doc.source["speaker"] == "Caroline"
    for source in ({"kind": "cli"}, {"kind": "import", "role": "assistant"}):
        other = chunk_doc("x.json", {**old, "source": source})
        assert other is not None and other.speaker is None


@pytest.mark.parametrize(
    ("name", "n"),
    [("chatgpt_conversations.json", 6), ("claude_conversations.json", 5), ("transcript.txt", 5)],
)
def test_each_export_imports_once(home: MemoryHome, name: str, n: int) -> None:
    h = str(home.root)
    first = run("import", str(FIXTURES / name), "--home", h, "--keyword-only")
    assert first.exit_code == 0, first.output
    assert f"imported {n} messages as {n} chunks" in first.stdout
    again = run("import", str(FIXTURES / name), "--home", h, "--keyword-only")
    assert again.exit_code == 0, again.output
    assert f"as 0 chunks ({n} already imported, skipped)" in again.stdout
    assert len(chunks(home)) == n


def test_imported_exports_keep_titles_roles_and_speakers(home: MemoryHome) -> None:
    h = str(home.root)
    for name in ("chatgpt_conversations.json", "transcript.txt"):
        assert run("import", str(FIXTURES / name), "--home", h, "--keyword-only").exit_code == 0
    by_key = {c["source"].get("id") or c["content"][:6]: c for c in chunks(home)}
    bruno = by_key["m-5"]
    assert bruno["source"]["title"] == "Sourdough starter troubleshooting"
    assert bruno["source"]["role"] == "user" and bruno["session_id"].startswith("session-")
    tomas = next(c for c in chunks(home) if c["content"].startswith("Tomas: Yes"))
    assert tomas["source"]["speaker"] == "Tomas" and tomas["conversation_id"] == "transcript"
    res = run("recall", "Hemsedal cabin", "--home", h, "--json", "--keyword-only")
    assert json.loads(res.stdout)["hits"][0]["source"]["speaker"] in {"Ingrid", "Tomas"}


def test_explicit_format_is_obeyed(home: MemoryHome) -> None:
    h = str(home.root)
    path = str(FIXTURES / "claude_conversations.json")
    res = run("import", path, "--home", h, "--keyword-only", "--format", "chatgpt")
    assert res.exit_code == 1 and "not a ChatGPT conversation" in res.stderr
    res = run("import", path, "--home", h, "--keyword-only", "--format", "docx")
    assert res.exit_code == 1 and "unknown --format 'docx'" in res.stderr
    res = run("import", "-", "--home", h, "--keyword-only", "--format", "transcript",
              input="Ana: from stdin\n")  # fmt: skip
    assert res.exit_code == 0, res.output
    assert chunks(home)[0]["source"]["speaker"] == "Ana"


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (b'[\n  {"content": "a" "b"}\n]\n', "line 2, column 19"),
        (b"\xff\xfeAna: hi\n", "not UTF-8"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (
            json.dumps(
                [
                    {
                        "title": "t",
                        "current_node": "a",
                        "mapping": {
                            "a": {
                                "message": {
                                    "author": {"role": "user"},
                                    "content": {"parts": ["x"]},
                                },
                                "parent": "b",
                            },
                            "b": {"message": None, "parent": "a"},
                        },
                    }
                ]
            ).encode(),
            "cycle",
        ),
        (
            json.dumps(
                [{"chat_messages": [{"text": "hi", "sender": "human"}, {"text": "x"}]}]
            ).encode(),
            "message 2: sender None",
        ),
    ],
)
def test_hostile_files_write_nothing(
    home: MemoryHome, tmp_path: Path, body: bytes, error: str
) -> None:
    f = tmp_path / "conversations.json"
    f.write_bytes(body)
    res = run("import", str(f), "--home", str(home.root), "--keyword-only")
    assert res.exit_code == 1 and error in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
    assert chunks(home) == []


def test_an_oversized_file_is_refused_before_reading(
    home: MemoryHome, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(importer, "MAX_IMPORT_BYTES", 1000)
    f = tmp_path / "big.txt"
    f.write_text("Ana: " + "x" * 2000 + "\n", encoding="utf-8")
    res = run("import", str(f), "--home", str(home.root), "--keyword-only")
    assert res.exit_code == 1 and "import limit is 1000" in res.stderr
    res = run("import", "-", "--home", str(home.root), "--keyword-only", input=f.read_bytes())
    assert res.exit_code == 1 and "over the import limit" in res.stderr
    assert chunks(home) == []


def test_reindex_gives_old_imports_their_speakers(home: MemoryHome, tmp_path: Path) -> None:
    h = str(home.root)
    f = tmp_path / "old.jsonl"
    f.write_text(minimal(("Caroline: I joined a pottery class.", "2024-01-01T10:00:00Z")))
    res = run("import", str(f), "--home", h, "--keyword-only")
    assert res.exit_code == 0 and "inferred: speakers of 1 messages" in res.stdout
    for path in home.layout.chunks.rglob("*.json"):  # as an import before inference wrote it
        data = json.loads(path.read_text(encoding="utf-8"))
        data["source"] = {
            k: v for k, v in data["source"].items() if k not in ("speaker", "inferred")
        }
        path.write_text(json.dumps(data), encoding="utf-8")
    assert run("reindex", "--home", h, "--keyword-only").exit_code == 0
    res = run("recall", "pottery", "--home", h, "--json", "--keyword-only")
    assert res.exit_code == 0, res.output
    hit = json.loads(res.stdout)["hits"][0]
    assert hit["source"]["speaker"] == "Caroline" and hit["source"]["inferred"] == ["speaker"]


def test_a_byte_order_mark_is_not_content(home: MemoryHome, tmp_path: Path) -> None:
    f = tmp_path / "conversations.json"
    f.write_bytes(b"\xef\xbb\xbf" + (FIXTURES / "claude_conversations.json").read_bytes())
    res = run("import", str(f), "--home", str(home.root), "--keyword-only")
    assert res.exit_code == 0, res.output
    assert "imported 5 messages" in res.stdout
