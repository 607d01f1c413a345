"""`/forget`, `/edit` and `/undo` on every kind of id `/recall` prints (memories,
notes, profile facts), against real stores; and refusals that write nothing."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from memagent.agent import memory_refs
from memagent.agent.memory import MemoryAccess
from memagent.core import Conflict, InvalidInput, MemagentError, MemoryHome, NotFound

FOOD = "resource_user_food_prefs.json"


@pytest.fixture
def memory(home: MemoryHome) -> Iterator[MemoryAccess]:
    mem = MemoryAccess(home, embeddings=False)
    yield mem
    mem.close()


def ids(memory: MemoryAccess, query: str) -> dict[str, str]:
    """kind → id of the best hit of that kind, as /recall prints them."""
    out: dict[str, str] = {}
    for hit in memory.recall(query, k=10):
        out.setdefault(hit["kind"], hit["id"])
    return out


def files(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for part in ("vault", "chunks", "profile")
        for p in sorted((root / part).rglob("*"))
        if p.is_file()
    }


def test_memory_forget_undo_edit_undo(memory: MemoryAccess) -> None:
    mid = memory.remember("Jane keeps bees on the roof.")[0]
    assert ids(memory, "bees")["chunk"] == mid
    assert memory_refs.forget(memory, mid).startswith(f"Forgot {mid}")
    assert "chunk" not in ids(memory, "bees")
    assert memory_refs.undo(memory, mid) == f"Brought back {mid}: Jane keeps bees on the roof."
    said = memory_refs.edit(memory, mid, "Jane keeps wasps on the roof.")
    assert said.startswith(f"Changed {mid} to: Jane keeps wasps")
    assert ids(memory, "wasps")["chunk"] == mid
    assert "it reads: Jane keeps bees on the roof." in memory_refs.undo(memory, mid)
    assert memory.read_chunk(mid) == "Jane keeps bees on the roof."


def test_fact_forget_undo_edit_undo(memory: MemoryAccess) -> None:
    from memagent.memory.profile import apply_operations, parse_operation

    op = {"operation": "append", "file": FOOD, "path": "food.likes",
          "value": {"item": "dumplings"}}  # fmt: skip
    assert apply_operations(memory.stores.profile, [parse_operation(op)]).ok
    fact = ids(memory, "dumplings")["fact"]
    assert fact == "fact:user_food_prefs:food:likes:dumplings"

    def likes() -> list[str]:
        res = memory.stores.profile.load(FOOD)
        return [i.display for i in res.items_at("food.likes") or []]

    assert memory_refs.forget(memory, fact).startswith(f"Removed {fact} from your profile")
    assert likes() == []
    assert memory_refs.undo(memory, fact).startswith(f"Undid the last change to {fact}")
    assert likes() == ["Dumplings"]
    assert memory_refs.edit(memory, fact, "Pork dumplings").startswith(f"Changed {fact}")
    assert likes() == ["Pork dumplings"]
    assert memory_refs.edit(memory, fact, "Pork dumplings").endswith("nothing changed.")
    memory_refs.undo(memory, fact)
    assert likes() == ["Dumplings"]
    with pytest.raises(Conflict, match="itself an undo"):
        memory_refs.undo(memory, fact)


def test_note_edit_undo_forget_undo(memory: MemoryAccess) -> None:
    vault = memory.stores.vault
    vault.create("entities/jane.md", "# Jane\nLikes bees.\n")
    note = ids(memory, "bees")["note"]
    assert note == "note:vault/entities/jane.md"
    assert "Replaced the text" in memory_refs.edit(memory, note, "# Jane\nLikes wasps.")
    assert vault.read("entities/jane.md") == "# Jane\nLikes wasps."
    assert memory_refs.undo(memory, note) == "Undid the last edit of note entities/jane.md."
    assert vault.read("entities/jane.md") == "# Jane\nLikes bees.\n"
    assert memory_refs.forget(memory, note).startswith("Deleted note entities/jane.md")
    assert not vault.exists("entities/jane.md")
    assert memory_refs.undo(memory, note) == "Brought back note entities/jane.md."
    assert vault.read("entities/jane.md") == "# Jane\nLikes bees.\n"
    vault.append("entities/jane.md", "Has a dog.")
    assert memory_refs.undo(memory, note).startswith("Undid the last addition")
    assert vault.read("entities/jane.md") == "# Jane\nLikes bees.\n"


def test_note_undo_refused_when_it_changed_since(memory: MemoryAccess, home: MemoryHome) -> None:
    vault = memory.stores.vault
    vault.create("a.md", "one")
    memory_refs.edit(memory, "note:vault/a.md", "two")
    (home.layout.vault / "a.md").write_text("edited by hand", encoding="utf-8")
    with pytest.raises(Conflict, match="changed since"):
        memory_refs.undo(memory, "note:vault/a.md")
    assert vault.read("a.md") == "edited by hand"


HOSTILE = [
    ("forget", "nope", ""),
    ("forget", "x" * 100_000, ""),
    ("forget", "chunk-20240101-000000000000", ""),
    ("forget", "note:vault/../../config.toml", ""),
    ("forget", "note:vault//etc/passwd", ""),
    ("forget", "note:vault/missing.md", ""),
    ("forget", "fact:user_food_prefs:food:likes:caviar", ""),
    ("forget", "fact:../../keys:a:b:c", ""),
    ("forget", "fact:a:b", ""),
    ("edit", "chunk-20240101-000000000000", "text"),
    ("edit", "note:vault/user.md", ""),
    ("edit", "note:vault/user.md", "x" * 20_001),
    ("edit", "note:vault/../escape.md", "x"),
    ("edit", "fact:user_food_prefs:food:likes:caviar", "Caviar"),
    ("edit", "fact:user_food_prefs:food:likes:" + "k" * 500, "x"),
    ("undo", "chunk-20240101-000000000000", ""),
    ("undo", "note:vault/user.md", ""),
    ("undo", "note:vault/missing.md", ""),
    ("undo", "fact:user_food_prefs:food:likes:caviar", ""),
    ("undo", "\x00\n\t", ""),
]


@pytest.mark.parametrize(("command", "ref", "text"), HOSTILE)
def test_refusals_are_one_error_and_write_nothing(
    memory: MemoryAccess, home: MemoryHome, command: str, ref: str, text: str
) -> None:
    memory.remember("Something to keep.")
    before = files(home.root)
    with pytest.raises(MemagentError) as caught:
        if command == "edit":
            memory_refs.edit(memory, ref, text)
        else:
            getattr(memory_refs, command)(memory, ref)
    assert isinstance(caught.value, InvalidInput | NotFound | Conflict)
    message = str(caught.value)
    assert "\n" not in message and len(message) < 600, message
    assert files(home.root) == before
    assert not (home.root / "escape.md").exists()
