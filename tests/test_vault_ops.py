from __future__ import annotations

import pytest

from memagent.core import (
    Conflict,
    InvalidInput,
    MemoryHome,
    NotFound,
    read_ops,
    sha256_hex,
)
from memagent.memory.vault import Vault


@pytest.fixture
def vault(home: MemoryHome) -> Vault:
    return Vault(home)


def _ops(home: MemoryHome) -> list[tuple[str, str, str]]:
    return [(r.actor, r.op, r.path) for r in read_ops(home.layout.ops_log) if r.actor == "vault"]


def test_create_read_and_log(vault: Vault, home: MemoryHome) -> None:
    out = vault.create("entities/new/x.md", "héllo\n")
    assert out.to_json() == {"path": "entities/new/x.md", "bytes": len("héllo\n".encode())}
    assert vault.read("entities/new/x.md") == "héllo\n"
    rec = next(r for r in read_ops(home.layout.ops_log) if r.path == "vault/entities/new/x.md")
    assert (rec.actor, rec.op, rec.after) == ("vault", "create", sha256_hex("héllo\n".encode()))


def test_create_existing_is_a_conflict(vault: Vault) -> None:
    with pytest.raises(Conflict, match="already exists"):
        vault.create("user.md", "x")
    with pytest.raises(Conflict, match="folder"):
        vault.create("entities", "x")
    with pytest.raises(InvalidInput, match="root"):
        vault.create("", "x")


def test_update_replaces_first_occurrence_only(vault: Vault, home: MemoryHome) -> None:
    vault.create("a.md", "x y x")
    out = vault.update("a.md", "x", "z")
    assert out.occurrences == 2 and out.replaced == 1
    assert vault.read("a.md") == "z y x"
    last = list(read_ops(home.layout.ops_log))[-1]
    assert last.meta == {"old_content": "x", "new_content": "z"}


def test_update_errors_write_nothing(vault: Vault, home: MemoryHome) -> None:
    vault.create("a.md", "abc")
    before = _ops(home)
    with pytest.raises(NotFound, match=r"not found in 'a\.md'"):
        vault.update("a.md", "zzz", "q")
    with pytest.raises(InvalidInput, match="non-empty"):
        vault.update("a.md", "", "q")
    with pytest.raises(NotFound, match="does not exist"):
        vault.update("nope.md", "a", "b")
    with pytest.raises(InvalidInput, match="folder"):
        vault.update("entities", "a", "b")
    assert _ops(home) == before
    assert vault.read("a.md") == "abc"


def test_missing_file_suggests_close_names(vault: Vault) -> None:
    with pytest.raises(NotFound, match=r"did you mean 'user\.md'"):
        vault.read("usr.md")


def test_append_adds_newline_and_creates(vault: Vault) -> None:
    vault.create("a.md", "line1")
    vault.append("a.md", "line2\n")
    assert vault.read("a.md") == "line1\nline2\n"
    out = vault.append("new/b.md", "first")
    assert out.created is True and vault.read("new/b.md") == "first"
    with pytest.raises(InvalidInput, match="folder"):
        vault.append("entities", "x")


def test_delete(vault: Vault, home: MemoryHome) -> None:
    vault.create("a.md", "bye")
    assert vault.delete("a.md").to_json() == {"path": "a.md", "deleted": True}
    assert not vault.exists("a.md")
    assert list(read_ops(home.layout.ops_log))[-1].meta == {"content": "bye"}
    with pytest.raises(NotFound):
        vault.delete("a.md")
    with pytest.raises(InvalidInput, match="folder"):
        vault.delete("entities")


def test_exists_size_and_dirs(vault: Vault) -> None:
    assert vault.exists("user.md") and not vault.exists("entities") and not vault.exists("n.md")
    assert vault.dir_exists("entities") and not vault.dir_exists("user.md")
    assert vault.dir_exists("")
    vault.create("s.md", "12345")
    assert vault.size("s.md") == 5
    with pytest.raises(NotFound):
        vault.size("missing.md")
    assert vault.mkdir("p/q").to_json() == {"path": "p/q/", "created": True}
    assert vault.mkdir("p/q").to_json() == {"path": "p/q/", "created": False}
    with pytest.raises(Conflict):
        vault.mkdir("s.md")


def test_list_dir(vault: Vault, home: MemoryHome) -> None:
    vault.create("entities/a.md", "a")
    (home.layout.vault / "entities" / ".tmp-a.md.1.x").write_text("torn")
    assert vault.list_dir("").entries == ["entities/", "user.md"]
    assert vault.list_dir("", recursive=True).entries == [
        "entities/",
        "entities/a.md",
        "user.md",
    ]
    assert vault.list_dir("entities").path == "entities/"
    with pytest.raises(NotFound):
        vault.list_dir("nope")
    with pytest.raises(InvalidInput, match="not a folder"):
        vault.list_dir("user.md")


def test_list_is_capped(home: MemoryHome) -> None:
    vault = Vault(home)
    vault.max_entries = 3
    for i in range(5):
        vault.create(f"d/{i}.md", "x")
    out = vault.list_dir("d")
    assert out.entries == ["d/0.md", "d/1.md", "d/2.md"] and out.truncated is True


def test_size_caps(home: MemoryHome) -> None:
    vault = Vault(home)
    vault.max_bytes = 10
    with pytest.raises(InvalidInput, match="limit is 10"):
        vault.create("big.md", "x" * 11)
    assert not vault.exists("big.md")
    vault.create("ok.md", "x" * 10)
    with pytest.raises(InvalidInput, match="after appending"):
        vault.append("ok.md", "y")
    with pytest.raises(InvalidInput, match="after the update"):
        vault.update("ok.md", "x", "yy")
    (home.layout.vault / "huge.md").write_text("z" * 100)
    with pytest.raises(InvalidInput, match="100 bytes"):
        vault.read("huge.md")
    assert vault.read("ok.md") == "x" * 10


def test_binary_file_is_not_text(vault: Vault, home: MemoryHome) -> None:
    (home.layout.vault / "img.png").write_bytes(b"\x89PNG\xff\xfe")
    with pytest.raises(InvalidInput, match="not a UTF-8 text file"):
        vault.read("img.png")


def test_content_must_be_text(vault: Vault) -> None:
    with pytest.raises(InvalidInput, match="string"):
        vault.create("a.md", 5)
    with pytest.raises(InvalidInput, match="Unicode"):
        vault.create("a.md", "\udcff")
    assert not vault.exists("a.md")


def test_search_substring_regex_and_cap(vault: Vault) -> None:
    vault.create("a.md", "Alpha\nbeta\nALPHA again\n")
    vault.create("sub/b.md", "alphabet\n")
    out = vault.search("alpha").to_json()
    assert [(m["path"], m["line"]) for m in out["matches"]] == [
        ("a.md", 1),
        ("a.md", 3),
        ("sub/b.md", 1),
    ]
    assert vault.search("alpha", case_sensitive=True).to_json()["matches"] == [
        {"path": "sub/b.md", "line": 1, "text": "alphabet"}
    ]
    assert len(vault.search("^a", regex_mode=True).to_json()["matches"]) == 3
    assert vault.search("a.md", regex_mode=False).to_json()["matches"] == []
    assert [m["path"] for m in vault.search("alpha", path="sub").to_json()["matches"]] == [
        "sub/b.md"
    ]
    capped = vault.search("alpha", max_results=2).to_json()
    assert len(capped["matches"]) == 2 and capped["truncated"] is True


def test_search_errors(vault: Vault) -> None:
    with pytest.raises(InvalidInput, match="regex"):
        vault.search("(", regex_mode=True)
    with pytest.raises(InvalidInput, match="non-empty"):
        vault.search("")
    with pytest.raises(InvalidInput, match="characters"):
        vault.search("x" * 5000)
    with pytest.raises(NotFound):
        vault.search("x", path="nope")


def test_catastrophic_regex_times_out(vault: Vault, monkeypatch: pytest.MonkeyPatch) -> None:
    import memagent.memory.vault._vault as vmod

    monkeypatch.setattr(vmod, "REGEX_TIMEOUT_S", 0.05)
    vault.create("evil.md", "a" * 3000 + "!\n")
    with pytest.raises(InvalidInput, match="longer than"):
        vault.search("(a|aa)+$", regex_mode=True)


def test_writes_use_configured_actor(home: MemoryHome) -> None:
    Vault(home, actor="agent").create("z.md", "x")
    assert list(read_ops(home.layout.ops_log))[-1].actor == "agent"


def test_update_to_same_text_writes_nothing(vault: Vault, home: MemoryHome) -> None:
    vault.create("same.md", "keep")
    before = _ops(home)
    assert vault.update("same.md", "keep", "keep").occurrences == 1
    assert _ops(home) == before
