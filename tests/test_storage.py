from __future__ import annotations

import json
import multiprocessing as mp
from pathlib import Path

import pytest

from memagent.core import MemoryHome, PathRejected, Storage, read_ops, sha256_hex


def test_write_creates_file_and_logs_hashes(home: MemoryHome) -> None:
    st = home.storage
    rec = st.write_text("vault/a.md", "one", actor="t", op="create")
    assert (home.root / "vault/a.md").read_text() == "one"
    assert rec.before is None and rec.after == sha256_hex(b"one")
    rec2 = st.write_text("vault/a.md", "two", actor="t", op="update")
    assert rec2.before == sha256_hex(b"one") and rec2.after == sha256_hex(b"two")
    last = list(read_ops(home.layout.ops_log))[-2:]
    assert [(r.op, r.path, r.actor) for r in last] == [
        ("create", "vault/a.md", "t"),
        ("update", "vault/a.md", "t"),
    ]


def test_write_json_is_pretty_utf8(home: MemoryHome) -> None:
    home.storage.write_json("profile/x.json", {"k": "café"}, actor="t", op="create")
    text = (home.root / "profile/x.json").read_text(encoding="utf-8")
    assert text == '{\n  "k": "café"\n}\n'


def test_delete_logs_and_missing_raises(home: MemoryHome) -> None:
    st = home.storage
    st.write_text("vault/b.md", "x", actor="t", op="create")
    rec = st.delete("vault/b.md", actor="t", op="delete")
    assert rec.after is None and rec.before == sha256_hex(b"x")
    assert not (home.root / "vault/b.md").exists()
    with pytest.raises(FileNotFoundError):
        st.delete("vault/b.md", actor="t", op="delete")


@pytest.mark.parametrize("bad", ["../outside.txt", "/etc/passwd", "vault/../../x"])
def test_refuses_paths_outside_home(home: MemoryHome, bad: str, tmp_path: Path) -> None:
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(PathRejected):
        home.storage.write_text(bad, "x", actor="t", op="create")
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_sibling_prefix_is_outside(tmp_path: Path) -> None:
    st = Storage(tmp_path / "mem")
    with pytest.raises(PathRejected):
        st.resolve(tmp_path / "mem2" / "x")


def test_no_temp_files_left_and_failed_write_keeps_old(home: MemoryHome) -> None:
    st = home.storage
    st.write_text("vault/c.md", "old", actor="t", op="create")
    with pytest.raises(TypeError):
        st.write_bytes("vault/c.md", "not-bytes", actor="t", op="update")  # type: ignore[arg-type]
    assert (home.root / "vault/c.md").read_text() == "old"
    assert not [p for p in (home.root / "vault").iterdir() if p.name.startswith(".tmp-")]


def test_clean_temp_files_removes_crash_leftovers(home: MemoryHome) -> None:
    leftover = home.root / "vault" / ".tmp-user.md.123.abcd"
    leftover.write_text("half")
    assert home.storage.clean_temp_files(home.root) == 1
    assert not leftover.exists()


def test_torn_log_line_is_skipped(home: MemoryHome) -> None:
    home.storage.write_text("vault/d.md", "x", actor="t", op="create")
    with home.layout.ops_log.open("a") as fh:
        fh.write('{"ts": "2026-01-01", "act')
    ops = list(read_ops(home.layout.ops_log))
    assert ops[-1].path == "vault/d.md"


def _appender(root: str, n: int, tag: str) -> None:
    st = Storage(Path(root))
    for i in range(n):
        with st.lock():
            p = Path(root) / "counter.json"
            value = json.loads(p.read_text()) if p.exists() else {"n": 0, "who": []}
            value["n"] += 1
            value["who"].append(f"{tag}{i}")
            st.write_json("counter.json", value, actor=tag, op="update")


def test_lock_serializes_read_modify_write_across_processes(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    root.mkdir()
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_appender, args=(str(root), 25, f"p{k}-")) for k in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    value = json.loads((root / "counter.json").read_text())
    assert value["n"] == 100
    assert len(set(value["who"])) == 100
    assert len(list(read_ops(root / "log" / "ops.jsonl"))) == 100


def test_threads_queue_on_the_lock_and_lose_nothing(home: MemoryHome) -> None:
    import threading

    st = home.storage
    target = home.root / "vault" / "count.txt"
    st.write_text(target, "0", actor="t", op="create")

    def bump() -> None:
        for _ in range(20):
            with st.lock():
                assert st.holds_lock()
                n = int(target.read_text())
                st.write_text(target, str(n + 1), actor="t", op="update")

    threads = [threading.Thread(target=bump) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert target.read_text() == "80"
    assert not st.holds_lock()


def test_lock_is_reentrant_and_reports_holder(home: MemoryHome) -> None:
    st = home.storage
    assert not st.holds_lock()
    with st.lock():
        with st.lock():
            assert st.holds_lock()
        assert st.holds_lock()
    assert not st.holds_lock()


def test_lock_timeout_is_a_clear_error(tmp_path: Path) -> None:
    import threading

    from memagent.core import LockTimeout

    st = Storage(tmp_path / "mem", lock_timeout=0.2)
    held = threading.Event()
    done = threading.Event()

    def holder() -> None:
        with st.lock():
            held.set()
            done.wait(5)

    t = threading.Thread(target=holder)
    t.start()
    held.wait(5)
    try:
        with pytest.raises(LockTimeout, match="locked"), st.lock():
            pass
    finally:
        done.set()
        t.join()


def _exchange(a: Path, b: Path) -> None:
    """Swap two names atomically (renameat2 RENAME_EXCHANGE): both always exist."""
    import ctypes
    import os

    libc = ctypes.CDLL(None, use_errno=True)
    at_fdcwd, rename_exchange = -100, 2
    if libc.renameat2(at_fdcwd, bytes(a), at_fdcwd, bytes(b), rename_exchange) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def test_symlink_swapped_in_during_writes_is_refused(home: MemoryHome, tmp_path: Path) -> None:
    """A racing thread keeps swapping `vault/entities` with a symlink to a folder
    outside the home; no write ever lands outside, every write lands in the real
    folder or is refused."""
    import os
    import threading

    outside = tmp_path / "outside"
    outside.mkdir()
    vault = home.layout.vault
    real, link = vault / "entities", vault / "entities-link"
    real.mkdir(exist_ok=True)
    os.symlink(outside, link)
    try:
        _exchange(real, link)
        _exchange(real, link)
    except (OSError, AttributeError) as exc:
        pytest.skip(f"no renameat2 here: {exc}")
    stop = threading.Event()
    swaps = 0

    def swapper() -> None:
        nonlocal swaps
        while not stop.is_set():
            _exchange(real, link)
            swaps += 1

    t = threading.Thread(target=swapper)
    t.start()
    written, refused = [], 0
    try:
        for i in range(600):
            try:
                home.storage.write_text(
                    f"vault/entities/n{i}.md", f"note {i}", actor="t", op="create"
                )
                written.append(i)
            except PathRejected:
                refused += 1
    finally:
        stop.set()
        t.join()
    if swaps % 2:
        _exchange(real, link)
    assert list(outside.iterdir()) == []
    assert real.is_dir() and not real.is_symlink()
    assert sorted(int(p.stem[1:]) for p in real.glob("n*.md")) == written
    assert refused + len(written) == 600


def test_ops_log_rotates_into_segments_every_reader_still_reads(home: MemoryHome) -> None:
    from memagent.core import read_ops_since
    from memagent.core.oplog import ops_end, segments

    st = home.storage
    st.log_segment_bytes = 1500
    before = len(list(read_ops(home.layout.ops_log)))
    mark = ops_end(home.layout.ops_log)
    for i in range(40):
        st.write_text(f"vault/r{i}.md", f"note {i}", actor="t", op="create")
    log = home.layout.ops_log
    assert len(segments(log)) >= 3
    assert all(p.stat().st_size <= 1500 for _, p in segments(log)[1:])
    ops = list(read_ops(log))
    assert len(ops) == before + 40
    assert [r.path for r in ops[-40:]] == [f"vault/r{i}.md" for i in range(40)]
    since, end = read_ops_since(log, mark)
    assert [r.path for r in since] == [f"vault/r{i}.md" for i in range(40)]
    assert end == ops_end(log)
    assert read_ops_since(log, end) == ([], end)
    assert [r.path for r in home.ops(limit=2)] == ["vault/r38.md", "vault/r39.md"]


def test_tail_reads_backwards_and_agrees_with_a_full_read(home: MemoryHome) -> None:
    from memagent.core.oplog import tail_ops

    st = home.storage
    st.log_segment_bytes = 2000
    for i in range(150):
        actor = "a" if i % 7 == 0 else "b"
        st.write_text(f"vault/{actor}/n{i}.md", f"note {i}", actor=actor, op="create")
    log = home.layout.ops_log
    with log.open("a") as fh:
        fh.write('{"ts": "2026-01-01", "act')  # a torn last line is passed over
    everything = list(read_ops(log))
    for limit, prefix, actor in ((1, None, None), (5, None, "a"), (30, "vault/a/", None),
                                 (500, None, None), (500, None, "a"), (3, "nowhere/", None),
                                 (0, None, None)):  # fmt: skip
        want = [r for r in everything
                if (prefix is None or r.path.startswith(prefix))
                and (actor is None or r.actor == actor)]  # fmt: skip
        want = want[-limit:] if limit else []
        assert tail_ops(log, limit=limit, path_prefix=prefix, actor=actor) == want


def test_index_catches_up_across_a_rotation(home: MemoryHome) -> None:
    from memagent.memory.chunks.store import ChunkStore

    reader = ChunkStore(home, embeddings=False)
    assert reader.recall("ptarmigan") == []
    writer = ChunkStore(MemoryHome.open(home.root), embeddings=False)
    writer.home.storage.log_segment_bytes = 800
    for i in range(6):
        writer.remember(f"Filler memory number {i} about nothing much.")
    writer.remember("A ptarmigan turns white in winter.")
    hits = reader.recall("ptarmigan")
    assert hits and "ptarmigan" in hits[0].row.content
    writer.close()
    reader.close()


def test_large_contents_are_stored_once_by_hash(home: MemoryHome) -> None:
    from memagent.core.oplog import blob_dir
    from memagent.memory.chunks.store import ChunkStore

    store = ChunkStore(home, embeddings=False)
    big_a = "alpha " * 2000
    big_b = "bravo " * 2000
    chunk = store.create(big_a)
    log = home.layout.ops_log
    size0 = log.stat().st_size
    for _ in range(3):  # the same two contents, again and again
        store.update(chunk.id, content=big_b)
        store.update(chunk.id, content=big_a)
    grown = log.stat().st_size - size0
    assert grown < 6 * 2000, grown  # hashes in the log, not 12 KB contents
    assert len(list(blob_dir(log).iterdir())) == 2
    edits = store.history(chunk.id)
    assert edits[-1].before["content"] == big_b  # read back whole
    assert edits[-1].after["content"] == big_a
    store.undo(chunk.id)
    assert store.get(chunk.id).content == big_b
    store.close()


def test_quotas_refuse_writes_past_them_and_write_nothing(home: MemoryHome) -> None:
    from memagent.core import QuotaExceeded
    from memagent.core.config import QuotasConfig
    from memagent.memory.chunks.store import ChunkStore

    st = home.storage
    used = st.usage().bytes
    st.quota_source = lambda: QuotasConfig(max_bytes=used + 5000, max_notes=1000)
    st.write_text("vault/fits.md", "x" * 3000, actor="t", op="create")
    before = sorted(p.name for p in home.layout.vault.iterdir())
    with pytest.raises(QuotaExceeded, match="quota"):
        st.write_text("vault/too-big.md", "y" * 3000, actor="t", op="create")
    assert sorted(p.name for p in home.layout.vault.iterdir()) == before
    st.delete("vault/fits.md", actor="t", op="delete")  # deleting always works
    st.write_text("vault/now-fits.md", "y" * 3000, actor="t", op="create")

    notes = st.usage().notes
    st.quota_source = lambda: QuotasConfig(max_notes=notes)
    with pytest.raises(QuotaExceeded, match="notes"):
        st.write_text("vault/one-more.md", "z", actor="t", op="create")
    st.write_text("vault/now-fits.md", "replacing a note is fine", actor="t", op="update")

    st.quota_source = lambda: QuotasConfig(max_chunks=1)
    store = ChunkStore(home, embeddings=False)
    store.remember("The first chunk fits.")
    with pytest.raises(QuotaExceeded, match="chunks"):
        store.remember("The second does not.")
    assert len(list(home.layout.chunks.rglob("*.json"))) == 1
    store.close()

    st.quota_source = lambda: QuotasConfig(max_log_bytes=1)
    with pytest.raises(QuotaExceeded, match="ops log"):
        st.write_text("vault/logged.md", "z", actor="t", op="create")


def test_quota_from_config_toml_is_one_cli_line(home: MemoryHome) -> None:
    from typer.testing import CliRunner

    from memagent.cli import app

    home.layout.config.write_text("[quotas]\nmax_chunks = 1\n", encoding="utf-8")
    h = str(home.root)
    runner = CliRunner()
    assert runner.invoke(app, ["remember", "one", "--home", h, "--keyword-only"]).exit_code == 0
    res = runner.invoke(app, ["remember", "two", "--home", h, "--keyword-only"])
    assert res.exit_code == 1
    assert res.stderr.count("\n") == 1 and "quotas.max_chunks" in res.stderr


def test_prune_drops_old_segments_and_their_contents(home: MemoryHome) -> None:
    from memagent.core import QuotaExceeded
    from memagent.core.config import QuotasConfig
    from memagent.core.oplog import blob_dir, segments

    st = home.storage
    st.log_segment_bytes = 1200
    for i in range(30):
        st.write_text(f"vault/p{i}.md", f"note {i}", actor="t", op="create")
    st.write_text("vault/big.md", "old " * 2000, actor="t", op="create")
    st.write_text(
        "vault/big.md", "new " * 2000, actor="t", op="update", meta={"old": "old " * 2000}
    )
    log = home.layout.ops_log
    assert len(segments(log)) > 3 and len(list(blob_dir(log).iterdir())) == 1
    st.quota_source = lambda: QuotasConfig(max_log_bytes=st.usage().log_bytes)
    with pytest.raises(QuotaExceeded, match="log --prune"):
        st.write_text("vault/x.md", "x", actor="t", op="create")
    st.quota_source = None
    kept = segments(log)[-1:]
    segs, _, freed = st.prune_log(1)
    assert segs > 0 and freed > 0 and segments(log) == kept
    assert [r.op for r in read_ops(log)][-1] == "log.prune"
    # the newest segment and the live file still read; a content still referred to stays
    assert len(list(blob_dir(log).iterdir())) == 1
