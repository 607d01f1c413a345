"""Safe formatting: `str.format`/`format_map` whose field paths go through the
interpreter's attribute rules and whose output is bounded, and the host
recursion guard."""

from __future__ import annotations

import string
import sys
from typing import Any

from memagent.sandbox._api import Compiler
from memagent.sandbox.limits import Limits


class SafeFormatter(string.Formatter):
    """`str.format`/`format_map` whose field paths go through the interpreter's
    attribute rules and whose total output is bounded."""

    def __init__(self, interp: Compiler) -> None:
        self.interp = interp
        self.total = 0

    def get_field(self, field_name: str, args: Any, kwargs: Any) -> Any:
        import _string  # CPython's own parser of "a.b[c]" field names

        first, rest = _string.formatter_field_name_split(field_name)
        obj = self.get_value(first, args, kwargs)
        for is_attr, key in rest:
            obj = self.interp.getattr(obj, key) if is_attr else self.interp.getitem(obj, key)
        return obj, first

    def convert_field(self, value: Any, conversion: str | None) -> Any:
        if conversion == "r":
            return self.interp.to_repr(value)
        if conversion == "s":
            return self.interp.to_str(value)
        if conversion == "a":
            return ascii(self.interp.to_repr(value))[1:-1]
        if conversion is None:
            return value
        raise ValueError(f"Unknown conversion specifier {conversion}")

    def format_field(self, value: Any, format_spec: str) -> Any:
        self.interp.tick()
        out = self.interp.format_value(value, format_spec)
        self.total += len(out)
        self.interp.need_len(self.total)
        return out


def safe_format(interp: Compiler, fmt: str, args: tuple[Any, ...], kwargs: Any) -> str:
    if not isinstance(fmt, str):
        raise TypeError("format requires a str")
    return SafeFormatter(interp).vformat(fmt, args, kwargs)


def host_recursion_guard(limits: Limits) -> int:
    """Raise the host's recursion limit enough for `max_recursion` model frames;
    returns the previous value so the caller can restore it."""
    old = sys.getrecursionlimit()
    needed = min(limits.max_recursion * 25 + 1000, 30_000)
    if needed > old:
        sys.setrecursionlimit(needed)
    return old
