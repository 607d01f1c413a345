"""What running actions gives back: one `ActionOutcome` per action and an
`ActionsOutcome` for the batch, each with the JSON form the model (and the CLI,
HTTP and MCP) reads:

```
{"ok": bool,              # every action succeeded
 "succeeded": int, "failed": int,
 "results": [             # one per action, in order
   {"index": 0, "action": "read_file", "assign_to": "me",   # assign_to only if given
    "ok": true, "value": ...},
   {"index": 1, "action": "update_file", "ok": false, "error": "..."}]}
```
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict

from memagent.memory.vault import VaultResult


def json_value(value: object) -> object:
    """An action's value as JSON holds it (a vault result as its `to_json`)."""
    return value.to_json() if isinstance(value, VaultResult) else value


class ActionOutcomeJson(TypedDict):
    """`ActionOutcome.to_json` (the module doc's `results` entry)."""

    index: int
    action: str
    assign_to: NotRequired[str]
    ok: bool
    value: NotRequired[Any]
    """Whatever JSON value the action gave."""
    error: NotRequired[str | None]


@dataclass(slots=True)
class ActionOutcome:
    """One action's outcome: `value` (JSON) when `ok`, else `error` (for the model)."""

    index: int
    action: str
    ok: bool = False
    value: Any = None
    error: str | None = None
    assign_to: str | None = None

    def to_json(self) -> ActionOutcomeJson:
        out: ActionOutcomeJson
        if self.assign_to is None:
            out = {"index": self.index, "action": self.action, "ok": self.ok}
        else:  # the name before `ok`, where the model has always read it
            out = {
                "index": self.index,
                "action": self.action,
                "assign_to": self.assign_to,
                "ok": self.ok,
            }
        if self.ok:
            out["value"] = self.value
        else:
            out["error"] = self.error
        return out


@dataclass(slots=True)
class ActionsOutcome:
    """A batch's outcome: every action's result, in order. A failed action does
    not stop later ones (only those that use its `$var`)."""

    results: list[ActionOutcome] = field(default_factory=list)

    @property
    def failed(self) -> int:
        return sum(1 for r in self.results if not r.ok)

    @property
    def succeeded(self) -> int:
        return len(self.results) - self.failed

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.results)

    def to_json(self) -> dict[str, Any]:
        failed = self.failed
        return {
            "ok": failed == 0,
            "succeeded": len(self.results) - failed,
            "failed": failed,
            "results": [r.to_json() for r in self.results],
        }
