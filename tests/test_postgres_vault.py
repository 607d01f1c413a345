"""The vault in the database answers every action exactly as the vault on files:
the same scripted actions (hostile paths included) give the same results and
errors on both, notes are shared by every server of the database, and a journaled
agent batch rolls back in the database too."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from memagent.actions import run_actions, validate_actions
from memagent.agent.memory import journaled_vault
from memagent.api import Memory
from memagent.core import InvalidInput, MemoryHome
from memagent.memory.vault import Vault
from memagent.postgres import Database, PgVault
from memagent.stores import Stores

JANE = """---
aliases: [JD]
---
# Jane Doe

## Work
Leads Atlas. ^atlas

## Family
Two kids.
"""
LONG_NAME = "n" * 200 + ".md"  # the file store needs room for its temp-file prefix
ODD = 'notes/it\'s "quoted" 100%_done; DROP TABLE notes; --.md'
UNICODE = "entités/Zoë 日本語 🙂.md"

SCRIPT: list[list[dict[str, Any]]] = [
    [{"action": "create_file", "path": "entities/jane_doe.md", "content": JANE}],
    [{"action": "create_file", "path": "projects/atlas.md", "content": "# Atlas\n\nSee [[JD]].\n"}],
    [{"action": "create_file", "path": ODD, "content": "odd but legal"}],
    [{"action": "create_file", "path": UNICODE, "content": "ünïcödé"}],
    [{"action": "create_file", "path": LONG_NAME, "content": "long"}],
    [{"action": "create_file", "path": "n" * 256 + ".md", "content": "too long"}],
    [{"action": "create_file", "path": "a/" * 40 + "deep.md", "content": "deep"}],
    [{"action": "read_file", "path": ODD}],
    [{"action": "read_file", "path": UNICODE}],
    [{"action": "read_file", "path": "../etc/passwd"}],
    [{"action": "read_file", "path": "/etc/passwd"}],
    [{"action": "read_file", "path": "entities\\jane_doe.md"}],
    [{"action": "read_file", "path": "user.md/x"}],
    [{"action": "read_file", "path": "entities/jane_do.md"}],
    [{"action": "read_file", "path": "entities"}],
    [{"action": "check_file_exists", "path": ODD}],
    [{"action": "check_file_exists", "path": "nope.md"}],
    [{"action": "check_dir_exists", "path": "entities"}],
    [{"action": "check_dir_exists", "path": "entities/jane_doe.md"}],
    [{"action": "get_size", "path": UNICODE}],
    [{"action": "list_files", "path": ""}],
    [{"action": "list_files", "path": "entities"}],
    [{"action": "list_files", "path": "user.md"}],
    [{"action": "create_dir", "path": "empty/inner"}],
    [{"action": "create_dir", "path": "empty/inner"}],
    [{"action": "create_dir", "path": "user.md"}],
    [{"action": "check_dir_exists", "path": "empty"}],
    [
        {
            "action": "update_file",
            "path": "entities/jane_doe.md",
            "old_content": "Two kids.",
            "new_content": "Two kids and a dog.",
        }
    ],
    [{"action": "update_file", "path": ODD, "old_content": "absent", "new_content": "x"}],
    [{"action": "create_file", "path": "entities/jane_doe.md", "content": "again"}],
    [{"action": "create_file", "path": "entities", "content": "a folder"}],
    [{"action": "go_to_link", "link": "[[Jane Doe]]"}],
    [{"action": "go_to_link", "link": "[[JD#Family]]"}],
    [{"action": "go_to_link", "link": "[[entities/jane_doe#^atlas]]"}],
    [{"action": "go_to_link", "link": "[[Jane Do]]"}],
    [{"action": "go_to_link", "link": "[[atlas|the plan]]"}],
    [{"action": "go_to_link", "link": "[[Jane Doe#Nope]]"}],
    [{"action": "delete_file", "path": "projects/atlas.md"}],
    [{"action": "list_files", "path": "projects"}],
    [{"action": "delete_file", "path": "projects/atlas.md"}],
    [
        {"action": "read_file", "path": "entities/jane_doe.md", "assign_to": "j"},
        {"action": "create_file", "path": "copy.md", "content": {"$var": "j"}},
        {"action": "get_size", "path": "copy.md"},
    ],
    [{"action": "list_files", "path": ""}],
]


@pytest.fixture(scope="module")
def db(pg_url: str) -> Iterator[Database]:
    database = Database.open(pg_url, max_size=4)
    yield database
    database.close()


def _fresh_pair(home: MemoryHome, db: Database) -> tuple[Vault, PgVault]:
    """A file vault and a database vault holding the same starting notes."""
    local = Vault(home)
    pg = PgVault(db, f"v-{uuid.uuid4().hex[:10]}")
    for rel, kind in list(local._walk("")):
        if kind == "dir":
            pg.mkdir(rel)
        else:
            pg.create(rel, local.read(rel))
    return local, pg


def _run(vault: Vault, steps: list[dict[str, Any]]) -> Any:
    try:
        return run_actions(vault, validate_actions(steps)).to_json()
    except Exception as exc:
        return {"raised": type(exc).__name__, "message": str(exc)}


def test_every_action_gives_the_same_result_on_files_and_in_the_database(
    home: MemoryHome, db: Database
) -> None:
    local, pg = _fresh_pair(home, db)
    for steps in SCRIPT:
        on_files, in_db = _run(local, steps), _run(pg, steps)
        assert json.dumps(in_db, sort_keys=True) == json.dumps(on_files, sort_keys=True), steps
    assert pg.read(ODD) == "odd but legal" and pg.read(UNICODE) == "ünïcödé"
    searched = pg.search("dog")
    assert searched == local.search("dog") and "entities/jane_doe.md" in [
        m.path for m in searched.matches
    ]


def test_a_nul_character_is_refused_and_nothing_written(db: Database) -> None:
    pg = PgVault(db, f"v-{uuid.uuid4().hex[:10]}")
    with pytest.raises(InvalidInput, match="NUL"):
        pg.create("a.md", "bad\x00content")
    assert not pg.exists("a.md") and pg.list_dir("").entries == []


def test_oversized_note_is_refused(db: Database) -> None:
    pg = PgVault(db, f"v-{uuid.uuid4().hex[:10]}")
    with pytest.raises(InvalidInput, match="limit"):
        pg.create("big.md", "x" * (pg.max_bytes + 1))
    assert not pg.exists("big.md")


def test_notes_are_per_user_and_shared_across_processes(pg_url: str, db: Database) -> None:
    alice, bob = f"v-{uuid.uuid4().hex[:10]}", f"v-{uuid.uuid4().hex[:10]}"
    with Memory.open(pg_url, user=alice) as mem:
        assert mem.write_note("entities/bob.md", "Bob likes chess.")["created"] is True
        assert mem.write_note("entities/bob.md", "Bob likes go.")["created"] is False
    with Database.open(pg_url, max_size=1) as other:
        assert PgVault(other, alice).read("entities/bob.md") == "Bob likes go."
        assert not PgVault(other, bob).exists("entities/bob.md")
    rows = db.run(
        alice,
        lambda c: c.execute(
            "SELECT version FROM notes WHERE user_id = %s AND path = %s",
            (alice, "entities/bob.md"),
        ).fetchone(),
    )
    assert rows[0] == 2


def test_a_failed_agent_batch_rolls_back_in_the_database(db: Database) -> None:
    user = f"v-{uuid.uuid4().hex[:10]}"
    PgVault(db, user).create("user.md", "# Me\n")
    vault = journaled_vault(Stores(None, user=user, db=db), "agent")
    vault.begin()
    vault.update("user.md", "# Me", "# Me, edited")
    vault.create("new/made.md", "new")
    vault.mkdir("made/dir")
    assert sorted(vault.rollback()) == ["new/made.md", "user.md"]
    fresh = PgVault(db, user)
    assert fresh.read("user.md") == "# Me\n" and not fresh.exists("new/made.md")
    assert not fresh.dir_exists("made/dir")
