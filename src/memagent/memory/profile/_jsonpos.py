"""Line numbers for a location inside a JSON text, so a corrupt hand-edited
resource can be reported as "file, line N: what is wrong". `json` gives
positions only for syntax errors; this walks the text to the value at `loc`."""

from __future__ import annotations

from collections.abc import Sequence
from json import JSONDecodeError, JSONDecoder
from json.decoder import scanstring  # type: ignore[attr-defined]

_DECODER = JSONDecoder()
_WS = " \t\r\n"


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i


def _position(text: str, loc: Sequence[str | int]) -> int:
    """Offset of the value at `loc` (or of the deepest part of it that exists)."""
    i = _skip(text, 0)
    for part in loc:
        if i >= len(text):
            return i
        if text[i] == "{" and isinstance(part, str):
            j = _skip(text, i + 1)
            found = None
            while j < len(text) and text[j] == '"':
                key, j = scanstring(text, j + 1)
                j = _skip(text, j)
                if j >= len(text) or text[j] != ":":
                    return i
                j = _skip(text, j + 1)
                if key == part:
                    found = j
                    break
                _, j = _DECODER.raw_decode(text, j)
                j = _skip(text, j)
                if j < len(text) and text[j] == ",":
                    j = _skip(text, j + 1)
            if found is None:
                return i
            i = found
        elif text[i] == "[" and isinstance(part, int):
            j = _skip(text, i + 1)
            for _ in range(part):
                if j >= len(text) or text[j] == "]":
                    return i
                _, j = _DECODER.raw_decode(text, j)
                j = _skip(text, j)
                if j < len(text) and text[j] == ",":
                    j = _skip(text, j + 1)
            if j >= len(text) or text[j] == "]":
                return i
            i = j
        else:
            return i
    return i


def line_of(text: str, loc: Sequence[str | int]) -> int:
    """1-based line of the value at `loc` in the JSON `text` (best effort)."""
    try:
        pos = _position(text, loc)
    except (JSONDecodeError, ValueError, IndexError):
        pos = 0
    return text.count("\n", 0, pos) + 1
