"""The resource file: `_metadata` plus sections that hold lists of items.

```json
{"_metadata": {"resource_id": "user_food_prefs", "version": 3, "last_updated": "…",
               "tags": ["food", "drink"], "description": "…", "exclusive": [["food.likes",
               "food.dislikes"]]},
 "food": {"likes": [{"item": "kung_pao_chicken", "display": "Kung pao chicken",
                     "added": "…", "updated": null, "expiry": null}], "dislikes": []}}
```

A section is either a list of items or an object of further sections, so a
dotted path (`food.likes`) names one list. `exclusive` lists groups of paths an
item may sit in only one of (likes vs dislikes): the handler moves, never
duplicates, an item across them.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Annotated, Any, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, StringConstraints
from typing_extensions import TypeAliasType

MAX_KEY_CHARS = 200
MAX_DISPLAY_CHARS = 500
MAX_NOTE_CHARS = 2000
MAX_TAGS = 50

SECTION_NAME = r"^[A-Za-z0-9_][A-Za-z0-9_-]{0,63}$"
SECTION_NAME_RE = re.compile(SECTION_NAME)
PATH = r"^[A-Za-z0-9_][A-Za-z0-9_-]{0,63}(\.[A-Za-z0-9_][A-Za-z0-9_-]{0,63}){0,7}$"
PATH_RE = re.compile(PATH)
RESOURCE_ID = r"^[a-z0-9][a-z0-9_]{0,63}$"
RESOURCE_ID_RE = re.compile(RESOURCE_ID)
FILE_NAME = r"^resource_[a-z0-9][a-z0-9_]{0,63}\.json$"
FILE_NAME_RE = re.compile(FILE_NAME)

SectionName = Annotated[str, StringConstraints(pattern=SECTION_NAME)]
SectionPath = Annotated[str, StringConstraints(pattern=PATH)]
Tag = Annotated[str, StringConstraints(min_length=1, max_length=64, strip_whitespace=True)]


class Item(BaseModel):
    """One fact. `item` is the unique key within its list; `added`/`updated` are
    set by Python; an item whose `expiry` day has passed is never returned."""

    model_config = ConfigDict(extra="forbid")

    item: Annotated[str, StringConstraints(min_length=1, max_length=MAX_KEY_CHARS)]
    display: Annotated[str, StringConstraints(min_length=1, max_length=MAX_DISPLAY_CHARS)]
    added: str
    updated: str | None = None
    expiry: date | None = None
    note: Annotated[str, StringConstraints(max_length=MAX_NOTE_CHARS)] | None = None

    def expired(self, today: date) -> bool:
        """Valid through its expiry day; expired from the day after."""
        return self.expiry is not None and self.expiry < today

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class Metadata(BaseModel):
    model_config = ConfigDict(extra="forbid")

    resource_id: Annotated[str, StringConstraints(pattern=RESOURCE_ID)]
    version: int = Field(ge=1)
    last_updated: str
    tags: list[Tag] = Field(default_factory=list, max_length=MAX_TAGS)
    description: Annotated[str, StringConstraints(max_length=2000)] = ""
    exclusive: list[list[SectionPath]] = Field(default_factory=list)


Section = TypeAliasType("Section", "list[Item] | dict[SectionName, Section]")
SectionTree: TypeAlias = "dict[str, list[Item] | SectionTree]"
"""A loaded resource's sections: a name holds a list of items or further sections."""


class ItemChange(BaseModel):
    """One item-level change of a profile write, as the ops log records it (what
    `history` lists and `undo` reverts): the item before and after (None: absent)."""

    model_config = ConfigDict(extra="ignore")

    op: str
    """`append`, `update`, `remove` or `expire`."""
    path: str
    item: str
    index: int | None = None
    """Where a removed item stood in its list (undo puts it back there)."""
    before: Item | None = None
    after: Item | None = None
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"op": self.op, "path": self.path, "item": self.item}
        if self.index is not None:
            out["index"] = self.index
        out["before"] = self.before.to_json() if self.before is not None else None
        out["after"] = self.after.to_json() if self.after is not None else None
        if self.note is not None:
            out["note"] = self.note
        return out


class WriteMeta(BaseModel):
    """What a profile write records in the ops log (`meta`): its batch, the file,
    the item-level changes, and what it came from or undoes."""

    batch: str
    file: str
    changes: list[ItemChange]
    source: str | None = None
    undoes: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"batch": self.batch}
        if self.undoes is not None:
            out["undoes"] = self.undoes
        out["file"] = self.file
        out["changes"] = [c.to_json() for c in self.changes]
        if self.source is not None:
            out["source"] = self.source
        return out


class ResourceFile(BaseModel):
    """The JSON Schema of a `resource_<id>.json` file (validation is done by
    `memagent.memory.profile.store`, which reports file and line)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, title="ProfileResource")
    __pydantic_extra__: dict[SectionName, Section] = Field(init=False)

    metadata: Metadata = Field(alias="_metadata")


def file_name(resource_id: str) -> str:
    return f"resource_{resource_id}.json"


def resource_id_of(name: str) -> str:
    """Accept `food_prefs`, `resource_food_prefs` or `resource_food_prefs.json`."""
    stem = name.removesuffix(".json").removeprefix("resource_")
    return stem


class Resource:
    """A loaded resource: its metadata and its section tree (items as `Item`s)."""

    def __init__(self, name: str, metadata: Metadata, sections: SectionTree) -> None:
        self.name = name
        self.metadata = metadata
        self.sections = sections

    def copy(self) -> Resource:
        return Resource(self.name, self.metadata.model_copy(deep=True), _copy_tree(self.sections))

    def paths(self) -> list[str]:
        """Every dotted path that names a list of items, in file order."""
        out: list[str] = []
        _collect_paths(self.sections, "", out)
        return out

    def items_at(self, path: str) -> list[Item] | None:
        node: list[Item] | SectionTree = self.sections
        for part in path.split("."):
            if not isinstance(node, dict) or part not in node:
                return None
            node = node[part]
        return node if isinstance(node, list) else None

    def iter_lists(self) -> list[tuple[str, list[Item]]]:
        return [(p, lst) for p in self.paths() if (lst := self.items_at(p)) is not None]

    def to_json(self, *, today: date | None = None) -> dict[str, Any]:
        """The file's content; with `today`, expired items are left out."""
        out: dict[str, Any] = {"_metadata": self.metadata.model_dump(mode="json")}
        out.update(_dump_tree(self.sections, today))
        return out


def _copy_tree(node: SectionTree) -> SectionTree:
    out: SectionTree = {}
    for key, value in node.items():
        if isinstance(value, list):
            out[key] = [i.model_copy() for i in value]
        else:
            out[key] = _copy_tree(value)
    return out


def _collect_paths(node: SectionTree, prefix: str, out: list[str]) -> None:
    for key, value in node.items():
        path = f"{prefix}{key}"
        if isinstance(value, list):
            out.append(path)
        else:
            _collect_paths(value, path + ".", out)


def _dump_tree(node: SectionTree, today: date | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in node.items():
        if isinstance(value, list):
            out[key] = [i.to_json() for i in value if today is None or not i.expired(today)]
        else:
            out[key] = _dump_tree(value, today)
    return out
