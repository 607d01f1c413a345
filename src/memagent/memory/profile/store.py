"""Reading and writing resource files in `<home>/profile/`.

Reads validate the whole file and report a hand-edited mistake as
`CorruptFile` (file, line, what is wrong); a file that does not load is never
written over. Writes go through `home.storage` (actor `profile`), bump
`_metadata.version` and `last_updated`, and carry the item-level changes in the
ops-log `meta`, which is what history and undo read.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from datetime import date
from importlib import resources as importlib_resources
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from memagent.core import (
    Conflict,
    CorruptFile,
    InvalidInput,
    MemoryHome,
    NotFound,
    OpRecord,
    now_iso,
    read_ops,
)
from memagent.core.jsontext import too_deep
from memagent.core.storage import WriteRecord
from memagent.memory.profile._jsonpos import line_of
from memagent.memory.profile.item_keys import match_key
from memagent.memory.profile.models import (
    FILE_NAME_RE,
    PATH_RE,
    RESOURCE_ID_RE,
    SECTION_NAME_RE,
    Item,
    Metadata,
    Resource,
    SectionTree,
    WriteMeta,
    file_name,
    resource_id_of,
)

ACTOR = "profile"
GENERAL_RESOURCE = "resource_user_general_prefs.json"
STARTER_FILES = (
    "resource_user_food_prefs.json",
    "resource_user_routine.json",
    "resource_user_health.json",
    GENERAL_RESOURCE,
)


_ITEMS: TypeAdapter[list[Item]] = TypeAdapter(list[Item])


def _dotted(loc: Sequence[str | int]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


class FileTooLarge(InvalidInput):
    """A write would take a resource past `limits.max_file_bytes`."""


def parse_resource(name: str, text: str, shown_path: str) -> Resource:
    """Validate the text of `name`; raise `CorruptFile` naming the line at fault."""

    def corrupt(loc: Sequence[str | int], what: str) -> CorruptFile:
        where = _dotted(loc)
        return CorruptFile(shown_path, f"{where}: {what}" if where else what, line_of(text, loc))

    deep = too_deep(text)
    if deep is not None:
        raise CorruptFile(shown_path, "nested too deeply", deep)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CorruptFile(shown_path, f"not valid JSON: {exc.msg}", exc.lineno) from exc
    except (ValueError, RecursionError) as exc:
        raise CorruptFile(shown_path, f"not usable JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise corrupt((), "a resource must be a JSON object with `_metadata` and sections")
    if "_metadata" not in data:
        raise corrupt((), "missing `_metadata` (resource_id, version, last_updated, tags, ...)")
    try:
        metadata = Metadata.model_validate(data["_metadata"])
    except ValidationError as exc:
        err = exc.errors()[0]
        raise corrupt(("_metadata", *err["loc"]), err["msg"]) from exc
    expected = resource_id_of(name)
    if metadata.resource_id != expected:
        raise corrupt(
            ("_metadata", "resource_id"),
            f"is {metadata.resource_id!r} but the file name says {expected!r}",
        )
    sections: SectionTree = {}
    for key, value in data.items():
        if key != "_metadata":
            sections[key] = _parse_node(value, (key,), corrupt)
    resource = Resource(name, metadata, sections)
    known = set(resource.paths())
    for g, group in enumerate(metadata.exclusive):
        for p, path in enumerate(group):
            if path not in known:
                raise corrupt(
                    ("_metadata", "exclusive", g, p),
                    f"{path!r} is not a list of items in this resource",
                )
    return resource


def _parse_node(
    value: Any,
    loc: tuple[str | int, ...],
    corrupt: Callable[[Sequence[str | int], str], CorruptFile],
) -> list[Item] | SectionTree:
    name = loc[-1]
    if isinstance(name, str) and not SECTION_NAME_RE.match(name):
        raise corrupt(loc, "section names are letters, digits, `_` and `-` (no dots)")
    if isinstance(value, list):
        try:
            items: list[Item] = _ITEMS.validate_python(value)
        except ValidationError as exc:
            err = exc.errors()[0]
            raise corrupt((*loc, *err["loc"]), err["msg"]) from exc
        seen: dict[str, str] = {}
        for i, item in enumerate(items):
            key = match_key(item.item)
            if not key:
                raise corrupt((*loc, i, "item"), "an item key needs at least one letter or digit")
            if key in seen:
                raise corrupt(
                    (*loc, i, "item"), f"duplicate item {item.item!r} (same as {seen[key]!r})"
                )
            seen[key] = item.item
        return items
    if isinstance(value, dict):
        return {k: _parse_node(v, (*loc, k), corrupt) for k, v in value.items()}
    raise corrupt(loc, "a section is a list of items or an object of sections")


def render_resource(resource: Resource) -> str:
    """Pretty JSON with one item per line: easy to read and diff by hand, and
    fast to write (the C encoder does each line)."""
    data = resource.to_json()
    meta = json.dumps(data.pop("_metadata"), indent=2, ensure_ascii=False)
    lines = ["{", '  "_metadata": ' + meta.replace("\n", "\n  ") + ("," if data else "")]
    _render_node(data, 1, lines)
    lines.append("}")
    return "\n".join(lines) + "\n"


def _render_node(node: dict[str, Any], depth: int, lines: list[str]) -> None:
    pad = "  " * depth
    keys = list(node)
    for n, key in enumerate(keys):
        comma = "," if n < len(keys) - 1 else ""
        value = node[key]
        name = json.dumps(key, ensure_ascii=False)
        if isinstance(value, dict):
            if not value:
                lines.append(f"{pad}{name}: {{}}{comma}")
                continue
            lines.append(f"{pad}{name}: {{")
            _render_node(value, depth + 1, lines)
            lines.append(f"{pad}}}{comma}")
        elif not value:
            lines.append(f"{pad}{name}: []{comma}")
        else:
            lines.append(f"{pad}{name}: [")
            for i, item in enumerate(value):
                sep = "," if i < len(value) - 1 else ""
                lines.append(f"{pad}  {json.dumps(item, ensure_ascii=False)}{sep}")
            lines.append(f"{pad}]{comma}")


def _today() -> date:
    return date.today()


class ProfileStore:
    """The resource files of one memory home."""

    def __init__(self, home: MemoryHome, *, today: Callable[[], date] = _today) -> None:
        self.home = home
        self.storage = home.storage
        self.dir = home.layout.profile
        self.today = today

    @property
    def max_bytes(self) -> int:
        return self.home.config.limits.max_file_bytes

    def lock(self) -> AbstractContextManager[None]:
        """Held around a read-modify-write: a batch is all or nothing under it."""
        return self.storage.lock()

    def op_records(self) -> list[OpRecord]:
        """Every ops-log record of the home, oldest first (history and undo read it)."""
        return list(read_ops(self.home.layout.ops_log))

    def path_of(self, name: str) -> Path:
        return self.dir / self.check_name(name)

    @staticmethod
    def check_name(name: str) -> str:
        if not FILE_NAME_RE.match(name):
            raise InvalidInput(
                f"{name!r} is not a resource file name (expected resource_<id>.json, "
                "id in lower-case letters, digits and _)"
            )
        return name

    @staticmethod
    def name_for(ref: str) -> str:
        """The file name for `food_prefs`, `resource_food_prefs` or the file name."""
        rid = resource_id_of(ref)
        if not RESOURCE_ID_RE.match(rid):
            raise InvalidInput(f"{ref!r} is not a resource name (lower-case letters, digits, _)")
        return file_name(rid)

    def names(self) -> list[str]:
        if not self.dir.is_dir():
            return []
        return sorted(
            p.name for p in self.dir.iterdir() if p.is_file() and FILE_NAME_RE.match(p.name)
        )

    def exists(self, name: str) -> bool:
        return self.path_of(name).is_file()

    def load(self, name: str) -> Resource:
        return parse_resource(name, self._read_text(name), f"profile/{name}")

    def _read_text(self, name: str) -> str:
        path = self.path_of(name)
        shown = f"profile/{name}"
        try:
            size = path.stat().st_size
        except FileNotFoundError:
            known = ", ".join(self.names()) or "none"
            raise NotFound(f"no profile resource {name!r} (known: {known})") from None
        if size > self.max_bytes:
            raise CorruptFile(
                shown, f"{size} bytes is over the limit of {self.max_bytes} (limits.max_file_bytes)"
            )
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise CorruptFile(shown, f"not UTF-8 text: {exc.reason}") from exc
        return text

    def load_all(self) -> dict[str, Resource]:
        return {name: self.load(name) for name in self.names()}

    def serialize(self, resource: Resource) -> str:
        return render_resource(resource)

    def check_size(self, text: str, name: str) -> None:
        if len(text) > self.max_bytes // 4 and len(text.encode("utf-8")) > self.max_bytes:
            raise FileTooLarge(
                f"{name} would grow past {self.max_bytes} bytes (limits.max_file_bytes)"
            )

    def write(self, resource: Resource, *, op: str, meta: WriteMeta) -> WriteRecord:
        """Bump version and `last_updated`, check the size limit, write atomically;
        `meta` goes to the ops log."""
        resource.metadata.version += 1
        resource.metadata.last_updated = now_iso()
        text = self.serialize(resource)
        self.check_size(text, resource.name)
        return self._write_text(resource, text, op=op, meta=meta.to_json())

    def _write_text(
        self, resource: Resource, text: str, *, op: str, meta: dict[str, Any]
    ) -> WriteRecord:
        return self.storage.write_text(
            self.path_of(resource.name), text, actor=ACTOR, op=op, meta=meta
        )

    def _create_text(self, name: str, text: str, *, actor: str) -> None:
        """Write a new resource; `Conflict` when it exists (checked under the lock)."""
        target = self.path_of(name)
        with self.lock():
            if target.exists():
                raise Conflict(f"profile resource {name} already exists")
            self.storage.write_text(target, text, actor=actor, op="create", meta={"file": name})

    def create(
        self,
        resource_id: str,
        *,
        tags: Iterable[str] = (),
        description: str = "",
        sections: Iterable[str] = (),
        exclusive: Iterable[Sequence[str]] = (),
        actor: str = ACTOR,
    ) -> Resource:
        """A new, empty resource with the given list paths (e.g. `food.likes`)."""
        name = self.name_for(resource_id)
        rid = resource_id_of(name)
        tree: SectionTree = {}
        for path in sections:
            if not PATH_RE.match(path):
                raise InvalidInput(f"section path {path!r}: use dotted names like food.likes")
            node = tree
            parts = path.split(".")
            for part in parts[:-1]:
                child = node.setdefault(part, {})
                if isinstance(child, list):
                    raise InvalidInput(f"section path {path!r}: {part!r} is already a list")
                node = child
            if isinstance(node.get(parts[-1]), dict):
                raise InvalidInput(f"section path {path!r} already holds sections")
            node.setdefault(parts[-1], [])
        try:
            metadata = Metadata(
                resource_id=rid,
                version=1,
                last_updated=now_iso(),
                tags=list(tags),
                description=description,
                exclusive=[list(g) for g in exclusive],
            )
        except ValidationError as exc:
            err = exc.errors()[0]
            raise InvalidInput(f"{_dotted(err['loc'])}: {err['msg']}") from exc
        resource = Resource(name, metadata, tree)
        known = set(resource.paths())
        for group in metadata.exclusive:
            for path in group:
                if path not in known:
                    raise InvalidInput(f"exclusive path {path!r} is not one of the sections")
        self._create_text(name, self.serialize(resource), actor=actor)
        return resource

    def ensure_starters(self, *, actor: str = "init") -> list[str]:
        """Create the four starting resources that do not exist yet (idempotent)."""
        created: list[str] = []
        starters = importlib_resources.files("memagent.memory.profile") / "starters"
        with self.lock():
            for name in STARTER_FILES:
                if self.exists(name):
                    continue
                data = json.loads((starters / name).read_text(encoding="utf-8"))
                data["_metadata"]["last_updated"] = now_iso()
                resource = parse_resource(name, json.dumps(data), f"starters/{name}")
                self._create_text(name, self.serialize(resource), actor=actor)
                created.append(f"profile/{name}")
        return created


def init_profile(home: MemoryHome) -> list[str]:
    """What `memagent init` calls: the four starting resources."""
    return ProfileStore(home).ensure_starters()
