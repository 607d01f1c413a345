"""Parsing JSON from people and other programs without surprises: every way a
document can be malformed, too deep or too large (an integer over Python's
4,300-digit limit, nesting past the recursion limit) becomes one `InvalidInput`
or `CorruptFile` naming the file and line, never a `RecursionError`."""

from __future__ import annotations

import json
import re
from typing import Any, TypeAlias

from memagent.core.errors import CorruptFile, InvalidInput

MAX_DEPTH = 64

JsonObject: TypeAlias = dict[str, Any]
"""A JSON object where JSON is the contract: an HTTP or MCP body, a file's or a
model's raw JSON before it is validated, the Python API's JSON-shaped results.
Data one module hands another is a model, a dataclass or a TypedDict instead."""

JsonSchema: TypeAlias = dict[str, Any]
"""A JSON Schema document (as a pydantic model's `model_json_schema()` gives it)."""


_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def too_deep(text: str, max_depth: int = MAX_DEPTH) -> int | None:
    """The line of the first bracket nested deeper than `max_depth`, or None.
    Brackets inside strings do not count."""
    if text.count("[") + text.count("{") <= max_depth:
        return None
    depth = 0
    for m in _TOKENS.finditer(text):
        tok = m.group()
        if tok in "[{":
            depth += 1
            if depth > max_depth:
                return text.count("\n", 0, m.start()) + 1
        elif tok in "]}":
            depth -= 1
    return None


def loads(
    text: str,
    where: str,
    *,
    first_line: int = 1,
    max_depth: int = MAX_DEPTH,
    corrupt: bool = False,
) -> Any:
    """`json.loads` that raises `InvalidInput` (or, with `corrupt`, `CorruptFile`
    for a file in the memory home) saying where and what is wrong. `first_line`
    is the line `text` starts on in its file (for one line of JSON lines)."""

    def fail(detail: str, line: int | None) -> Exception:
        if line is not None:
            line += first_line - 1
        elif first_line != 1:
            line = first_line
        if corrupt:
            return CorruptFile(where, detail, line)
        at = f"{where}, line {line}" if line is not None else where
        return InvalidInput(f"{at}: {detail}")

    deep = too_deep(text, max_depth)
    if deep is not None:
        raise fail(f"nested too deeply (more than {max_depth} levels)", deep)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise fail(f"not valid JSON ({exc.msg})", exc.lineno) from exc
    except RecursionError as exc:
        raise fail("nested too deeply", None) from exc
    except ValueError as exc:  # e.g. an integer over the int-to-string digit limit
        raise fail(f"not usable JSON ({exc})", None) from exc
