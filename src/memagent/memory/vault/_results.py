"""What the vault's operations return: one small frozen value per operation.

Each becomes JSON (`to_json`) where it leaves Python: the result of a JSON
action the model reads, the value sandboxed code gets, an HTTP or MCP body.
The JSON shapes are the vault's contract (key order included, since the model
reads them); the attributes are for Python callers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


class VaultResult:
    """Base of every vault result: a value with a JSON form."""

    __slots__ = ()

    def to_json(self) -> Mapping[str, object]:
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class FileCreated(VaultResult):
    """`create`: the new file and its size in bytes."""

    path: str
    size: int

    def to_json(self) -> dict[str, str | int]:
        return {"path": self.path, "bytes": self.size}


@dataclass(frozen=True, slots=True)
class FileUpdated(VaultResult):
    """`update`: how often the old text occurred (the first one was replaced)."""

    path: str
    size: int
    occurrences: int
    replaced: int = 1

    def to_json(self) -> dict[str, str | int]:
        return {
            "path": self.path,
            "bytes": self.size,
            "occurrences": self.occurrences,
            "replaced": self.replaced,
        }


@dataclass(frozen=True, slots=True)
class FileAppended(VaultResult):
    """`append`: the file's new size, and whether the append created it."""

    path: str
    size: int
    created: bool

    def to_json(self) -> dict[str, str | int | bool]:
        return {"path": self.path, "bytes": self.size, "created": self.created}


@dataclass(frozen=True, slots=True)
class FileDeleted(VaultResult):
    """`delete`: the file that is gone."""

    path: str
    deleted: bool = True

    def to_json(self) -> dict[str, str | bool]:
        return {"path": self.path, "deleted": self.deleted}


@dataclass(frozen=True, slots=True)
class DirMade(VaultResult):
    """`mkdir`: the folder (ending in '/'), and whether it was new."""

    path: str
    created: bool

    def to_json(self) -> dict[str, str | bool]:
        return {"path": self.path, "created": self.created}


@dataclass(frozen=True, slots=True)
class Listing(VaultResult):
    """`list_dir`: vault-relative entries, folders ending in '/'; `truncated` when
    there were more than `limits.max_list_entries`."""

    path: str
    entries: list[str]
    truncated: bool

    @property
    def files(self) -> list[str]:
        """The entries that are files."""
        return [e for e in self.entries if not e.endswith("/")]

    def to_json(self) -> dict[str, str | list[str] | bool]:
        return {"path": self.path, "entries": list(self.entries), "truncated": self.truncated}


@dataclass(frozen=True, slots=True)
class SearchMatch:
    """One matching line (its text cut to a snippet)."""

    path: str
    line: int
    text: str

    def to_json(self) -> dict[str, str | int]:
        return {"path": self.path, "line": self.line, "text": self.text}


@dataclass(frozen=True, slots=True)
class SearchResults(VaultResult):
    """`search`: the matching lines in vault order; `truncated` when capped."""

    matches: list[SearchMatch]
    truncated: bool

    def to_json(self) -> dict[str, list[dict[str, str | int]] | bool]:
        return {"matches": [m.to_json() for m in self.matches], "truncated": self.truncated}


@dataclass(frozen=True, slots=True)
class LinkedNote(VaultResult):
    """`go_to_link`: the note a wikilink resolves to, or the section or block it
    names (`content`); `other_matches` lists other notes the link could mean."""

    path: str
    title: str | None
    heading: str | None
    block: str | None
    alias: str | None
    content: str
    other_matches: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, str | list[str] | None]:
        out: dict[str, str | list[str] | None] = {
            "path": self.path,
            "title": self.title,
            "heading": self.heading,
            "block": self.block,
            "alias": self.alias,
            "content": self.content,
        }
        if self.other_matches:
            out["other_matches"] = list(self.other_matches)
        return out
