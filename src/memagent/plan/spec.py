"""Tool contracts: what a tool reads and writes, and how it may be run.

A tool is a plain function (sync or async). `@tool_spec(...)` attaches a `ToolSpec`
to it and returns the *same* function, so it stays callable, importable and
picklable (which `isolation="process"` needs). The planner orders steps by the
resources in these specs and the executor locks them, so every way of acting on
memory (JSON actions, sandboxed code, HTTP, MCP) shares one set of locks.

Resources are strings such as `vault:user.md` or `profile:resource_food`. A name
ending in `/` or `:` is a *prefix* resource: `vault:entities/` overlaps every
resource under it (and `vault:` every vault resource). A resource may be a template
over the step's arguments (`vault:{path}`); when the argument is not known while
planning (it comes from an artifact) the template widens to its literal prefix
(`vault:`), which is always safe; so does a value that is not a canonical path
(`a/../b`, `./a`, `/a`, `a//b`, backslashes), since resources compare as strings.
"""

from __future__ import annotations

import inspect
import string
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal, overload

Isolation = Literal["async", "inline", "thread", "process"]

_MAX_RESOURCE_CHARS = 1024
_SPEC_ATTR = "__tool_spec__"


class LatencyClass(StrEnum):
    """Rough cost of one call; the planner's critical path uses `estimate` seconds."""

    INSTANT = "instant"
    FAST = "fast"
    MEDIUM = "medium"
    SLOW = "slow"
    VERY_SLOW = "very_slow"

    @property
    def estimate(self) -> float:
        return _ESTIMATES[self]


_ESTIMATES = {
    LatencyClass.INSTANT: 0.0001,
    LatencyClass.FAST: 0.01,
    LatencyClass.MEDIUM: 0.1,
    LatencyClass.SLOW: 1.0,
    LatencyClass.VERY_SLOW: 10.0,
}


def is_prefix_resource(name: str) -> bool:
    """A resource ending in `/` or `:` stands for everything under it."""
    return name.endswith(("/", ":"))


def resources_overlap(a: str, b: str) -> bool:
    """True when locking `a` and `b` must exclude each other (for a write)."""
    if a == b:
        return True
    if is_prefix_resource(a) and b.startswith(a):
        return True
    return is_prefix_resource(b) and a.startswith(b)


def validate_resource_name(name: object) -> str:
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"a resource must be a non-empty string, got {name!r}")
    if len(name) > _MAX_RESOURCE_CHARS:
        raise ValueError(f"resource name longer than {_MAX_RESOURCE_CHARS} characters")
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        raise ValueError(f"resource {name!r} contains control characters")
    return name


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    """One resource a tool touches; `name` may hold `{arg}` fields filled per step."""

    name: str
    fields: tuple[str, ...] = field(default=(), compare=False)

    @classmethod
    def parse(cls, value: str | ResourceSpec) -> ResourceSpec:
        if isinstance(value, ResourceSpec):
            return value
        name = validate_resource_name(value)
        fields: list[str] = []
        head_parts: list[str] = []
        try:
            parsed = list(string.Formatter().parse(name))
        except ValueError as exc:
            raise ValueError(f"resource template {name!r}: {exc}") from None
        for literal, fname, spec, conv in parsed:
            if not fields:
                head_parts.append(literal)
            if fname is None:
                continue
            if not fname.isidentifier() or spec or conv:
                raise ValueError(
                    f"resource template {name!r}: fields must be plain argument names like {{path}}"
                )
            fields.append(fname)
        if fields and ("{{" in name or "}}" in name):
            raise ValueError(f"resource template {name!r}: escaped braces are not supported")
        if fields and not _widen("".join(head_parts)):
            raise ValueError(
                f"resource template {name!r} needs a literal prefix ending in '/' or ':' "
                "before its first field (e.g. 'vault:{path}')"
            )
        return cls(name=name, fields=tuple(fields))

    @property
    def is_template(self) -> bool:
        return bool(self.fields)

    def render(self, args: Mapping[str, Any]) -> str:
        """The concrete resource for these step arguments (widened when unknown)."""
        if not self.fields:
            return self.name
        values: dict[str, str] = {}
        for fname in self.fields:
            value = args.get(fname)
            if isinstance(value, bool) or not isinstance(value, str | int):
                return self._widened()
            text = str(value)
            if not _canonical(text):
                return self._widened()
            values[fname] = text
        rendered = self.name.format_map(values)
        if len(rendered) > _MAX_RESOURCE_CHARS:
            return self._widened()
        return rendered

    def _widened(self) -> str:
        head = self.name.split("{", 1)[0]
        return _widen(head)


def _canonical(text: str) -> bool:
    """A value that names one thing one way: no `.`/`..`/empty segments, no `\\`.

    Resources are compared as strings, so `entities/../user.md` would not conflict
    with `user.md`; such values widen the resource to its prefix instead.
    """
    if not text or "\\" in text or any(ord(c) < 32 for c in text):
        return False
    body = text[:-1] if text.endswith("/") else text  # `dir/` is a fine prefix
    return all(part not in ("", ".", "..") for part in body.split("/"))


def _widen(head: str) -> str:
    cut = max(head.rfind("/"), head.rfind(":"))
    return head[: cut + 1] if cut >= 0 else ""


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool's contract. Build it with `@tool_spec`; read it with `ToolSpec.of(fn)`."""

    name: str
    fn: Callable[..., Any] = field(compare=False, repr=False)
    reads: tuple[ResourceSpec, ...] = ()
    writes: tuple[ResourceSpec, ...] = ()
    idempotent: bool = False
    concurrency_cap: int | None = None
    latency_class: LatencyClass = LatencyClass.FAST
    timeout: float | None = None
    isolation: Isolation = "thread"
    signature: inspect.Signature | None = field(default=None, compare=False, repr=False)

    @property
    def is_async(self) -> bool:
        return self.isolation == "async"

    @classmethod
    def of(cls, tool: Callable[..., Any]) -> ToolSpec:
        """The spec attached by `@tool_spec`, or a default one for a plain callable.

        A plain callable touches no declared resources, is not idempotent (never
        retried) and runs in a thread (or on the loop if it is a coroutine function).
        """
        spec = getattr(tool, _SPEC_ATTR, None)
        if isinstance(spec, ToolSpec):
            return spec
        if not callable(tool):
            raise TypeError(f"a tool must be callable, got {type(tool).__name__}")
        return _build(
            tool,
            name=None,
            reads=(),
            writes=(),
            idempotent=False,
            concurrency_cap=None,
            latency_class=LatencyClass.FAST,
            timeout=None,
            isolation=None,
        )


def _is_coroutine_callable(fn: Callable[..., Any]) -> bool:
    if inspect.iscoroutinefunction(fn):
        return True
    call = getattr(fn, "__call__", None)  # noqa: B004
    return call is not None and inspect.iscoroutinefunction(call)


def _build(
    fn: Callable[..., Any],
    *,
    name: str | None,
    reads: Iterable[str | ResourceSpec],
    writes: Iterable[str | ResourceSpec],
    idempotent: bool,
    concurrency_cap: int | None,
    latency_class: LatencyClass | str,
    timeout: float | None,
    isolation: Literal["thread", "process", "inline"] | None,
) -> ToolSpec:
    if isinstance(reads, str) or isinstance(writes, str):
        raise TypeError("reads/writes take a list of resources, not a single string")
    if concurrency_cap is not None and (
        isinstance(concurrency_cap, bool)
        or not isinstance(concurrency_cap, int)
        or concurrency_cap < 1
    ):
        raise ValueError(f"concurrency_cap must be a positive int, got {concurrency_cap!r}")
    if timeout is not None and (isinstance(timeout, bool) or not timeout > 0):
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    is_async = _is_coroutine_callable(fn)
    mode: Isolation
    if is_async:
        if isolation is not None:
            raise ValueError("isolation applies to sync tools; an async tool runs on the loop")
        mode = "async"
    else:
        mode = isolation or "thread"
        if mode not in ("thread", "process", "inline"):
            raise ValueError(f"isolation must be 'thread', 'process' or 'inline', got {mode!r}")
        if mode == "inline" and timeout is not None:
            raise ValueError("an inline tool runs on the event loop and cannot be timed out")
        if mode == "process" and "<locals>" in getattr(fn, "__qualname__", "<locals>"):
            raise ValueError(
                "isolation='process' needs a module-level function (it is pickled by name)"
            )
    try:
        signature: inspect.Signature | None = inspect.signature(fn)
    except (TypeError, ValueError):
        signature = None
    tool_name = name or getattr(fn, "__name__", None) or type(fn).__name__
    return ToolSpec(
        name=tool_name,
        fn=fn,
        reads=tuple(ResourceSpec.parse(r) for r in reads),
        writes=tuple(ResourceSpec.parse(w) for w in writes),
        idempotent=bool(idempotent),
        concurrency_cap=concurrency_cap,
        latency_class=LatencyClass(latency_class),
        timeout=float(timeout) if timeout is not None else None,
        isolation=mode,
        signature=signature,
    )


F = Callable[..., Any]


@overload
def tool_spec(fn: F, /) -> F: ...


@overload
def tool_spec(
    *,
    name: str | None = None,
    reads: Iterable[str | ResourceSpec] = (),
    writes: Iterable[str | ResourceSpec] = (),
    idempotent: bool = False,
    concurrency_cap: int | None = None,
    latency_class: LatencyClass | str = LatencyClass.FAST,
    timeout: float | None = None,
    isolation: Literal["thread", "process", "inline"] | None = None,
) -> Callable[[F], F]: ...


def tool_spec(
    fn: F | None = None,
    /,
    *,
    name: str | None = None,
    reads: Iterable[str | ResourceSpec] = (),
    writes: Iterable[str | ResourceSpec] = (),
    idempotent: bool = False,
    concurrency_cap: int | None = None,
    latency_class: LatencyClass | str = LatencyClass.FAST,
    timeout: float | None = None,
    isolation: Literal["thread", "process", "inline"] | None = None,
) -> F | Callable[[F], F]:
    """Declare a tool's contract; usable bare (`@tool_spec`) or with arguments.

    - `reads` / `writes`: resources (templates allowed: `"vault:{path}"`).
    - `idempotent`: only idempotent tools are retried after a failure.
    - `concurrency_cap`: at most this many calls of this tool at once.
    - `latency_class`: cost estimate for the critical path.
    - `timeout`: seconds per attempt (overrides the executor's default).
    - `isolation` (sync tools): `"thread"` (default; a timed-out thread cannot be
      killed and keeps running in the background), `"process"` (a child process
      that is terminated on timeout or cancellation; arguments and result must
      pickle), or `"inline"` (run on the event loop: only for tiny pure functions;
      no timeout applies, not even the executor's default).
    """

    def decorate(f: F) -> F:
        spec = _build(
            f,
            name=name,
            reads=reads,
            writes=writes,
            idempotent=idempotent,
            concurrency_cap=concurrency_cap,
            latency_class=latency_class,
            timeout=timeout,
            isolation=isolation,
        )
        try:
            setattr(f, _SPEC_ATTR, spec)
        except (AttributeError, TypeError):
            raise TypeError(
                f"cannot attach a tool spec to {f!r}; decorate a function instead"
            ) from None
        return f

    if fn is not None:
        return decorate(fn)
    return decorate
