"""Restricted, stateful Python interpreter: code as a second way to act.

`Session(tools={...}, limits=Limits(...)).run(code) -> RunResult(output, result, error)`.
The AST is evaluated by memagent itself (never compiled by CPython), so every
name, attribute, call and loop is checked and counted. `save_session` /
`load_session` keep a session's state in a memory home. `IsolatedSession` and
`default_pool().run(code)` run the same interpreter in a pre-started worker
process behind OS limits (the server, the agent and the CLI use them).
"""

from memagent.sandbox.limits import LimitExceeded, Limits, SecurityError
from memagent.sandbox.persist import (
    load_session,
    run_persisted,
    save_session,
    session_path,
    state_digest,
)
from memagent.sandbox.pool import (
    IsolatedSession,
    SandboxCrashed,
    SandboxUnjailed,
    WorkerPool,
    default_pool,
)
from memagent.sandbox.session import RunResult, Session, SessionLike

__all__ = [
    "IsolatedSession",
    "LimitExceeded",
    "Limits",
    "RunResult",
    "SandboxCrashed",
    "SandboxUnjailed",
    "SecurityError",
    "Session",
    "SessionLike",
    "WorkerPool",
    "default_pool",
    "load_session",
    "run_persisted",
    "save_session",
    "session_path",
    "state_digest",
]
