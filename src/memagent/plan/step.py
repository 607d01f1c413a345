"""`PlanStep`: one call of one tool, with the artifacts it consumes and produces."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from memagent.plan.errors import PlanError
from memagent.plan.spec import validate_resource_name

_MAX_NAME_CHARS = 200


def check_name(kind: str, value: object) -> str:
    """Step ids and artifact names: short printable non-empty strings."""
    if not isinstance(value, str) or not value or not value.strip():
        raise PlanError(f"{kind} must be a non-empty string, got {value!r}")
    if len(value) > _MAX_NAME_CHARS:
        raise PlanError(f"{kind} {value[:40]!r}… is longer than {_MAX_NAME_CHARS} characters")
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise PlanError(f"{kind} {value!r} contains control characters")
    return value


def _names(kind: str, value: str | Iterable[str] | None) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str) and not kind.endswith(("reads", "writes")):
        return (check_name(kind, value),)
    if isinstance(value, str):
        raise PlanError(f"{kind} must be a list of resources, not a single string")
    if isinstance(value, Mapping) or not isinstance(value, Iterable):
        raise PlanError(f"{kind} must be a string or a list of strings, got {value!r}")
    if kind.endswith(("reads", "writes")):
        try:
            out = tuple(validate_resource_name(v) for v in value)
        except ValueError as exc:
            raise PlanError(f"{kind}: {exc}") from None
    else:
        out = tuple(check_name(kind, v) for v in value)
    if len(set(out)) != len(out):
        raise PlanError(f"{kind} lists a name twice: {list(out)}")
    return out


@dataclass(frozen=True, slots=True)
class PlanStep:
    """One step of a plan.

    - `tool`: a callable (ideally decorated with `@tool_spec`) or the name of a
      tool in the registry given to `Planner` / `Executor` / `run_plan`.
    - `args`: keyword arguments; `{"$artifact": name}` anywhere inside (nested lists
      and dicts included) is replaced by that artifact's value before the call.
      Referenced artifacts are consumed implicitly.
    - `consumes`: extra artifacts this step needs (beyond those referenced in args).
    - `produces`: one name (the return value is stored under it) or several (the
      tool must return a dict with exactly those keys).
    - `depends_on`: step ids that must finish first, whatever the data says.
    - `reads` / `writes`: resources for this call on top of the tool's spec
      (e.g. `vault:user.md` for one action on one file).
    - `estimate`: expected seconds, overriding the tool's latency class.
    """

    step_id: str
    tool: Callable[..., Any] | str
    args: Mapping[str, Any] = field(default_factory=dict)
    consumes: tuple[str, ...] = ()
    produces: tuple[str, ...] = ()
    depends_on: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    estimate: float | None = None

    def __init__(
        self,
        step_id: str,
        tool: Callable[..., Any] | str,
        args: Mapping[str, Any] | None = None,
        consumes: str | Iterable[str] | None = None,
        produces: str | Iterable[str] | None = None,
        depends_on: str | Iterable[str] | None = None,
        *,
        reads: Iterable[str] | None = None,
        writes: Iterable[str] | None = None,
        estimate: float | None = None,
    ) -> None:
        check_name("step_id", step_id)
        if not (callable(tool) or (isinstance(tool, str) and tool)):
            raise PlanError(f"step {step_id!r}: tool must be a callable or a tool name")
        if args is None:
            args = {}
        if not isinstance(args, Mapping) or not all(isinstance(k, str) for k in args):
            raise PlanError(f"step {step_id!r}: args must be a dict with string keys")
        if estimate is not None and (
            isinstance(estimate, bool) or not isinstance(estimate, int | float) or not estimate >= 0
        ):
            raise PlanError(f"step {step_id!r}: estimate must be seconds >= 0, got {estimate!r}")
        set_ = object.__setattr__
        set_(self, "step_id", step_id)
        set_(self, "tool", tool)
        set_(self, "args", dict(args))
        set_(self, "consumes", _names(f"step {step_id!r}: consumes", consumes))
        set_(self, "produces", _names(f"step {step_id!r}: produces", produces))
        set_(self, "depends_on", _names(f"step {step_id!r}: depends_on", depends_on))
        set_(self, "reads", _names(f"step {step_id!r}: reads", reads))
        set_(self, "writes", _names(f"step {step_id!r}: writes", writes))
        set_(self, "estimate", None if estimate is None else float(estimate))
