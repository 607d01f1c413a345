"""Reading Python for the sandbox from stdin or a file, and the limits flags,
shared by `memagent sandbox run` and `memagent vault run --python`."""

from __future__ import annotations

from typing import TYPE_CHECKING, BinaryIO

from memagent.core import InvalidInput

if TYPE_CHECKING:
    from memagent.sandbox import Limits


def limits_from(timeout: float | None, max_ops: int | None) -> Limits:
    """The default sandbox limits, with `--timeout` / `--max-ops` applied."""
    from memagent.sandbox import Limits

    overrides: dict[str, float | int] = {}
    if timeout is not None:
        overrides["timeout_s"] = timeout
    if max_ops is not None:
        overrides["max_operations"] = max_ops
    return Limits(**overrides)


def read_code(stream: BinaryIO, max_bytes: int) -> str:
    """At most `max_bytes` of UTF-8 source; `InvalidInput` for more, for non-UTF-8
    and for none at all (empty input is refused the same way by every command)."""
    raw = stream.read(max_bytes + 1)
    if len(raw) > max_bytes:
        raise InvalidInput(f"code over {max_bytes} bytes")
    try:
        code = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"code is not UTF-8 text (byte {exc.start})") from exc
    if not code.strip():
        raise InvalidInput("no code given (the input is empty)")
    return code
