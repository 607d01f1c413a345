"""The error a learning run ends with when the model's reply cannot be used,
and the one-line account of a validation error that goes with it."""

from __future__ import annotations

from pydantic import ValidationError

from memagent.core import MemagentError


class LearnFailed(MemagentError):
    """The model's reply did not fit its schema (after a repair round, where the
    stage has one); nothing was written."""


def describe_error(exc: Exception, limit: int = 5) -> str:
    if isinstance(exc, ValidationError):
        parts = []
        for err in exc.errors()[:limit]:
            where = ".".join(str(p) for p in err["loc"]) or "reply"
            parts.append(f"{where}: {err['msg']}")
        more = exc.error_count() - limit
        return "; ".join(parts) + (f" (+{more} more)" if more > 0 else "")
    return str(exc)
