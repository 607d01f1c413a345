"""The exceptions every layer raises.

Messages are written for the person (or the LLM) who gave the bad input: they say
what is wrong and, where it helps, what a correct value looks like. Interfaces turn
them into a clean message and a non-zero exit / an HTTP problem document; they
never leak a traceback for a `MemagentError`.
"""

from __future__ import annotations


class MemagentError(Exception):
    """Base class for every error memagent reports on purpose."""


class InvalidInput(MemagentError):
    """The caller's input is malformed, hostile or too large. Nothing was written."""


class PathRejected(InvalidInput):
    """A path tried to leave its root, or names something memagent will not touch."""


class NotFound(MemagentError):
    """The thing asked for does not exist (or is not visible to this caller)."""


class Conflict(MemagentError):
    """The operation contradicts the current state (e.g. the file already exists)."""


class CorruptFile(MemagentError):
    """A file in the memory home cannot be parsed. It is reported, never overwritten."""

    def __init__(self, path: str, detail: str, line: int | None = None) -> None:
        where = f"{path}, line {line}" if line is not None else path
        super().__init__(f"{where}: {detail}")
        self.path = path
        self.detail = detail
        self.line = line


class ReadOnlyHome(MemagentError):
    """The memory home is on a read-only file system or not writable by this user.
    Reading still works; nothing was written."""


class DeadlineExceeded(MemagentError):
    """The work ran past its time budget (a request deadline) and was stopped at the
    next check point. What it had written stays consistent (writes are atomic)."""


class Overloaded(MemagentError):
    """Too much work in flight (for this caller, or for the whole server); the same
    request may succeed after `retry_after` seconds. Nothing was done."""

    def __init__(self, message: str, *, retry_after: float = 1.0, per_user: bool = True) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.per_user = per_user


class QuotaExceeded(MemagentError):
    """A write would take the memory home past one of its quotas (bytes, chunks,
    notes, ops-log size). Nothing was written."""


class StorageFull(MemagentError):
    """The disk (or the database) holding the memory is full, or the user's disk
    quota is used up. Nothing was half-written: a file that was being created is
    removed again, so a retry stores it once."""


class LockTimeout(MemagentError):
    """Another process held the memory home's lock for too long."""


class Unavailable(MemagentError):
    """A service the memory lives in (the database of a shared backend) cannot be
    reached. Nothing was written; the same request may succeed later."""
