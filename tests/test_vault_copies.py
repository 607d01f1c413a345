"""The vault's public hooks for callers outside it (`Vault.lock`, `walk`,
`read_bytes`, `write_bytes`): what an editor's save and a copy between memory
homes use instead of the vault's private storage hooks."""

from __future__ import annotations

import threading

import pytest

from memagent.core import InvalidInput, MemoryHome, NotFound, PathRejected, read_ops
from memagent.memory.vault import Vault


@pytest.fixture
def vault(home: MemoryHome) -> Vault:
    return Vault(home, actor="import")


def test_walk_lists_files_and_folders_in_order(vault: Vault) -> None:
    vault.create("entities/jane.md", "# Jane\n")
    vault.mkdir("empty/inside")
    walked = list(vault.walk())
    assert ("entities", "dir") in walked and ("entities/jane.md", "file") in walked
    assert ("empty/inside", "dir") in walked and ("user.md", "file") in walked
    assert walked.index(("entities", "dir")) < walked.index(("entities/jane.md", "file"))
    assert list(vault.walk("entities")) == [("entities/jane.md", "file")]


def test_bytes_go_in_and_out_as_they_are_and_are_logged(vault: Vault, home: MemoryHome) -> None:
    data = b"\xff\xfe not UTF-8 \x01"
    assert vault.write_bytes("files/blob.bin", data, op="import") == "files/blob.bin"
    assert vault.read_bytes("files/blob.bin") == data
    rec = next(r for r in read_ops(home.layout.ops_log) if r.path == "vault/files/blob.bin")
    assert (rec.actor, rec.op) == ("import", "import")


def test_bad_writes_and_reads_are_refused_and_write_nothing(vault: Vault, home: MemoryHome) -> None:
    before = sorted(p.relative_to(home.root) for p in home.layout.vault.rglob("*"))
    vault_limit = vault.max_bytes
    with pytest.raises(InvalidInput, match="limit"):
        vault.write_bytes("big.bin", b"x" * (vault_limit + 1), op="import")
    with pytest.raises(InvalidInput, match="folder"):
        vault.write_bytes("", b"x", op="import")
    vault.mkdir("folder")
    with pytest.raises(InvalidInput, match="folder"):
        vault.write_bytes("folder", b"x", op="import")
    with pytest.raises(PathRejected):
        vault.write_bytes("../outside.md", b"x", op="import")
    with pytest.raises(NotFound):
        vault.read_bytes("missing.md")
    after = sorted(p.relative_to(home.root) for p in home.layout.vault.rglob("*"))
    assert [p for p in after if p not in before] == [p for p in after if p.name == "folder"]
    assert not (home.root.parent / "outside.md").exists()


def test_lock_is_the_lock_the_vaults_writes_take(vault: Vault) -> None:
    """A write from another thread waits while a caller holds `lock()`."""
    done = threading.Event()

    def write() -> None:
        Vault(vault.home).create("notes/late.md", "late\n")
        done.set()

    with vault.lock():
        worker = threading.Thread(target=write)
        worker.start()
        assert not done.wait(0.3)
        assert not vault.exists("notes/late.md")
    worker.join(timeout=30)
    assert done.is_set() and vault.read("notes/late.md") == "late\n"
