"""The vault actions as plain functions for sandboxed code.

`vault_tools(vault)` returns `{"read_file": read_file, …}`, one function per
declared action (made from its declaration: the signature is the action's
fields, the docstring its function's), ready for
`memagent.sandbox.IsolatedSession(tools=...)`: the agent and the server run
model code in a pre-started worker process of the sandbox's `WorkerPool`, and
a tool call made there is sent back over the worker's pipe and runs here, in
the host process, with the host's vault; only its (plain) result goes back to
the worker. Arguments are the action's fields, positional in the order the
JSON action lists them (`update_file(path, old_content, new_content)`) or by
keyword, and every call goes through the action's own function
(`run_action`): the same path confinement, size limits, write lock and ops
log as a JSON batch.

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

import inspect
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import ValidationError

from memagent.actions._catalog import SPECS
from memagent.actions._registry import ActionSpec
from memagent.actions._results import json_value
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


def _tool(vault: Vault, spec: ActionSpec) -> Callable[..., Any]:
    """The sandbox function of one action: its arguments bound as the action's
    fields (positional in the model's order, or by keyword), its value as JSON."""
    name = spec.name
    signature = inspect.Signature(list(spec.parameters))

    def tool(*args: Any, **kwargs: Any) -> Any:
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise TypeError(f"{name}() {exc}") from None
        bound.apply_defaults()
        return json_value(_call(vault, name, bound.arguments))

    tool.__name__ = tool.__qualname__ = name
    tool.__doc__ = spec.doc
    tool.__signature__ = signature  # type: ignore[attr-defined]
    tool.__annotations__ = {p.name: p.annotation for p in spec.parameters}
    return tool


def vault_tools(vault: Vault) -> dict[str, Callable[..., Any]]:
    """The vault actions as sandbox tools bound to `vault` (see the module docstring):
    one per declared action, named as it."""
    return {name: _tool(vault, spec) for name, spec in SPECS.items()}
