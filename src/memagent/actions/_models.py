"""The action schemas: one pydantic model per action, a union discriminated on
`action`. Every field except `action` and `assign_to` may instead hold
`{"$var": "name"}` (or `{"$var": "name.key"}`), the value of an earlier action
that had `"assign_to": "name"`."""

from __future__ import annotations

import json
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

VAR_NAME = r"^[A-Za-z_][A-Za-z0-9_]{0,63}$"
VAR_REF = r"^[A-Za-z_][A-Za-z0-9_]{0,63}(\.[A-Za-z0-9_]{1,64}){0,8}$"


class VarRef(BaseModel):
    """`{"$var": "name"}`: the value an earlier action assigned to `name`;
    `name.key` picks a key of an object value (or an index of a list)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)

    var: str = Field(alias="$var", pattern=VAR_REF)

    @property
    def name(self) -> str:
        return self.var.split(".", 1)[0]

    @property
    def keys(self) -> list[str]:
        return self.var.split(".")[1:]


Str = str | VarRef
Bool = bool | VarRef
Int = int | VarRef

PathField = Annotated[Str, Field(description="Path relative to the vault root, e.g. 'user.md'.")]
DirField = Annotated[Str, Field(description="Folder relative to the vault root; '' is the root.")]


class BaseAction(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    example: ClassVar[dict[str, Any]] = {}

    assign_to: str | None = Field(
        default=None,
        pattern=VAR_NAME,
        description='Name this result; later actions use it as {"$var": "name"}.',
    )

    def fields(self) -> dict[str, Any]:
        """The action's arguments (everything but `action` and `assign_to`)."""
        return {
            name: getattr(self, name)
            for name in type(self).model_fields
            if name not in ("action", "assign_to")
        }

    @classmethod
    def example_json(cls) -> str:
        return json.dumps(cls.example, ensure_ascii=False)


class ReadFile(BaseAction):
    """Return a file's text."""

    example: ClassVar[dict[str, Any]] = {"action": "read_file", "path": "user.md"}
    action: Literal["read_file"]
    path: PathField


class CreateFile(BaseAction):
    """Create a new file (folders are created too); fails if it exists."""

    example: ClassVar[dict[str, Any]] = {
        "action": "create_file",
        "path": "entities/jane_doe.md",
        "content": "# Jane Doe\n\nColleague on the Atlas project.\n",
    }
    action: Literal["create_file"]
    path: PathField
    content: Str


class UpdateFile(BaseAction):
    """Replace the first occurrence of old_content (exact text) with new_content."""

    example: ClassVar[dict[str, Any]] = {
        "action": "update_file",
        "path": "user.md",
        "old_content": "## People\n",
        "new_content": "## People\n- [[Jane Doe]], colleague\n",
    }
    action: Literal["update_file"]
    path: PathField
    old_content: Str
    new_content: Str


class AppendFile(BaseAction):
    """Append text to a file on a new line (creates the file if missing)."""

    example: ClassVar[dict[str, Any]] = {
        "action": "append_file",
        "path": "user.md",
        "content": "- Prefers tea over coffee\n",
    }
    action: Literal["append_file"]
    path: PathField
    content: Str


class DeleteFile(BaseAction):
    """Delete a file."""

    example: ClassVar[dict[str, Any]] = {"action": "delete_file", "path": "entities/old.md"}
    action: Literal["delete_file"]
    path: PathField


class CheckFileExists(BaseAction):
    """true if the path is an existing file."""

    example: ClassVar[dict[str, Any]] = {
        "action": "check_file_exists",
        "path": "entities/jane_doe.md",
    }
    action: Literal["check_file_exists"]
    path: PathField


class CreateDir(BaseAction):
    """Create a folder (and its parents); an existing folder is fine."""

    example: ClassVar[dict[str, Any]] = {"action": "create_dir", "path": "projects"}
    action: Literal["create_dir"]
    path: PathField


class ListFiles(BaseAction):
    """List a folder's entries (folders end in '/')."""

    example: ClassVar[dict[str, Any]] = {"action": "list_files", "path": "entities"}
    action: Literal["list_files"]
    path: DirField = ""
    recursive: Bool = False


class CheckDirExists(BaseAction):
    """true if the path is an existing folder."""

    example: ClassVar[dict[str, Any]] = {"action": "check_dir_exists", "path": "entities"}
    action: Literal["check_dir_exists"]
    path: PathField


class GetSize(BaseAction):
    """A file's size in bytes."""

    example: ClassVar[dict[str, Any]] = {"action": "get_size", "path": "user.md"}
    action: Literal["get_size"]
    path: PathField


class GoToLink(BaseAction):
    """Resolve a [[wikilink]] and return the note (or the linked section)."""

    example: ClassVar[dict[str, Any]] = {"action": "go_to_link", "link": "[[Jane Doe#Work]]"}
    action: Literal["go_to_link"]
    link: Annotated[
        Str, Field(description="[[note]], [[folder/note]], [[note#heading]] or [[note|alias]]")
    ]


class SearchFiles(BaseAction):
    """Lines containing query (or matching it as a regex) in the vault's files."""

    example: ClassVar[dict[str, Any]] = {"action": "search_files", "query": "Atlas"}
    action: Literal["search_files"]
    query: Str
    path: DirField = ""
    regex: Bool = False
    case_sensitive: Bool = False
    max_results: Int | None = Field(default=None, description="Cap on matches returned.")


ACTION_MODELS: tuple[type[BaseAction], ...] = (
    ReadFile,
    CreateFile,
    UpdateFile,
    AppendFile,
    DeleteFile,
    CheckFileExists,
    CreateDir,
    ListFiles,
    CheckDirExists,
    GetSize,
    GoToLink,
    SearchFiles,
)
MODELS_BY_NAME: dict[str, type[BaseAction]] = {
    m.model_fields["action"].annotation.__args__[0]: m  # type: ignore[union-attr]
    for m in ACTION_MODELS
}

Action = Annotated[
    ReadFile
    | CreateFile
    | UpdateFile
    | AppendFile
    | DeleteFile
    | CheckFileExists
    | CreateDir
    | ListFiles
    | CheckDirExists
    | GetSize
    | GoToLink
    | SearchFiles,
    Field(discriminator="action"),
]
ActionList: TypeAdapter[list[Action]] = TypeAdapter(list[Action])


def action_json_schema() -> dict[str, Any]:
    """JSON Schema of a batch: an array of actions (for constrained decoding, docs)."""
    schema = ActionList.json_schema()
    schema["title"] = "memagent vault actions"
    schema["description"] = (
        "A JSON array of actions run in order on the markdown vault. Any field but "
        '"action" and "assign_to" may be {"$var": "name"}: the value of an earlier '
        'action that had "assign_to": "name".'
    )
    return schema
