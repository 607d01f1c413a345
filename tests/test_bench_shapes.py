"""bench.shapes writes a LoCoMo conversation as an import file in the two
shapes, and the importer reads both back with the same contents."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench.evaldata import eval_dir
from bench.shapes import FULL_FIELDS, MINIMAL_FIELDS, conversation_turns, records, write_import

from memagent.memory.chunks.importer import load_messages

CONV = {
    "speaker_a": "Ana",
    "speaker_b": "Ben",
    "session_1_date_time": "1:56 pm on 8 May, 2023",
    "session_1": [
        {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a cat."},
        {"speaker": "Ben", "dia_id": "D1:2", "text": "Nice!", "blip_caption": "a grey cat"},
    ],
    "session_2_date_time": "9:00 am on 20 May, 2023",
    "session_2": [{"speaker": "Ben", "dia_id": "D2:1", "text": "How is the cat?"}],
}


def read(path: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_full_shape_has_speaker_and_one_conversation_per_session(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    assert write_import(CONV, path, "full") == 3
    rows = read(path)
    assert all(tuple(r) == FULL_FIELDS for r in rows)
    assert [r["conversation_id"] for r in rows] == ["c:session-1", "c:session-1", "c:session-2"]
    assert [r["speaker"] for r in rows] == ["Ana", "Ben", "Ben"]
    assert rows[1]["content"] == "Ben: Nice! [shares a photo: a grey cat]"
    stamps = [r["timestamp"] for r in rows]
    assert stamps == sorted(stamps) and stamps[0] == "2023-05-08T13:56:00+00:00"


def test_minimal_shape_has_exactly_five_fields_and_one_conversation(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    write_import(CONV, path, "minimal", name="mine")
    rows = read(path)
    assert all(set(r) == set(MINIMAL_FIELDS) for r in rows)
    assert {r["conversation_id"] for r in rows} == {"mine"}
    assert [r["content"] for r in rows] == [r["content"] for r in records(CONV, "full")]
    assert [r["id"] for r in rows] == ["D1:1", "D1:2", "D2:1"]


def test_both_shapes_import_with_the_same_contents(tmp_path: Path) -> None:
    contents = []
    for shape in ("full", "minimal"):
        path = tmp_path / f"{shape}.jsonl"
        write_import(CONV, path, shape)
        contents.append([m.content for m in load_messages(path)])
    assert contents[0] == contents[1] and len(contents[0]) == 3


def test_unknown_shape_and_non_conversation_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown shape"):
        write_import(CONV, tmp_path / "x.jsonl", "partial")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no session_1"):
        write_import({"qa": []}, tmp_path / "y.jsonl", "full")
    assert list(tmp_path.iterdir()) == []


def test_a_dev_conversation_keeps_every_turn(tmp_path: Path) -> None:
    path = eval_dir("locomo") / "conv-30.json"
    if not path.is_file():
        pytest.skip(f"LoCoMo dev data not found at {path}")
    conv = json.loads(path.read_text(encoding="utf-8"))
    n = write_import(conv, tmp_path / "conv-30.jsonl", "minimal")
    assert n == len(conversation_turns(conv)) == 369
