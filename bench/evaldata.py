"""Where the shared evaluation data lives: `$MEMAGENT_EVAL`, else the first
`shared/eval` found beside the checkout or one of its parents (a worktree sits
deeper than the main checkout)."""

from __future__ import annotations

import os
from pathlib import Path


def eval_dir(name: str) -> Path:
    env = os.environ.get("MEMAGENT_EVAL")
    if env:
        return Path(env) / name
    here = Path(__file__).resolve().parent
    for parent in here.parents:
        candidate = parent / "shared" / "eval" / name
        if candidate.is_dir():
            return candidate
    return here.parents[1] / "shared" / "eval" / name
