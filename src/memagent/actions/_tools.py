"""One plain function per action, `(vault, **fields) -> JSON-able value`, and
what each reads and writes.

This is the seam the planner uses: each action becomes a plan step whose tool
is the function and whose resources come from `resources_of`. Resource names
follow `memagent.plan`: `vault:<normalized path>` names one file or folder
entry; a name ending in `/` or `:` is a prefix covering everything under it
(`vault:entities/`; `vault:` is the whole vault). Paths are normalized first
(`./user.md` and `user.md` are one resource). Where a path is not known yet
(it is a `$var`) or is invalid, the whole vault is declared, which is always
safe. `overlaps` is the conflict test (the same rule as the planner's).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ConfigDict, validate_call

from memagent.actions._models import MODELS_BY_NAME, BaseAction, VarRef
from memagent.core import InvalidInput
from memagent.memory.vault import Vault, normalize

_VALIDATE = ConfigDict(arbitrary_types_allowed=True, strict=True)
WHOLE_VAULT = "vault:"


def _tool(func: Callable[..., Any]) -> Callable[..., Any]:
    return validate_call(config=_VALIDATE)(func)


@_tool
def read_file(vault: Vault, *, path: str) -> str:
    return vault.read(path)


@_tool
def create_file(vault: Vault, *, path: str, content: str) -> dict[str, Any]:
    return vault.create(path, content)


@_tool
def update_file(vault: Vault, *, path: str, old_content: str, new_content: str) -> dict[str, Any]:
    return vault.update(path, old_content, new_content)


@_tool
def append_file(vault: Vault, *, path: str, content: str) -> dict[str, Any]:
    return vault.append(path, content)


@_tool
def delete_file(vault: Vault, *, path: str) -> dict[str, Any]:
    return vault.delete(path)


@_tool
def check_file_exists(vault: Vault, *, path: str) -> bool:
    return vault.exists(path)


@_tool
def create_dir(vault: Vault, *, path: str) -> dict[str, Any]:
    return vault.mkdir(path)


@_tool
def list_files(vault: Vault, *, path: str = "", recursive: bool = False) -> dict[str, Any]:
    return vault.list_dir(path, recursive=recursive)


@_tool
def check_dir_exists(vault: Vault, *, path: str) -> bool:
    return vault.dir_exists(path)


@_tool
def get_size(vault: Vault, *, path: str) -> int:
    return vault.size(path)


@_tool
def go_to_link(vault: Vault, *, link: str) -> dict[str, Any]:
    return vault.go_to_link(link)


@_tool
def search_files(
    vault: Vault,
    *,
    query: str,
    path: str = "",
    regex: bool = False,
    case_sensitive: bool = False,
    max_results: int | None = None,
) -> dict[str, Any]:
    if max_results is not None and max_results < 1:
        raise InvalidInput("max_results must be at least 1")
    return vault.search(
        query, path=path, regex_mode=regex, case_sensitive=case_sensitive, max_results=max_results
    )


@dataclass(frozen=True)
class ActionSpec:
    """An action's function and its declared resources.

    `reads`/`writes` are templates: `"file:FIELD"` (the file named by that
    field), `"tree:FIELD"` (everything under that folder) or `"vault"` (all).
    """

    name: str
    func: Callable[..., Any]
    model: type[BaseAction]
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()


def _spec(
    func: Callable[..., Any], reads: tuple[str, ...] = (), writes: tuple[str, ...] = ()
) -> ActionSpec:
    name = func.__name__
    return ActionSpec(name, func, MODELS_BY_NAME[name], reads, writes)


SPECS: dict[str, ActionSpec] = {
    s.name: s
    for s in (
        _spec(read_file, reads=("file:path",)),
        _spec(create_file, writes=("file:path",)),
        _spec(update_file, writes=("file:path",)),
        _spec(append_file, writes=("file:path",)),
        _spec(delete_file, writes=("file:path",)),
        _spec(check_file_exists, reads=("file:path",)),
        _spec(create_dir, writes=("tree:path",)),
        _spec(list_files, reads=("tree:path",)),
        _spec(check_dir_exists, reads=("tree:path",)),
        _spec(get_size, reads=("file:path",)),
        _spec(go_to_link, reads=("vault",)),
        _spec(search_files, reads=("tree:path",)),
    )
}


def _resources(template: str, args: Mapping[str, Any]) -> list[str]:
    if template == "vault":
        return [WHOLE_VAULT]
    kind, field = template.split(":", 1)
    value = args.get(field, "")
    if isinstance(value, VarRef) or not isinstance(value, str):
        return [WHOLE_VAULT]
    try:
        rel = normalize(value)
    except InvalidInput:
        return [WHOLE_VAULT]
    if not rel:
        return [WHOLE_VAULT]
    if kind == "tree":
        return [f"vault:{rel}", f"vault:{rel}/"]
    return [f"vault:{rel}"]


def resources_of(name: str, args: Mapping[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(reads, writes) of action `name` with these arguments."""
    spec = SPECS[name]
    reads = tuple(dict.fromkeys(r for t in spec.reads for r in _resources(t, args)))
    writes = tuple(dict.fromkeys(r for t in spec.writes for r in _resources(t, args)))
    return reads, writes


def overlaps(a: str, b: str) -> bool:
    """Whether two resources can touch the same file (a prefix covers what starts with it)."""
    if a == b:
        return True
    if a.endswith(("/", ":")) and b.startswith(a):
        return True
    return b.endswith(("/", ":")) and a.startswith(b)
