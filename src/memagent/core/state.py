"""Agent state that is not memory (conversations, traces) as named documents:
`state/<name>` files of a memory home (`FileState`), or rows of the shared
database (`memagent.postgres.PgState`), behind one small interface (`State`).

Names are internal (`conversations/<id>.json`, `traces/<stamp>-….json`), made
by the code from validated ids, never taken from a request as they are.
"""

from __future__ import annotations

from typing import Protocol

from memagent.core.errors import NotFound
from memagent.core.home import MemoryHome
from memagent.core.storage import sha256_hex


class State(Protocol):
    def read(self, name: str) -> bytes:
        """The document's bytes; `NotFound` when there is none."""
        ...

    def write(self, name: str, data: bytes, *, actor: str, op: str) -> None:
        """Create or replace the document (atomically)."""
        ...

    def swap(self, name: str, data: bytes, expected: str | None, *, actor: str, op: str) -> bool:
        """Create or replace the document only while its sha256 is `expected` (None:
        while there is none), as one atomic step; False, writing nothing, when
        another writer changed it meanwhile."""
        ...

    def names(self, folder: str) -> list[str]:
        """The names of the documents directly in `folder`, sorted."""
        ...

    def delete(self, name: str, *, actor: str, op: str) -> None:
        """Remove the document; `NotFound` when there is none."""
        ...


class FileState:
    """State documents as files under `<home>/state/`, written through `Storage`."""

    def __init__(self, home: MemoryHome) -> None:
        self.home = home
        self.dir = home.layout.state

    def read(self, name: str) -> bytes:
        try:
            return (self.dir / name).read_bytes()
        except FileNotFoundError:
            raise NotFound(f"no state/{name}") from None

    def write(self, name: str, data: bytes, *, actor: str, op: str) -> None:
        self.home.storage.write_bytes(self.dir / name, data, actor=actor, op=op)

    def swap(self, name: str, data: bytes, expected: str | None, *, actor: str, op: str) -> bool:
        with self.home.storage.lock():  # serializes writers of this home, all processes
            try:
                current: str | None = sha256_hex((self.dir / name).read_bytes())
            except FileNotFoundError:
                current = None
            if current != expected:
                return False
            self.home.storage.write_bytes(self.dir / name, data, actor=actor, op=op)
            return True

    def delete(self, name: str, *, actor: str, op: str) -> None:
        try:
            self.home.storage.delete(self.dir / name, actor=actor, op=op)
        except FileNotFoundError:
            raise NotFound(f"no state/{name}") from None

    def names(self, folder: str) -> list[str]:
        path = self.dir / folder
        if not path.is_dir():
            return []
        return sorted(
            f"{folder}/{p.name}" for p in path.iterdir() if p.is_file() and p.suffix == ".json"
        )
