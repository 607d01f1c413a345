"""The MCP note tools (edit_note, move_note, delete_note, list_directory) through
the SDK's in-process client: behaviour, and hostile input answered with one
plain sentence and nothing written."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_support import assert_plain_refusals, calls, snapshot
from memagent.api import Memory
from memagent.core import NotFound
from memagent.server.mcp_notes import replace_section

JANE = "# Jane\n\n## Work\nAcme\n\n### Team\nInfra\n\n## Family\nAnn\n"


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    mem = Memory.open(tmp_path / "home", embeddings=False)
    mem.write_note("entities/jane.md", JANE)
    yield mem
    mem.close()


def test_replace_section_keeps_the_rest() -> None:
    new = replace_section(JANE, "work", "Globex", "jane.md")
    assert new == "# Jane\n\n## Work\nGlobex\n\n## Family\nAnn\n"  # sub-heading went too
    assert replace_section(JANE, "## Family", "Bo", "jane.md").endswith("## Family\nBo\n")
    fenced = "# A\n```\n# not a heading\n```\n## B\nx\n"
    assert replace_section(fenced, "B", "y", "a.md") == "# A\n```\n# not a heading\n```\n## B\ny\n"
    with pytest.raises(NotFound, match=r"no heading 'Hobbies'.*'Work'"):
        replace_section(JANE, "Hobbies", "x", "jane.md")


def test_edits_go_through_the_vault_and_the_ops_log(memory: Memory) -> None:
    batch: list[tuple[str, dict[str, Any]]] = [
        ("edit_note", {"path": "entities/jane.md", "operation": "find_replace",
                       "find": "Acme", "content": "Globex"}),
        ("edit_note", {"path": "entities/jane.md", "operation": "replace_section",
                       "section": "Family", "content": "Ann and Bo"}),
        ("edit_note", {"path": "entities/jane.md", "operation": "prepend", "content": "---"}),
        ("edit_note", {"path": "new.md", "operation": "append", "content": "fresh"}),
        ("edit_note", {"path": "entities/jane.md", "operation": "find_replace",
                       "find": "Globex", "content": "Globex"}),
        ("list_directory", {}),
        ("list_directory", {"depth": 3}),
    ]  # fmt: skip
    out = calls(memory, batch)
    assert not any(r.is_error for r in out), [r.content for r in out if r.is_error]
    text = memory.read_note("entities/jane.md")
    assert text == "---\n# Jane\n\n## Work\nGlobex\n\n### Team\nInfra\n\n## Family\nAnn and Bo\n"
    assert memory.read_note("new.md") == "fresh"
    assert out[4].structured_content["changed"] is False
    top = {e["path"] for e in out[5].structured_content["entries"]}
    assert top == {"entities", "new.md", "user.md"}
    deep = {e["path"] for e in out[6].structured_content["entries"]}
    assert "entities/jane.md" in deep
    ops = [(r.op, r.path) for r in memory.home.ops(limit=20) if r.actor != "init"]
    assert ("update", "vault/entities/jane.md") in ops
    assert ("create", "vault/new.md") in ops


def test_move_and_delete(memory: Memory) -> None:
    memory.write_note("taken.md", "x")
    out = calls(
        memory,
        [
            ("move_note", {"source": "entities/jane.md", "destination": "taken.md"}),
            ("move_note", {"source": "entities/jane.md", "destination": "people/jane.md"}),
            ("delete_note", {"path": "taken.md"}),
        ],
    )
    assert out[0].is_error and "already exists" in out[0].content[0].text
    assert not out[1].is_error and not out[2].is_error
    assert memory.read_note("people/jane.md") == JANE
    assert not memory.vault.exists("entities/jane.md")
    assert not memory.vault.exists("taken.md")


HOSTILE: list[tuple[str, dict[str, Any]]] = [
    ("edit_note", {"path": "../escape.md", "operation": "append", "content": "x"}),
    ("edit_note", {"path": "/etc/passwd", "operation": "prepend", "content": "x"}),
    ("edit_note", {"path": "entities/jane.md", "operation": "explode", "content": "x"}),
    ("edit_note", {"path": "entities/jane.md", "operation": "append"}),
    ("edit_note", {"path": "entities/jane.md", "operation": "append", "content": "x" * 2_000_001}),
    ("edit_note", {"path": "entities/jane.md", "operation": "append", "content": "x" * 1_500_000}),
    ("edit_note", {"path": {"nested": [{"junk": 1}]}, "operation": "append", "content": "x"}),
    ("edit_note", {"path": "entities/jane.md", "operation": "find_replace", "content": "x"}),
    ("edit_note", {"path": "entities/jane.md", "operation": "find_replace",
                   "find": "nowhere", "content": "x"}),
    ("edit_note", {"path": "entities/jane.md", "operation": "find_replace",
                   "find": "n", "content": "x"}),
    ("edit_note", {"path": "entities/jane.md", "operation": "replace_section", "content": "x"}),
    ("edit_note", {"path": "entities/jane.md", "operation": "replace_section",
                   "section": "Nope", "content": "x"}),
    ("edit_note", {"path": "missing.md", "operation": "prepend", "content": "x"}),
    ("edit_note", {"path": "entities", "operation": "append", "content": "x"}),
    ("move_note", {"source": "entities/jane.md", "destination": "../../out.md"}),
    ("move_note", {"source": "../config.toml", "destination": "stolen.md"}),
    ("move_note", {"source": "entities/jane.md", "destination": "entities/jane.md"}),
    ("move_note", {"source": "entities/jane.md"}),
    ("move_note", {"source": ["a"], "destination": 7}),
    ("delete_note", {"path": "../config.toml"}),
    ("delete_note", {"path": "entities"}),
    ("delete_note", {"path": "x" * 5000}),
    ("delete_note", {}),
    ("list_directory", {"path": "../"}),
    ("list_directory", {"path": "entities/jane.md"}),
    ("list_directory", {"depth": 0}),
    ("list_directory", {"depth": "deep"}),
    ("list_directory", {"path": "nowhere"}),
]  # fmt: skip


def test_hostile_input_is_one_sentence_and_writes_nothing(memory: Memory, tmp_path: Path) -> None:
    before = snapshot(memory)
    results = calls(memory, HOSTILE)
    assert_plain_refusals(results, HOSTILE)
    assert snapshot(memory) == before
    assert not (tmp_path / "escape.md").exists() and not (tmp_path / "out.md").exists()
    by_call = {i: r.content[0].text for i, r in enumerate(results)}
    assert by_call[3] == "edit_note: 'content' is required"
    assert "'operation'" in by_call[2]
    assert "occurs 0 time(s)" in by_call[8] and "occurs 4 time(s)" in by_call[9]
