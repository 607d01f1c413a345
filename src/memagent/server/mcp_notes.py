"""MCP tools on the vault's notes beyond read/write: edit_note, move_note,
delete_note, list_directory.

Every write goes through the vault's own operations (`Vault.update`, `append`,
`create`, `delete`, or `Memory.write_note`) under the memory home's lock, so MCP
edits are atomic, size-checked, confined to the vault and logged exactly like
JSON actions and HTTP edits. A refused edit writes nothing.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from memagent.api import Memory
from memagent.core import Conflict, InvalidInput, NotFound
from memagent.server.mcp_common import Tool, ToolCall

MAX_PATH_CHARS = 1024
MAX_TEXT_CHARS = 2_000_000
"""Argument caps checked before any work; the vault's byte limit still applies."""

NotePath = Annotated[
    str,
    Field(min_length=1, max_length=MAX_PATH_CHARS, description="Vault path, e.g. entities/jane.md"),
]
Text = Annotated[str, Field(max_length=MAX_TEXT_CHARS)]

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t#]*$")
_FENCE = ("```", "~~~")


class EditedNote(BaseModel):
    path: str
    operation: str
    replaced: int = Field(description="Occurrences replaced (find_replace), else 0.")
    changed: bool


class MovedNote(BaseModel):
    source: str
    destination: str


class DeletedNote(BaseModel):
    path: str
    deleted: bool = True


class DirectoryEntry(BaseModel):
    path: str
    kind: Literal["file", "folder"]


class DirectoryListing(BaseModel):
    path: str
    entries: list[DirectoryEntry]
    truncated: bool


def _headings(lines: list[str]) -> list[tuple[int, int, str]]:
    """(line number, level, title) of each markdown heading outside code fences."""
    out: list[tuple[int, int, str]] = []
    fenced = False
    for i, line in enumerate(lines):
        if line.lstrip().startswith(_FENCE):
            fenced = not fenced
            continue
        m = None if fenced else _HEADING.match(line.rstrip("\r\n"))
        if m:
            out.append((i, len(m.group(1)), m.group(2).strip()))
    return out


def replace_section(text: str, heading: str, body: str, rel: str) -> str:
    """`text` with the body under `heading` (up to the next heading of the same or a
    higher level) replaced by `body`; `NotFound` naming the headings there are."""
    wanted = " ".join(heading.lstrip("#").split()).casefold()
    if not wanted:
        raise InvalidInput("section must name a heading, e.g. 'Work'")
    lines = text.splitlines(keepends=True)
    found = _headings(lines)
    for n, (start, level, title) in enumerate(found):
        if " ".join(title.split()).casefold() != wanted:
            continue
        end = next((i for i, lv, _ in found[n + 1 :] if lv <= level), len(lines))
        head = "".join(lines[: start + 1])
        if not head.endswith("\n"):
            head += "\n"
        new_body = body if not body or body.endswith("\n") else body + "\n"
        tail = "".join(lines[end:])
        if tail and new_body and not new_body.endswith("\n\n"):
            new_body += "\n"
        return head + new_body + tail
    have = ", ".join(f"'{t}'" for _, _, t in found[:8]) or "none"
    raise NotFound(f"'{rel}' has no heading '{heading.strip()}' (its headings: {have})")


def edit(
    memory: Memory,
    path: str,
    operation: str,
    content: str,
    find: str | None,
    section: str | None,
    occurrences: int,
) -> EditedNote:
    """Apply one edit to a note under the vault's lock (see `register`)."""
    vault = memory.vault
    if operation == "append":
        vault.append(path, content)
        return EditedNote(path=vault.normalize(path), operation=operation, replaced=0, changed=True)
    with vault.lock():
        rel = vault.locate(path).rel
        text = vault.read(path)
        replaced = 0
        if operation == "prepend":
            sep = "" if not text or content.endswith("\n") else "\n"
            new = content + sep + text
        elif operation == "find_replace":
            if not find:
                raise InvalidInput("find_replace needs 'find': the exact text to replace")
            replaced = text.count(find)
            if replaced != occurrences:
                raise Conflict(
                    f"'{find[:60]}' occurs {replaced} time(s) in '{rel}', not {occurrences}; "
                    "read_note it and copy the exact text, or set occurrences"
                )
            new = text.replace(find, content)
        else:
            if not section:
                raise InvalidInput("replace_section needs 'section': the heading to replace under")
            new = replace_section(text, section, content, rel)
        if new == text:
            return EditedNote(path=rel, operation=operation, replaced=replaced, changed=False)
        if operation == "find_replace" and replaced == 1:
            vault.update(path, find or "", content)
        else:
            memory.write_note(path, new)
    return EditedNote(path=rel, operation=operation, replaced=replaced, changed=True)


def move(memory: Memory, source: str, destination: str) -> MovedNote:
    """Move a note: create at `destination` (refused if anything is there), then
    delete `source`, both under one hold of the lock; undone if the delete fails."""
    vault = memory.vault
    with vault.lock():
        src, dst = vault.locate(source), vault.locate(destination)
        if src.rel == dst.rel:
            raise InvalidInput(f"'{src.rel}' is already there; give another destination")
        text = vault.read(source)
        vault.create(destination, text)
        try:
            vault.delete(source)
        except BaseException:
            vault.delete(destination)
            raise
    return MovedNote(source=src.rel, destination=dst.rel)


def listing(memory: Memory, path: str, depth: int) -> DirectoryListing:
    """Entries under `path`, at most `depth` folders deep, folders marked."""
    raw = memory.vault.list_dir(path, recursive=depth > 1)
    base = raw.path.strip("/")
    base_depth = base.count("/") + 1 if base else 0
    entries = []
    for entry in raw.entries:
        rel = entry.rstrip("/")
        if rel.count("/") - base_depth >= depth:
            continue
        kind: Literal["file", "folder"] = "folder" if entry.endswith("/") else "file"
        entries.append(DirectoryEntry(path=rel, kind=kind))
    return DirectoryListing(path=raw.path, entries=entries, truncated=raw.truncated)


class EditNoteArgs(BaseModel):
    path: NotePath
    operation: Annotated[
        Literal["find_replace", "append", "prepend", "replace_section"],
        Field(description="What to do with `content`."),
    ]
    content: Annotated[Text, Field(description="The new text (replacement, or added).")]
    find: Annotated[
        str | None,
        Field(min_length=1, max_length=MAX_TEXT_CHARS, description="find_replace: old text."),
    ] = None
    section: Annotated[
        str | None,
        Field(min_length=1, max_length=300, description="replace_section: the heading."),
    ] = None
    occurrences: Annotated[
        int, Field(ge=1, le=1000, description="find_replace: how many times `find` occurs.")
    ] = 1


def edit_note(call: ToolCall, args: EditNoteArgs) -> EditedNote:
    """Edit a note in place: find_replace (exact text, every occurrence, refused
    unless it occurs `occurrences` times), append, prepend, or replace_section
    (the text under a markdown heading, up to the next heading of its level)."""
    return edit(
        call.memory,
        args.path,
        args.operation,
        args.content,
        args.find,
        args.section,
        args.occurrences,
    )


class MoveNoteArgs(BaseModel):
    source: NotePath
    destination: Annotated[
        str, Field(min_length=1, max_length=MAX_PATH_CHARS, description="The new vault path.")
    ]


def move_note(call: ToolCall, args: MoveNoteArgs) -> MovedNote:
    """Move or rename a note (refused when the destination exists)."""
    return move(call.memory, args.source, args.destination)


class DeleteNoteArgs(BaseModel):
    path: NotePath


def delete_note(call: ToolCall, args: DeleteNoteArgs) -> DeletedNote:
    """Delete a note (its text stays in the memory home's ops log)."""
    return DeletedNote(path=call.memory.delete_note(args.path)["path"])


class ListDirectoryArgs(BaseModel):
    path: Annotated[
        str, Field(max_length=MAX_PATH_CHARS, description="A vault folder ('' is the root).")
    ] = ""
    depth: Annotated[int, Field(ge=1, le=10, description="How many folders deep.")] = 1


def list_directory(call: ToolCall, args: ListDirectoryArgs) -> DirectoryListing:
    """List the notes and folders of a vault folder."""
    return listing(call.memory, args.path, args.depth)


TOOLS: list[Tool] = [edit_note, move_note, delete_note, list_directory]
