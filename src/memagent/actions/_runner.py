"""Running a batch of validated actions on a vault, in list order.

The result is one JSON-able object:

```
{"ok": bool,              # every action succeeded
 "succeeded": int, "failed": int,
 "results": [             # one per action, in order
   {"index": 0, "action": "read_file", "assign_to": "me",   # assign_to only if given
    "ok": true, "value": ...},
   {"index": 1, "action": "update_file", "ok": false, "error": "..."}]}
```

A failed action does not stop later ones; an action whose `$var` names a
failed action fails too and says which one and why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from memagent.actions._models import BaseAction, VarRef
from memagent.actions._tools import SPECS
from memagent.core import InvalidInput, MemagentError
from memagent.memory.vault import Vault


class _VarFailed(Exception):
    pass


def _lookup(ref: VarRef, results: dict[str, dict[str, Any]]) -> Any:
    entry = results.get(ref.name)
    if entry is None:
        raise _VarFailed(f'$var "{ref.name}" was not assigned by an earlier action')
    if not entry["ok"]:
        raise _VarFailed(
            f'$var "{ref.name}" comes from action {entry["index"]} ({entry["action"]}), '
            f"which failed: {entry['error']}"
        )
    value = entry["value"]
    for k in ref.keys:
        if isinstance(value, dict) and k in value:
            value = value[k]
        elif isinstance(value, list) and k.isdigit() and int(k) < len(value):
            value = value[int(k)]
        else:
            raise _VarFailed(f'$var "{ref.var}": the value of "{ref.name}" has no "{k}"')
    return value


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return "null" if value is None else type(value).__name__


def _format_validation(exc: ValidationError, name: str) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"] if p != 1)
        got = _kind(err.get("input"))
        parts.append(f'field "{loc}": {err["msg"]} (got {got})' if loc else err["msg"])
    return f"{name}: " + "; ".join(parts)


def run_action(vault: Vault, name: str, args: Mapping[str, Any]) -> Any:
    """Run action `name` with resolved arguments (no `$var` left); its value or a raise.

    This is what one plan step does; `run_actions` adds `$var` resolution,
    error capture and the result object.
    """
    spec = SPECS.get(name)
    if spec is None:
        raise InvalidInput(f"unknown action {name!r}; valid actions: {', '.join(SPECS)}")
    return spec.func(vault, **args)


def run_actions(vault: Vault, actions: Sequence[BaseAction]) -> dict[str, Any]:
    """Run validated actions in order; see the module docstring for the result."""
    results: list[dict[str, Any]] = []
    named: dict[str, dict[str, Any]] = {}
    for index, action in enumerate(actions):
        name = type(action).example["action"]
        entry: dict[str, Any] = {"index": index, "action": name}
        if action.assign_to is not None:
            entry["assign_to"] = action.assign_to
        try:
            args = {
                k: _lookup(v, named) if isinstance(v, VarRef) else v
                for k, v in action.fields().items()
            }
            value = run_action(vault, name, args)
        except _VarFailed as exc:
            entry.update(ok=False, error=str(exc))
        except ValidationError as exc:
            entry.update(ok=False, error=_format_validation(exc, name))
        except MemagentError as exc:
            entry.update(ok=False, error=str(exc))
        except OSError as exc:
            entry.update(ok=False, error=f"{exc.strerror or exc.__class__.__name__}")
        else:
            entry.update(ok=True, value=value)
        results.append(entry)
        if action.assign_to is not None:
            named[action.assign_to] = entry
    failed = sum(1 for r in results if not r["ok"])
    return {
        "ok": failed == 0,
        "succeeded": len(results) - failed,
        "failed": failed,
        "results": results,
    }
