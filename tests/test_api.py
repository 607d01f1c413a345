"""The Python API (`memagent.Memory`), including the Python guide's example, run as written."""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from memagent import Memory
from memagent.core import InvalidInput, MemoryHome, NotFound, PathRejected

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "guides" / "python.md"


def readme_python_example() -> str:
    text = GUIDE.read_text(encoding="utf-8")
    section = text.split("# Python API (`memagent.Memory`)", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match is not None, "the Python guide has no python block"
    return match.group(1)


def test_readme_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code = readme_python_example()
    exec(compile(code, "docs/guides/python.md", "exec"), {"__name__": "readme_example"})
    home = MemoryHome.open(tmp_path / "my-memory")
    assert (home.layout.vault / "entities" / "jane_doe.md").read_text().startswith("# Jane Doe")
    food = (home.layout.profile / "resource_user_food_prefs.json").read_text()
    assert "green_tea" in food


@pytest.fixture
def mem(home: MemoryHome) -> Iterator[Memory]:
    with Memory(home, embeddings=False) as m:
        yield m


def test_open_creates_a_missing_home_only_when_asked(tmp_path: Path) -> None:
    with pytest.raises(NotFound):
        Memory.open(tmp_path / "nope", create=False)
    assert not (tmp_path / "nope").exists()
    (tmp_path / "file").write_text("x")
    with pytest.raises(InvalidInput):
        Memory.open(tmp_path / "file")
    assert (tmp_path / "file").read_text() == "x"
    with Memory.open(tmp_path / "made", embeddings=False) as m:
        assert m.home.exists and m.read_note("user.md").startswith("# User")


def test_remember_recall_get_forget_restore(mem: Memory) -> None:
    made = mem.remember("The dentist appointment is on Friday at 3pm.", tags=["health"])
    mid = made[0].id
    assert mem.recall("when is the dentist", k=3)[0].id == mid
    assert mem.recall("dentist", tags=["nothing"]) == []
    assert mem.get(mid).content.startswith("The dentist")
    assert [r["id"] for r in mem.memories()] == [mid]
    mem.forget(mid)
    assert mid not in [h.id for h in mem.recall("dentist appointment")]
    assert mem.memories(include_deleted=True)[0]["deleted"] is True
    mem.restore(mid)
    assert mid in [h.id for h in mem.recall("dentist appointment")]
    mem.forget(mid, hard=True)
    with pytest.raises(NotFound):
        mem.get(mid)


def test_bad_input_is_refused_and_nothing_is_written(mem: Memory) -> None:
    chunks = mem.home.layout.chunks
    for bad in ["", "   "]:
        with pytest.raises(InvalidInput):
            mem.remember(bad)
    with pytest.raises(InvalidInput):
        mem.remember("x", tags=["no spaces allowed"])
    with pytest.raises(InvalidInput):
        mem.remember("x" * (mem.home.config.limits.max_file_bytes * 17))
    for query, k in [("", 5), ("x" * 5000, 5), ("tea", 0), ("tea", 10_000)]:
        with pytest.raises(InvalidInput):
            mem.recall(query, k=k)
    with pytest.raises(InvalidInput):
        mem.get("../../etc/passwd")
    with pytest.raises(PathRejected):
        mem.write_note("../outside.md", "x")
    with pytest.raises(InvalidInput):
        mem.write_note("big.md", "x" * (mem.home.config.limits.max_file_bytes + 1))
    with pytest.raises(InvalidInput):
        mem.run_actions('[{"action": "format_disk"}]')
    with pytest.raises(InvalidInput):
        mem.profile_apply([{"operation": "append", "file": "../../x.json"}])
    with pytest.raises(InvalidInput):
        mem.profile_apply("not a list")  # type: ignore[arg-type]
    assert not any(p.suffix == ".json" for p in chunks.rglob("*"))
    assert not (mem.home.root / "outside.md").exists()
    assert not (mem.home.layout.vault / "big.md").exists()


def test_write_note_creates_replaces_and_keeps_unchanged(mem: Memory) -> None:
    assert mem.write_note("a/b.md", "one")["created"] is True
    assert mem.write_note("a/b.md", "two")["created"] is False
    assert mem.write_note("a/b.md", "two")["changed"] is False
    assert mem.write_note("a/b.md", "")["created"] is False
    assert mem.read_note("a/b.md") == ""
    assert mem.write_note("a/b.md", "three")["created"] is False
    assert mem.read_note("a/b.md") == "three"
    assert "a/b.md" in mem.list_notes()
    writes = [r for r in mem.home.ops(limit=100) if r.path == "vault/a/b.md"]
    assert all(r.actor == "api" for r in writes) and len(writes) >= 4


def test_profile_apply_show_history(mem: Memory) -> None:
    op = {
        "operation": "append",
        "file": "resource_user_food_prefs.json",
        "path": "food.likes",
        "value": {"item": "ramen"},
    }
    dry = mem.profile_apply([op], dry_run=True)
    assert dry["ok"] and dry["written"] == []
    done = mem.profile_apply([op])
    assert done["ok"] and done["written"] == ["resource_user_food_prefs.json"]
    likes = mem.profile_show("user_food_prefs")["resource_user_food_prefs.json"]["food"]["likes"]
    assert [i["item"] for i in likes] == ["ramen"]
    assert [e["change"] for e in mem.profile_history("ramen")] == ["append"]
    remove_missing = {**op, "operation": "remove", "value": {"item": "pizza"}}
    rejected = mem.profile_apply([remove_missing])
    assert rejected["ok"] is False and rejected["written"] == []


def test_async_twins(mem: Memory) -> None:
    async def run() -> tuple[str, list[str], str]:
        made = await mem.aremember("Tom plays the guitar on Sundays.")
        hits = await mem.arecall("who plays guitar")
        await mem.awrite_note("entities/tom.md", "# Tom")
        return made[0].id, [h.id for h in hits], await mem.aread_note("entities/tom.md")

    mid, hit_ids, note = asyncio.run(run())
    assert hit_ids[0] == mid and note == "# Tom"


def test_threads_share_one_memory_and_lose_nothing(mem: Memory) -> None:
    made: list[str] = []
    guard = threading.Lock()

    def worker(n: int) -> None:
        for i in range(5):
            chunk = mem.remember(f"worker {n} fact {i} token{n}x{i}")[0]
            mem.recall(f"worker {n}")
            with guard:
                made.append(chunk.id)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(made)) == 20
    for n in range(4):
        for i in range(5):
            hits = mem.recall(f"token{n}x{i}", k=1, kinds=["chunk"])
            assert hits and hits[0].content == f"worker {n} fact {i} token{n}x{i}"


def test_update_undo_history(mem: Memory) -> None:
    mid = mem.remember("The gym opens at 6am.", tags=["gym"])[0].id
    with pytest.raises(InvalidInput, match="nothing to change"):
        mem.update(mid)
    for bad in [{"text": ""}, {"tags": "gym"}, {"tags": ["two words"]}, {"type": "rumour"}]:
        with pytest.raises(InvalidInput):
            mem.update(mid, **bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        mem.update(mid, text="x" * (mem.home.config.limits.max_file_bytes + 1))
    with pytest.raises(InvalidInput):
        mem.update("../../etc/passwd", text="x")
    with pytest.raises(NotFound):
        mem.update("chunk-20240101-000000000000", text="x")
    assert mem.history(mid) == []
    changed = mem.update(mid, text="The gym opens at 7am.", tags=["gym", "health"], type="fact")
    assert changed.content == "The gym opens at 7am." and changed.type == "fact"
    assert mem.recall("gym 7am", tags=["health"])[0].id == mid
    assert asyncio.run(mem.ahistory(mid))[0].before["content"] == "The gym opens at 6am."
    undone = mem.undo(mid)
    assert undone.after["content"] == "The gym opens at 6am."
    assert mem.get(mid).tags == ["gym"]
