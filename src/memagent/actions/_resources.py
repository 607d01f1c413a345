"""What each action reads and writes, as plan resources.

This is the seam the planner uses: each action becomes a plan step whose
resources come from its declared templates (`_registry`) through
`resources_of`. Resource names follow `memagent.plan`: `vault:<normalized
path>` names one file or folder entry; a name ending in `/` or `:` is a prefix
covering everything under it (`vault:entities/`; `vault:` is the whole vault).
Paths are normalized first (`./user.md` and `user.md` are one resource). Where
a path is not known yet (it is a `$var`) or is invalid, the whole vault is
declared, which is always safe. `overlaps` is the conflict test (the same rule
as the planner's).
"""

from __future__ import annotations

from collections.abc import Mapping

from memagent.actions._catalog import SPECS
from memagent.actions._models import VarRef
from memagent.actions._registry import NAMES, WHOLE
from memagent.core import InvalidInput
from memagent.memory.vault import normalize

WHOLE_VAULT = "vault:"


def _resources(template: str, args: Mapping[str, object]) -> list[str]:
    if template == WHOLE:
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
    if kind == "file":
        return [f"vault:{rel}"]
    return [f"vault:{rel}", f"vault:{rel}/"]


def resources_of(name: str, args: Mapping[str, object]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(reads, writes) of action `name` with these arguments: the vault paths it
    touches (`names`, the set of names, is the runner's to add)."""
    spec = SPECS[name]
    reads = tuple(dict.fromkeys(r for t in spec.reads if t != NAMES for r in _resources(t, args)))
    writes = tuple(dict.fromkeys(r for t in spec.writes if t != NAMES for r in _resources(t, args)))
    return reads, writes


def overlaps(a: str, b: str) -> bool:
    """Whether two resources can touch the same file (a prefix covers what starts with it)."""
    if a == b:
        return True
    if a.endswith(("/", ":")) and b.startswith(a):
        return True
    return b.endswith(("/", ":")) and a.startswith(b)
