"""Crash safety: SIGKILL a writer mid-write, many times. Afterwards no note is
torn and every write the writer acknowledged (printed after the call returned)
is on disk."""

from __future__ import annotations

import hashlib
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from memagent.core import MemoryHome, read_ops
from memagent.memory.vault import Vault

WRITER = Path(__file__).parent / "fixtures" / "vault" / "crash_writer.py"
KILLS = 12


def check_note(text: str) -> int:
    header, _, payload = text.partition("\n")
    m = re.fullmatch(r"seq=(\d+) sha=([0-9a-f]{64})", header)
    assert m, f"torn or foreign header: {header[:80]!r}"
    assert hashlib.sha256(payload.encode()).hexdigest() == m.group(2), "torn payload"
    return int(m.group(1))


def test_sigkill_mid_write_never_tears_or_loses_acknowledged_writes(home: MemoryHome) -> None:
    rng = random.Random(1234)
    acked: dict[str, int] = {}
    acked_entries: list[int] = []
    for i in range(KILLS):
        proc = subprocess.Popen(
            [sys.executable, str(WRITER), str(home.root), str(i * 1_000_000)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        want = rng.randint(1, 6)
        for _ in range(want):
            line = proc.stdout.readline()
            assert line, f"writer died early (rc={proc.poll()})"
            name, seq = line.split()
            acked[name] = int(seq)
            acked_entries.append(int(seq))
        time.sleep(rng.uniform(0, 0.03))
        os.kill(proc.pid, signal.SIGKILL)
        rest, _ = proc.communicate()
        for line in rest.splitlines():
            name, seq = line.split()
            acked[name] = int(seq)
            acked_entries.append(int(seq))
        assert proc.returncode == -signal.SIGKILL

    vault = Vault(home)
    for name, last in acked.items():
        on_disk = check_note(vault.read(name))
        assert on_disk >= last, f"{name}: acknowledged seq {last} lost (disk has {on_disk})"
    for entry in vault.list_dir("notes").entries:
        check_note(vault.read(entry))
    journal = vault.read("journal.md").splitlines()
    assert all(re.fullmatch(r"entry \d+", line) for line in journal), "torn journal line"
    present = [int(line.split()[1]) for line in journal]
    missing = set(acked_entries) - set(present)
    assert not missing, f"acknowledged journal entries lost: {sorted(missing)[:5]}"
    assert present == sorted(present)

    assert all(
        r.path.startswith("vault/")
        for r in read_ops(home.layout.ops_log)
        if r.actor == "crash-writer"
    )
    home.init()
    assert not list(home.layout.vault.rglob(".tmp-*")), "temp files survive a re-init"
