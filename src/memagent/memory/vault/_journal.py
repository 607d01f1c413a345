"""`JournaledVault`: a vault whose writes since `begin` can be undone at once.

The journal sits on the vault's storage hooks (`_write`, `_remove`, `_make_dir`,
`_remove_dir`), the few primitives every operation's change goes through, not
on the public methods: whatever an operation does (one written today or one
added later), its changes are journaled and `rollback` undoes them. Mixed in
before a backend's class (`memagent.postgres.vault.PgJournaledVault`), it journals
that backend the same way.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from memagent.core import MemagentError
from memagent.memory.vault._paths import Located
from memagent.memory.vault._vault import Vault


class JournaledVault(Vault):
    """A vault that remembers what each file held before its first change since
    `begin`, and the folders made (by `mkdir`, or on the way to a new file) or
    removed since, so `rollback` can put every one back: a failed batch is never
    left half-applied."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("actor", "agent")
        super().__init__(*args, **kwargs)
        self.journal: dict[str, bytes | None] = {}
        self.made_dirs: list[str] = []
        self.removed_dirs: list[str] = []

    def begin(self) -> None:
        """Start a new batch: forget what was journaled before."""
        self.journal = {}
        self.made_dirs = []
        self.removed_dirs = []

    def _remember(self, loc: Located) -> None:
        """Note what `loc` holds now, before its first change in this batch."""
        if not loc.rel or loc.rel in self.journal:
            return
        try:
            self.journal[loc.rel] = self._read_bytes(loc) if loc.kind == "file" else None
        except MemagentError:
            return  # unreadable (too big): an operation refuses to change such a file

    def _remember_new_dirs(self, rel: str) -> None:
        """Note the folders a write to `rel` (or making the folder `rel`) creates:
        its missing ancestors, outermost first, so `rollback` removes them too."""
        parts = rel.split("/")
        missing = False
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth])
            if not missing:
                try:
                    missing = self.locate(folder).kind is None
                except MemagentError:
                    return  # the write itself will fail with the same error
            if missing and folder not in self.made_dirs:
                self.made_dirs.append(folder)

    # -- the storage hooks, journaled ----------------------------------------------------
    def _write(self, loc: Located, data: bytes, op: str, meta: Mapping[str, str] | None) -> None:
        if loc.kind is None:
            self._remember_new_dirs(loc.rel)
        self._remember(loc)
        super()._write(loc, data, op, meta)

    def _remove(self, loc: Located, op: str, meta: Mapping[str, str] | None) -> None:
        self._remember(loc)
        super()._remove(loc, op, meta)

    def _make_dir(self, loc: Located) -> None:
        self._remember_new_dirs(loc.rel)
        super()._make_dir(loc)
        self.made_dirs.append(loc.rel)

    def _remove_dir(self, loc: Located, op: str) -> None:
        super()._remove_dir(loc, op)
        self.removed_dirs.append(loc.rel)

    # -- undoing -------------------------------------------------------------------------
    def rollback(self) -> list[str]:
        """Put every file changed since `begin` back as it was, remove the folders
        made and restore the folders removed; returns the files' paths. The undo
        goes through the backend's own hooks (logged as `rollback`), unjournaled."""
        restored: list[str] = []
        with self._lock():
            for rel in reversed(self.removed_dirs):
                with contextlib.suppress(OSError, MemagentError):
                    super()._make_dir(self.locate(rel))
            for rel, before in reversed(list(self.journal.items())):
                loc = self.locate(rel)
                now = self._read_bytes(loc) if loc.kind == "file" else None
                if now == before:
                    continue
                if before is None:
                    super()._remove(loc, "rollback", None)
                else:
                    super()._write(loc, before, "rollback", None)
                restored.append(rel)
            for rel in reversed(self.made_dirs):
                with contextlib.suppress(OSError, MemagentError):
                    super()._remove_dir(self.locate(rel), "rollback")
        self.begin()
        return restored
