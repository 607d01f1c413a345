"""Keeping a named session's state in a memory home, between processes.

What persists (document `sandbox/<name>.json` of the home's agent state: the file
`state/sandbox/<name>.json`, written through `Storage`, or with a shared database
a row of its `state` table, passed as `state=`, so any server can take the next
turn of a conversation):

- variables whose values are data: None, bool, int, float, str, bytes, and
  list / tuple / dict / set / frozenset of those (nested), stored as tagged JSON;
- the source of every top-level `def`, `class` and `import` run in the session
  (the latest per name), replayed in order when the session is loaded.

Anything else (instances of the code's classes, regex patterns, datetimes,
iterators, lambdas assigned to names) is not persisted; `save_session` returns
the names it skipped. The file is never unpickled or executed by CPython: data
is decoded from JSON and code is replayed by the sandbox interpreter itself, so
a hand-edited state file can do no more than the code a user could type.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from memagent.core import Conflict, CorruptFile, InvalidInput, MemoryHome, NotFound, sha256_hex
from memagent.core.state import FileState, State
from memagent.sandbox._codec import STATE_VERSION, decode_value, encode_value
from memagent.sandbox._interp import MAX_DEFINITIONS
from memagent.sandbox.session import SessionLike as Session

__all__ = [
    "decode_value",
    "encode_value",
    "load_session",
    "read_state",
    "run_persisted",
    "save_session",
    "session_path",
    "state_digest",
]

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def _document(name: str) -> str:
    """The state document of session `name` (the name checked)."""
    if not isinstance(name, str) or not _NAME.match(name) or ".." in name:
        raise InvalidInput(
            f"invalid session name {name!r}: use 1-64 letters, digits, '_', '-' or '.'"
        )
    return f"sandbox/{name}.json"


def session_path(home: MemoryHome, name: str) -> Any:
    """Where session `name`'s state lives in a home's files."""
    return home.layout.state / _document(name)


def _read(home: MemoryHome, name: str, state: State | None) -> bytes | None:
    try:
        return (state or FileState(home)).read(_document(name))
    except NotFound:
        return None


def state_digest(home: MemoryHome, name: str, *, state: State | None = None) -> str | None:
    """sha256 of the saved state, or None when there is none."""
    raw = _read(home, name, state)
    return None if raw is None else sha256_hex(raw)


def save_session(
    home: MemoryHome,
    name: str,
    session: Session,
    *,
    expected: str | bool | None = False,
    state: State | None = None,
) -> list[str]:
    """Write the session's state (atomically, logged); returns skipped names.
    Refuses, writing nothing, when the state exceeds `limits.max_file_bytes`.
    `expected` (a digest from `state_digest`, or None for "none yet") makes
    the save optimistic: if another run saved the session meanwhile, `Conflict`
    is raised instead of overwriting its work. `state`: where it is kept (the
    home's `state/` files when None)."""
    document = _document(name)
    doc, skipped = session.snapshot()
    data = json.dumps(doc, ensure_ascii=False, allow_nan=False).encode("utf-8")
    limit = home.config.limits.max_file_bytes
    if len(data) > limit:
        raise InvalidInput(
            f"session state is {len(data)} bytes, more than the limit of {limit}; nothing saved"
        )
    target = state or FileState(home)
    if isinstance(expected, bool):  # False: no check
        target.write(document, data, actor="sandbox", op="sandbox.save")
    elif not target.swap(document, data, expected, actor="sandbox", op="sandbox.save"):
        raise Conflict(f"sandbox session {name!r} was saved by another run meanwhile; run again")
    return skipped


REPLAY_FAILED = "(replaying the session's definitions)"


def read_state(
    home: MemoryHome, name: str, *, state: State | None = None
) -> tuple[str | None, dict[str, Any], list[str]]:
    """The saved state of session `name`, checked as untrusted input and nothing
    run: (digest of the document or None, variables, definition sources). Needs
    no lock: documents are replaced atomically, and the digest is of the bytes read."""
    raw = _read(home, name, state)
    if raw is None:
        return None, {}, []
    rel = f"state/{_document(name)}"
    try:
        doc = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise CorruptFile(rel, f"not valid JSON: {exc}") from exc
    if not isinstance(doc, dict) or doc.get("version") != STATE_VERSION:
        raise CorruptFile(rel, f"not a sandbox session state (version {STATE_VERSION})")
    variables = doc.get("variables")
    definitions = doc.get("definitions")
    if not isinstance(variables, dict) or not isinstance(definitions, list):
        raise CorruptFile(rel, "'variables' must be an object and 'definitions' a list")
    if len(definitions) > MAX_DEFINITIONS:
        raise CorruptFile(rel, f"more than {MAX_DEFINITIONS} definitions")
    restored: dict[str, Any] = {}
    for var, data in variables.items():
        if not isinstance(var, str) or not var.isidentifier() or var.startswith("__"):
            raise CorruptFile(rel, f"bad variable name {var!r}")
        try:
            restored[var] = decode_value(data)
        except (ValueError, TypeError, RecursionError) as exc:
            raise CorruptFile(rel, f"variable {var!r}: {exc}") from exc
    sources: list[str] = []
    for entry in definitions:
        if not isinstance(entry, dict) or not isinstance(entry.get("source"), str):
            raise CorruptFile(rel, "each definition needs a 'source' string")
        if not _is_one_definition(entry["source"]):
            raise CorruptFile(rel, "a definition must be one def, class or import statement")
        sources.append(entry["source"])
    return sha256_hex(raw), restored, sources


def _is_one_definition(source: str) -> bool:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return len(tree.body) == 1 and isinstance(
        tree.body[0], (ast.FunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)
    )


def load_session(
    home: MemoryHome, name: str, session: Session, *, state: State | None = None
) -> list[str]:
    """Restore a saved state into `session` (a fresh one). None saved: nothing
    to restore. The definitions replay in one run under one budget, with no lock
    held. Returns notes about definitions that failed to replay."""
    _, variables, sources = read_state(home, name, state=state)
    session.restore_variables(variables)
    if not sources:
        return []
    result = session.run("", replay=sources)
    notes = [n for n in result.notes if n.startswith("could not restore")]
    if result.error:
        notes.append(f"could not restore the definitions: {result.error}")
    return notes


def run_persisted(
    home: MemoryHome, name: str, session: Session, code: str, *, state: State | None = None
) -> dict[str, Any]:
    """Load session `name` into `session` (a fresh one), run `code`, save it back.

    Returns the run's result object plus `session`, `notes` (definitions that did
    not replay) and `not_persisted` (names that could not be saved) when non-empty.
    The saved definitions replay within the run's own budget, and neither the
    replay nor the run holds the home lock (tools take it per write); if another
    run saved the same session meanwhile, the save raises `Conflict` instead of
    overwriting it. A run whose replay failed, or whose worker crashed, saves
    nothing.
    """
    digest, variables, sources = read_state(home, name, state=state)
    session.restore_variables(variables)
    result = session.run(code, replay=sources)
    doc = result.to_json()
    doc["session"] = name
    notes = [n for n in result.notes if n.startswith("could not restore")]
    failed = result.error is not None and (
        result.error.endswith(REPLAY_FAILED) or result.error.startswith("SandboxCrashed")
    )
    if not failed:
        skipped = save_session(home, name, session, expected=digest, state=state)
        if skipped:
            doc["not_persisted"] = skipped
    if notes:
        doc["notes"] = notes
    return doc
