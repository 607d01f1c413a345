"""The vault actions, each declared once: its model (the JSON the model writes:
fields, docstring, example), its function (what runs; its docstring is what
Python-mode code is told) and what it reads and writes (`_registry`).

A new action is a model and a function here, and the `Vault` method it calls
(`memagent.memory.vault`); the union, schemas, parser, plan steps, sandbox
functions and rollback all follow from the declaration.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field

from memagent.actions._models import BaseAction, Bool, DirField, Int, PathField, Str
from memagent.actions._registry import action
from memagent.core import InvalidInput
from memagent.memory.vault import (
    DirMade,
    FileAppended,
    FileCreated,
    FileDeleted,
    FileUpdated,
    LinkedNote,
    Listing,
    SearchResults,
    Vault,
)


class ReadFile(BaseAction):
    """Return a file's text."""

    example: ClassVar[dict[str, str]] = {"action": "read_file", "path": "user.md"}
    action: Literal["read_file"]
    path: PathField


@action(ReadFile, reads=("file:path", "names"))
def read_file(vault: Vault, *, path: str) -> str:
    """The text of a file in the vault."""
    return vault.read(path)


class CreateFile(BaseAction):
    """Create a new file (folders are created too); fails if it exists."""

    example: ClassVar[dict[str, str]] = {
        "action": "create_file",
        "path": "entities/jane_doe.md",
        "content": "# Jane Doe\n\nColleague on the Atlas project.\n",
    }
    action: Literal["create_file"]
    path: PathField
    content: Str


@action(CreateFile, writes=("file:path", "names"))
def create_file(vault: Vault, *, path: str, content: str) -> FileCreated:
    """Create a new file (and its folders); FileExistsError if it exists."""
    return vault.create(path, content)


class UpdateFile(BaseAction):
    """Replace the first occurrence of old_content (exact text) with new_content."""

    example: ClassVar[dict[str, str]] = {
        "action": "update_file",
        "path": "user.md",
        "old_content": "## People\n",
        "new_content": "## People\n- [[Jane Doe]], colleague\n",
    }
    action: Literal["update_file"]
    path: PathField
    old_content: Str
    new_content: Str


@action(UpdateFile, reads=("names",), writes=("file:path",))
def update_file(vault: Vault, *, path: str, old_content: str, new_content: str) -> FileUpdated:
    """Replace the first occurrence of old_content (exact text) with new_content."""
    return vault.update(path, old_content, new_content)


class AppendFile(BaseAction):
    """Append text to a file on a new line (creates the file if missing)."""

    example: ClassVar[dict[str, str]] = {
        "action": "append_file",
        "path": "user.md",
        "content": "- Prefers tea over coffee\n",
    }
    action: Literal["append_file"]
    path: PathField
    content: Str


@action(AppendFile, writes=("file:path", "names"))
def append_file(vault: Vault, *, path: str, content: str) -> FileAppended:
    """Append text on a new line (the file is created if missing)."""
    return vault.append(path, content)


class DeleteFile(BaseAction):
    """Delete a file."""

    example: ClassVar[dict[str, str]] = {"action": "delete_file", "path": "entities/old.md"}
    action: Literal["delete_file"]
    path: PathField


@action(DeleteFile, reads=("names",), writes=("file:path", "names"))
def delete_file(vault: Vault, *, path: str) -> FileDeleted:
    """Delete a file."""
    return vault.delete(path)


class CheckFileExists(BaseAction):
    """true if the path is an existing file."""

    example: ClassVar[dict[str, str]] = {
        "action": "check_file_exists",
        "path": "entities/jane_doe.md",
    }
    action: Literal["check_file_exists"]
    path: PathField


@action(CheckFileExists, reads=("file:path",))
def check_file_exists(vault: Vault, *, path: str) -> bool:
    """True if the path is an existing file."""
    return vault.exists(path)


class CreateDir(BaseAction):
    """Create a folder (and its parents); an existing folder is fine."""

    example: ClassVar[dict[str, str]] = {"action": "create_dir", "path": "projects"}
    action: Literal["create_dir"]
    path: PathField


@action(CreateDir, writes=("tree:path", "names"))
def create_dir(vault: Vault, *, path: str) -> DirMade:
    """Create a folder (and its parents); an existing folder is fine."""
    return vault.mkdir(path)


class ListFiles(BaseAction):
    """List a folder's entries (folders end in '/')."""

    example: ClassVar[dict[str, str]] = {"action": "list_files", "path": "entities"}
    action: Literal["list_files"]
    path: DirField = ""
    recursive: Bool = False


@action(ListFiles, reads=("walk:path",))
def list_files(vault: Vault, *, path: str = "", recursive: bool = False) -> Listing:
    """A folder's entries ({"path", "entries", "truncated"}; folders end in '/')."""
    return vault.list_dir(path, recursive=recursive)


class CheckDirExists(BaseAction):
    """true if the path is an existing folder."""

    example: ClassVar[dict[str, str]] = {"action": "check_dir_exists", "path": "entities"}
    action: Literal["check_dir_exists"]
    path: PathField


@action(CheckDirExists, reads=("tree:path",))
def check_dir_exists(vault: Vault, *, path: str) -> bool:
    """True if the path is an existing folder."""
    return vault.dir_exists(path)


class GetSize(BaseAction):
    """A file's size in bytes."""

    example: ClassVar[dict[str, str]] = {"action": "get_size", "path": "user.md"}
    action: Literal["get_size"]
    path: PathField


@action(GetSize, reads=("file:path", "names"))
def get_size(vault: Vault, *, path: str) -> int:
    """A file's size in bytes."""
    return vault.size(path)


class GoToLink(BaseAction):
    """Resolve a [[wikilink]] and return the note (or the linked section)."""

    example: ClassVar[dict[str, str]] = {"action": "go_to_link", "link": "[[Jane Doe#Work]]"}
    action: Literal["go_to_link"]
    link: Annotated[
        Str, Field(description="[[note]], [[folder/note]], [[note#heading]] or [[note|alias]]")
    ]


@action(GoToLink, reads=("vault",))
def go_to_link(vault: Vault, *, link: str) -> LinkedNote:
    """Resolve a [[wikilink]]: the note (or section) with its path and title."""
    return vault.go_to_link(link)


class SearchFiles(BaseAction):
    """Lines containing query (or matching it as a regex) in the vault's files."""

    example: ClassVar[dict[str, str]] = {"action": "search_files", "query": "Atlas"}
    action: Literal["search_files"]
    query: Str
    path: DirField = ""
    regex: Bool = False
    case_sensitive: Bool = False
    max_results: Int | None = Field(default=None, description="Cap on matches returned.")


@action(SearchFiles, reads=("walk:path",))
def search_files(
    vault: Vault,
    *,
    query: str,
    path: str = "",
    regex: bool = False,
    case_sensitive: bool = False,
    max_results: int | None = None,
) -> SearchResults:
    """Lines containing query (or matching it as a regex): {"matches", "truncated"}."""
    if max_results is not None and max_results < 1:
        raise InvalidInput("max_results must be at least 1")
    return vault.search(
        query, path=path, regex_mode=regex, case_sensitive=case_sensitive, max_results=max_results
    )
