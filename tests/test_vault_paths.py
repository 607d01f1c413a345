from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from memagent.core import MemoryHome, PathRejected
from memagent.memory.vault import Vault, normalize


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        ("user.md", "user.md"),
        ("./entities//jane_doe.md", "entities/jane_doe.md"),
        ("entities/", "entities"),
        ("", ""),
        (".", ""),
        ("notes/ünïcødé 日本.md", "notes/ünïcødé 日本.md"),
        (".obsidian/app.json", ".obsidian/app.json"),
    ],
)
def test_normalize_accepts(raw: str, want: str) -> None:
    assert normalize(raw) == want


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ("../x.md", "'..'"),
        ("entities/../../x.md", "'..'"),
        ("a/..", "'..'"),
        ("/etc/passwd", "absolute"),
        ("C:/x.md", "absolute"),
        ("~/x.md", "'~'"),
        ("a\x00b", "NUL"),
        ("a\nb", "control"),
        ("a\\b.md", "backslash"),
        ("x" * 256, "longer than 255"),
        ("a/" * 600, "too long"),
        ("a/" * 40 + "x", "deeper"),
        (".tmp-user.md.1.ab", "temporary"),
        ("\udcff.md", "Unicode"),
    ],
)
def test_normalize_rejects(raw: str, why: str) -> None:
    with pytest.raises(PathRejected, match=why):
        normalize(raw)


def test_normalize_rejects_non_strings() -> None:
    with pytest.raises(PathRejected, match="string"):
        normalize(3)


def test_sibling_with_same_prefix_is_outside(home: MemoryHome, tmp_path: Path) -> None:
    # /home/vault2 passes a naive startswith("/home/vault") check.
    sibling = home.root / "vault2"
    sibling.mkdir()
    (sibling / "secret.md").write_text("secret")
    os.symlink(sibling, home.layout.vault / "link")
    vault = Vault(home)
    with pytest.raises(PathRejected, match="outside"):
        vault.read("link/secret.md")


def test_inside_symlink_is_followed_and_writes_hit_the_real_file(home: MemoryHome) -> None:
    vault = Vault(home)
    vault.create("entities/real.md", "one")
    os.symlink("real.md", home.layout.vault / "entities" / "alias.md")
    assert vault.read("entities/alias.md") == "one"
    vault.update("entities/alias.md", "one", "two")
    link = home.layout.vault / "entities" / "alias.md"
    assert link.is_symlink()
    assert (home.layout.vault / "entities" / "real.md").read_text() == "two"


def test_symlink_out_of_vault_is_rejected_for_every_use(home: MemoryHome, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "s.md").write_text("secret")
    os.symlink(outside, home.layout.vault / "out")
    os.symlink(outside / "s.md", home.layout.vault / "s.md")
    os.symlink("/", home.layout.vault / "root")
    vault = Vault(home)
    for path in ("out/s.md", "s.md", "root/etc/passwd", "out/new.md", "out"):
        with pytest.raises(PathRejected):
            vault.locate(path)
    with pytest.raises(PathRejected):
        vault.create("out/new.md", "x")
    assert sorted(p.name for p in outside.iterdir()) == ["s.md"]
    assert "out/" not in vault.list_dir("").entries


def test_symlink_loop_and_broken_link(home: MemoryHome) -> None:
    v = home.layout.vault
    os.symlink("loop2", v / "loop1")
    os.symlink("loop1", v / "loop2")
    os.symlink("missing.md", v / "broken.md")
    vault = Vault(home)
    with pytest.raises(PathRejected):
        vault.read("loop1")
    with pytest.raises(PathRejected, match="broken"):
        vault.read("broken.md")


def test_special_files_are_refused(home: MemoryHome) -> None:
    fifo = home.layout.vault / "pipe.md"
    os.mkfifo(fifo)
    sock_path = home.layout.vault / "s.sock"
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(sock_path))
        vault = Vault(home)
        for name in ("pipe.md", "s.sock"):
            with pytest.raises(PathRejected, match="special"):
                vault.read(name)
            with pytest.raises(PathRejected, match="special"):
                vault.update(name, "a", "b")
        entries = vault.list_dir("").entries
        assert "pipe.md" not in entries and "s.sock" not in entries
    finally:
        sock.close()


def test_file_in_the_middle_of_a_path(home: MemoryHome) -> None:
    vault = Vault(home)
    with pytest.raises(PathRejected, match="not a folder"):
        vault.create("user.md/child.md", "x")


def test_vault_under_a_symlinked_home(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    os.symlink(real, tmp_path / "linked")
    mh = MemoryHome.open(tmp_path / "linked" / "home")
    mh.init()
    vault = Vault(mh)
    vault.create("a.md", "x")
    assert (real / "home" / "vault" / "a.md").read_text() == "x"
