"""Restricted, stateful Python interpreter: code as a second way to act.

`Session(tools={...}, limits=Limits(...)).run(code) -> RunResult(output, result, error)`.
The AST is evaluated by memagent itself (never compiled by CPython), so every
name, attribute, call and loop is checked and counted. `save_session` /
`load_session` keep a session's state in a memory home.
"""

from memagent.sandbox.limits import LimitExceeded, Limits, SecurityError
from memagent.sandbox.persist import (
    load_session,
    run_persisted,
    save_session,
    session_path,
    state_digest,
)
from memagent.sandbox.session import RunResult, Session

__all__ = [
    "LimitExceeded",
    "Limits",
    "RunResult",
    "SecurityError",
    "Session",
    "load_session",
    "run_persisted",
    "save_session",
    "session_path",
    "state_digest",
]
