"""What one sandbox run may consume, and the errors raised when it tries more.

Every limit is enforced by the interpreter itself, before the work happens where
that is possible (sizes are computed from the operands, never from the result),
so a run that asks for too much ends with a clear error and the host unharmed.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Limits(BaseModel):
    """Budget of one `Session.run` call. Defaults suit an LLM's scratch code."""

    model_config = ConfigDict(extra="forbid")

    max_operations: int = Field(default=5_000_000, gt=0)
    """AST nodes evaluated (plus items pulled through C-level loops)."""
    timeout_s: float = Field(default=10.0, gt=0)
    """Wall time, checked by the evaluation loop itself (no watchdog thread)."""
    max_str_len: int = Field(default=10_000_000, gt=0)
    """Characters (or bytes) of any str/bytes the run creates."""
    max_collection_len: int = Field(default=2_000_000, gt=0)
    """Items of any list/tuple/dict/set the run creates."""
    max_int_bits: int = Field(default=100_000, gt=0)
    """Bits of any int the run creates (about 30,000 decimal digits)."""
    max_total_alloc: int = Field(default=1_000_000_000, gt=0)
    """Cumulative size, in approximate bytes, of the large (64 KiB+) strings,
    collections and ints one run may create; bounds memory use by loops that
    keep building big objects, each within the size limits."""
    max_recursion: int = Field(default=200, gt=0)
    """Depth of calls to functions defined by the code."""
    max_output_chars: int = Field(default=100_000, gt=0)
    """Captured `print` output; more is dropped and a note is appended."""
    max_source_bytes: int = Field(default=1_000_000, gt=0)
    """Size of the code of one run."""


class SandboxAbort(BaseException):
    """Ends a run. Derives from BaseException so the interpreter never hands it
    to an `except` clause of the code it runs (and skips `finally` blocks)."""

    kind = "SandboxAbort"

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


class SecurityError(SandboxAbort):
    """The code reached for something the sandbox denies."""

    kind = "SecurityError"


class LimitExceeded(SandboxAbort):
    """The code asked for more than its `Limits` allow."""

    kind = "LimitExceeded"


class FinalAnswer(BaseException):
    """Raised by `final_answer`/`FINAL`/`FINAL_VAR`: the run ends with `value`."""

    def __init__(self, value: object) -> None:
        super().__init__("final answer")
        self.value = value
