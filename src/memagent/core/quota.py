"""What a memory home holds, against its quotas (`[quotas]` in config.toml).

`HomeUsage` is measured once per home and process by walking the folder, then kept
up to date by every write this process makes through `Storage` (and measured
again every `RESCAN_S` seconds, to see other processes' writes). A write that
would take the home past a quota raises `QuotaExceeded` before anything is
written; writes that shrink the home always pass.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from memagent.core.config import QuotasConfig
from memagent.core.errors import QuotaExceeded

RESCAN_S = 300.0
_SKIP_TOP = ("index.sqlite", ".lock")


@dataclass
class HomeUsage:
    """What a memory home holds, as its quotas count it (the index and lock left out)."""

    bytes: int = 0
    chunks: int = 0
    notes: int = 0
    log_bytes: int = 0
    measured: float = 0.0


def kind_of(rel: str) -> str:
    """`log`, `chunk`, `note`, `index` or `file`, from a path relative to the home."""
    top, _, rest = rel.partition("/")
    if top == "log":
        return "log"
    if top.startswith(_SKIP_TOP):
        return "index"
    if top == "chunks" and rest.endswith(".json"):
        return "chunk"
    if top == "vault" and rest.endswith(".md"):
        return "note"
    return "file"


def measure(root: Path) -> HomeUsage:
    usage = HomeUsage(measured=time.monotonic())
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        rel_dir = "" if rel_dir == "." else rel_dir.replace(os.sep, "/") + "/"
        for name in filenames:
            rel = rel_dir + name
            try:
                size = os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                continue
            add(usage, kind_of(rel), size, +1)
        dirnames[:] = [d for d in dirnames if not os.path.islink(os.path.join(dirpath, d))]
    return usage


def add(usage: HomeUsage, kind: str, size: int, files: int) -> None:
    if kind == "index":
        return
    if kind == "log":
        usage.log_bytes += size
        return
    usage.bytes += size
    if kind == "chunk":
        usage.chunks += files
    elif kind == "note":
        usage.notes += files


class Tracker:
    """The usage of one home in this process (shared by its `Storage` objects)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._usage: HomeUsage | None = None
        self._guard = threading.Lock()

    def usage(self) -> HomeUsage:
        with self._guard:
            if self._usage is None or time.monotonic() - self._usage.measured > RESCAN_S:
                self._usage = measure(self.root)
            return self._usage

    def check(self, quotas: QuotasConfig, rel: str, old_size: int | None, new_size: int) -> None:
        """Refuse a write of `new_size` bytes to `rel` (now `old_size`, None: absent)
        that would pass a quota."""
        kind = kind_of(rel)
        if kind == "index":
            return
        grow = new_size - (old_size or 0)
        new_file = old_size is None
        u = self.usage()
        if kind == "log":
            limit = quotas.max_log_bytes
            if limit and grow > 0 and u.log_bytes + grow > limit:
                raise QuotaExceeded(
                    f"the ops log is at its quota of {limit} bytes (quotas.max_log_bytes); "
                    "`memagent log --prune N` drops old segments"
                )
            return
        if quotas.max_bytes and grow > 0 and u.bytes + grow > quotas.max_bytes:
            raise QuotaExceeded(
                f"memory is at its quota of {quotas.max_bytes} bytes (using {u.bytes}); "
                "delete something first (quotas.max_bytes)"
            )
        if new_file and kind == "chunk" and quotas.max_chunks and u.chunks >= quotas.max_chunks:
            raise QuotaExceeded(f"memory holds {u.chunks} chunks, its quota (quotas.max_chunks)")
        if new_file and kind == "note" and quotas.max_notes and u.notes >= quotas.max_notes:
            raise QuotaExceeded(f"the vault holds {u.notes} notes, its quota (quotas.max_notes)")
        if quotas.max_log_bytes and u.log_bytes >= quotas.max_log_bytes:
            raise QuotaExceeded(
                f"the ops log is at its quota of {quotas.max_log_bytes} bytes "
                "(quotas.max_log_bytes); `memagent log --prune N` drops old segments"
            )

    def wrote(self, rel: str, old_size: int | None, new_size: int | None) -> None:
        """Account a finished write (`new_size` None: a delete)."""
        with self._guard:
            if self._usage is None:
                return
            kind = kind_of(rel)
            add(self._usage, kind, (new_size or 0) - (old_size or 0), 0)
            if old_size is None and new_size is not None:
                add(self._usage, kind, 0, +1)
            elif old_size is not None and new_size is None:
                add(self._usage, kind, 0, -1)


_TRACKERS: dict[Path, Tracker] = {}
_TRACKERS_GUARD = threading.Lock()


def tracker(root: Path) -> Tracker:
    with _TRACKERS_GUARD:
        t = _TRACKERS.get(root)
        if t is None:
            t = _TRACKERS[root] = Tracker(root)
        return t
