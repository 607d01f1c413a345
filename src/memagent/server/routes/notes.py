"""`/v1/vault`: the user's markdown notes — read, list, write, delete, run actions."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi import Path as PathParam
from pydantic import BaseModel, ConfigDict, Field, model_validator

from memagent.core import InvalidInput
from memagent.core.jsontext import JsonObject
from memagent.server._admission import RouteClass, admits
from memagent.server._context import CallerDep

router = APIRouter(prefix="/v1/vault", tags=["vault"])

NotePath = Annotated[
    str,
    PathParam(
        min_length=1, max_length=1024, description="Vault-relative path, e.g. entities/jane.md"
    ),
]


class NoteListing(BaseModel):
    path: str
    entries: list[str] = Field(description="Vault-relative; folders end in '/'.")
    truncated: bool


class Note(BaseModel):
    path: str
    content: str


class NoteWrite(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    content: str = Field(description="The note's whole new content (markdown).")


class NoteWritten(BaseModel):
    path: str
    created: bool
    bytes: int | None = None
    changed: bool = True


class NoteDeleted(BaseModel):
    path: str
    deleted: bool


class ActionsRequest(BaseModel):
    """Either `actions` (a JSON array of action objects) or `text` holding
    `<actions>[…]</actions>` (an LLM's raw reply)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    actions: list[JsonObject] | None = Field(default=None, max_length=100)
    text: str | None = None

    @model_validator(mode="after")
    def _one_of(self) -> ActionsRequest:
        if (self.actions is None) == (self.text is None):
            raise ValueError("give exactly one of 'actions' or 'text'")
        return self


class ActionResult(BaseModel):
    model_config = ConfigDict(extra="allow")

    index: int
    action: str
    ok: bool
    value: Any = None
    error: str | None = None
    assign_to: str | None = None


class ActionsResult(BaseModel):
    ok: bool
    succeeded: int
    failed: int
    results: list[ActionResult]


@router.get("/notes", response_model=NoteListing, summary="List notes")
@admits(RouteClass.READ)
def list_notes(
    caller: CallerDep,
    path: Annotated[str, Query(max_length=1024, description="Folder to list ('' = root).")] = "",
    recursive: bool = True,
) -> NoteListing:
    listing = caller.memory.vault.list_dir(path, recursive=recursive)
    return NoteListing.model_validate(listing.to_json())


@router.get("/notes/{path:path}", response_model=Note, summary="Read a note")
@admits(RouteClass.READ)
def read_note(path: NotePath, caller: CallerDep) -> Note:
    vault = caller.memory.vault
    return Note(path=vault.locate(path).rel, content=vault.read(path))


@router.put("/notes/{path:path}", response_model=NoteWritten, summary="Create or replace a note")
@admits(RouteClass.WRITE)
def write_note(path: NotePath, body: NoteWrite, caller: CallerDep) -> NoteWritten:
    return NoteWritten.model_validate(caller.memory.write_note(path, body.content))


@router.delete("/notes/{path:path}", response_model=NoteDeleted, summary="Delete a note")
@admits(RouteClass.WRITE)
def delete_note(path: NotePath, caller: CallerDep) -> NoteDeleted:
    return NoteDeleted.model_validate(caller.memory.delete_note(path))


@router.post("/actions", response_model=ActionsResult, summary="Run JSON vault actions")
@admits(RouteClass.SEARCH)
def run_actions(body: ActionsRequest, caller: CallerDep) -> ActionsResult:
    if body.text is not None:
        result = caller.memory.run_actions(body.text)
    elif body.actions is not None:
        result = caller.memory.run_actions(body.actions)
    else:  # the validator makes this unreachable; keep mypy and readers sure
        raise InvalidInput("give 'actions' or 'text'")
    return ActionsResult.model_validate(result)
