"""The vault actions as plain functions for sandboxed code.

`vault_tools(vault)` returns `{"read_file": read_file, …}`, one function per
action, ready for `memagent.sandbox.IsolatedSession(tools=...)`: the agent and
the server run model code in a pre-started worker process of the sandbox's
`WorkerPool`, and a tool call made there is sent back over the worker's pipe
and runs here, in the host process, with the host's vault; only its (plain)
result goes back to the worker. Arguments are the action's fields, positional
in the order the JSON action lists them (`update_file(path, old_content,
new_content)`) or by keyword, and every call goes through the action's own
function (`run_action`): the same path confinement, size limits, write lock
and ops log as a JSON batch.

A failure is raised as the built-in exception model code expects, carrying the
vault's message, so `try: … except FileNotFoundError:` works:

| vault error            | raised as          |
|------------------------|--------------------|
| `NotFound`             | `FileNotFoundError`|
| `Conflict`             | `FileExistsError`  |
| `PathRejected`         | `PermissionError`  |
| other `InvalidInput`   | `ValueError`       |
| `LockTimeout`          | `TimeoutError`     |
| wrong argument type    | `TypeError`        |
| anything else          | `RuntimeError` / `OSError` |

No memagent object reaches the code: values are plain str/int/bool/dict/list.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import ValidationError

from memagent.actions._runner import format_validation, run_action
from memagent.core import (
    Conflict,
    InvalidInput,
    LockTimeout,
    MemagentError,
    NotFound,
    PathRejected,
)
from memagent.memory.vault import Vault

_MAPPING: tuple[tuple[type[MemagentError], type[Exception]], ...] = (
    (NotFound, FileNotFoundError),
    (Conflict, FileExistsError),
    (PathRejected, PermissionError),
    (InvalidInput, ValueError),
    (LockTimeout, TimeoutError),
)


def _call(vault: Vault, name: str, args: Mapping[str, Any]) -> Any:
    try:
        return run_action(vault, name, args)
    except ValidationError as exc:
        raise TypeError(format_validation(exc, name)) from None
    except MemagentError as exc:
        message = str(exc)
        for ours, builtin in _MAPPING:
            if isinstance(exc, ours):
                raise builtin(message) from None
        raise RuntimeError(message) from None
    except OSError as exc:
        raise OSError(f"{name}: {exc.strerror or type(exc).__name__}") from None


def vault_tools(vault: Vault) -> dict[str, Callable[..., Any]]:
    """The vault actions as sandbox tools bound to `vault` (see the module docstring)."""

    def read_file(path: str) -> str:
        """The text of a file in the vault."""
        return str(_call(vault, "read_file", {"path": path}))

    def create_file(path: str, content: str) -> dict[str, Any]:
        """Create a new file (and its folders); FileExistsError if it exists."""
        return dict(_call(vault, "create_file", {"path": path, "content": content}))

    def update_file(path: str, old_content: str, new_content: str) -> dict[str, Any]:
        """Replace the first occurrence of old_content (exact text) with new_content."""
        args = {"path": path, "old_content": old_content, "new_content": new_content}
        return dict(_call(vault, "update_file", args))

    def append_file(path: str, content: str) -> dict[str, Any]:
        """Append text on a new line (the file is created if missing)."""
        return dict(_call(vault, "append_file", {"path": path, "content": content}))

    def delete_file(path: str) -> dict[str, Any]:
        """Delete a file."""
        return dict(_call(vault, "delete_file", {"path": path}))

    def check_file_exists(path: str) -> bool:
        """True if the path is an existing file."""
        return bool(_call(vault, "check_file_exists", {"path": path}))

    def create_dir(path: str) -> dict[str, Any]:
        """Create a folder (and its parents); an existing folder is fine."""
        return dict(_call(vault, "create_dir", {"path": path}))

    def list_files(path: str = "", recursive: bool = False) -> dict[str, Any]:
        """A folder's entries ({"path", "entries", "truncated"}; folders end in '/')."""
        return dict(_call(vault, "list_files", {"path": path, "recursive": recursive}))

    def check_dir_exists(path: str) -> bool:
        """True if the path is an existing folder."""
        return bool(_call(vault, "check_dir_exists", {"path": path}))

    def get_size(path: str) -> int:
        """A file's size in bytes."""
        return int(_call(vault, "get_size", {"path": path}))

    def go_to_link(link: str) -> dict[str, Any]:
        """Resolve a [[wikilink]]: the note (or section) with its path and title."""
        return dict(_call(vault, "go_to_link", {"link": link}))

    def search_files(
        query: str,
        path: str = "",
        regex: bool = False,
        case_sensitive: bool = False,
        max_results: int | None = None,
    ) -> dict[str, Any]:
        """Lines containing query (or matching it as a regex): {"matches", "truncated"}."""
        args = {
            "query": query,
            "path": path,
            "regex": regex,
            "case_sensitive": case_sensitive,
            "max_results": max_results,
        }
        return dict(_call(vault, "search_files", args))

    return {
        fn.__name__: fn
        for fn in (
            read_file,
            create_file,
            update_file,
            append_file,
            delete_file,
            check_file_exists,
            create_dir,
            list_files,
            check_dir_exists,
            get_size,
            go_to_link,
            search_files,
        )
    }
