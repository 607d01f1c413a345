"""Artifact references inside step arguments: `{"$artifact": "name"}` anywhere."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memagent.plan.errors import PlanError

REF_KEY = "$artifact"
MAX_DEPTH = 64


def collect_refs(value: Any, where: str, out: set[str], depth: int = 0) -> bool:
    """Add every artifact referenced in `value` to `out`; True if any was found.

    Raises `PlanError` for a malformed reference or nesting deeper than `MAX_DEPTH`.
    """
    if depth > MAX_DEPTH:
        raise PlanError(f"{where}: arguments nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, dict):
        if REF_KEY in value:
            name = value[REF_KEY]
            if len(value) != 1:
                raise PlanError(
                    f'{where}: an artifact reference is exactly {{"{REF_KEY}": "name"}}, '
                    f"got extra keys {sorted(str(k) for k in value if k != REF_KEY)}"
                )
            if not isinstance(name, str) or not name:
                raise PlanError(f"{where}: artifact name must be a non-empty string, got {name!r}")
            out.add(name)
            return True
        found = False
        for item in value.values():
            found = collect_refs(item, where, out, depth + 1) or found
        return found
    if isinstance(value, list | tuple):
        found = False
        for item in value:
            found = collect_refs(item, where, out, depth + 1) or found
        return found
    return False


def resolve_refs(value: Any, artifacts: Mapping[str, Any]) -> Any:
    """A copy of `value` with every reference replaced by the artifact's value."""
    if isinstance(value, dict):
        if REF_KEY in value:
            return artifacts[value[REF_KEY]]
        return {k: resolve_refs(v, artifacts) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve_refs(v, artifacts) for v in value]
    if isinstance(value, tuple):
        return tuple(resolve_refs(v, artifacts) for v in value)
    return value
