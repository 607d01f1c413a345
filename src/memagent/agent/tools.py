"""The tools registry: what the agent may call besides the vault actions.

A `Tool` is a plain Python function with type hints and a docstring; its
arguments are validated by a pydantic model built from its signature, and the
same model gives the JSON Schema of its action (`{"action": NAME, …args}`).

The registry holds a *catalog* (built-ins such as `now` and `calculate`, plugins
from the `memagent.tools` entry point group, tools given to `Agent(tools=[…])`)
and the *loaded* set. Default tools are always loaded; `search_tools(query)` and
`load_tools(names)` find and load more, and a loaded tool is in the next
request's schema and callable in the sandbox at once.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import entry_points
from typing import Any, get_type_hints

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from memagent.core import InvalidInput, NotFound
from memagent.core.jsontext import JsonSchema

ENTRY_POINT_GROUP = "memagent.tools"
TOOL_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
_WORD = re.compile(r"[a-z0-9]+")


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True)
class ToolCard:
    """How a tool is shown to the model: its name, signature and description."""

    name: str
    signature: str
    description: str

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "signature": self.signature, "description": self.description}


@dataclass
class Tool:
    """A callable the model may use, with validated arguments."""

    name: str
    description: str
    func: Callable[..., Any]
    params: type[BaseModel]
    default: bool = False
    """Always loaded (the memory tools, search_tools, load_tools)."""

    @classmethod
    def of(
        cls, func: Callable[..., Any], *, name: str | None = None, default: bool = False
    ) -> Tool:
        """A tool from a typed function; its docstring's first paragraph describes it."""
        tool_name: str = name or str(getattr(func, "__name__", ""))
        if not TOOL_NAME.match(tool_name):
            raise InvalidInput(
                f"invalid tool name {tool_name!r}: lower-case letters, digits and '_'"
            )
        doc = inspect.getdoc(func) or ""
        description = doc.split("\n\n", 1)[0].replace("\n", " ").strip() or tool_name
        return cls(tool_name, description, func, _params_model(tool_name, func), default)

    def call(self, args: dict[str, Any]) -> Any:
        """Validate `args` and call the function; `InvalidInput` on bad arguments."""
        if not isinstance(args, dict):
            raise InvalidInput(f"{self.name}: arguments must be an object")
        try:
            model = self.params.model_validate(args)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
                for e in exc.errors()[:5]
            )
            raise InvalidInput(f"{self.name}: {problems}. Signature: {self.signature()}") from None
        return self.func(**{k: getattr(model, k) for k in type(model).model_fields})

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        names = list(self.params.model_fields)
        if len(args) > len(names):
            raise TypeError(f"{self.name}() takes {len(names)} arguments, got {len(args)}")
        merged = dict(zip(names, args, strict=False))
        dup = set(merged) & set(kwargs)
        if dup:
            raise TypeError(f"{self.name}() got multiple values for {sorted(dup)}")
        merged.update(kwargs)
        return self.call(merged)

    def signature(self) -> str:
        parts = []
        for fname, f in self.params.model_fields.items():
            ann = _type_name(f.annotation)
            parts.append(
                f"{fname}: {ann}" if f.is_required() else f"{fname}: {ann} = {f.default!r}"
            )
        return f"{self.name}({', '.join(parts)})"

    def action_schema(self) -> JsonSchema:
        """JSON Schema of this tool as an action object."""
        schema = self.params.model_json_schema()
        props = {"action": {"const": self.name}, **schema.get("properties", {})}
        props["assign_to"] = {"type": "string", "pattern": r"^[A-Za-z_][A-Za-z0-9_]{0,63}$"}
        out: JsonSchema = {
            "type": "object",
            "description": self.description,
            "properties": props,
            "required": ["action", *schema.get("required", [])],
            "additionalProperties": False,
        }
        if "$defs" in schema:
            out["$defs"] = schema["$defs"]
        return out

    def card(self) -> ToolCard:
        return ToolCard(self.name, self.signature(), self.description)


def _type_name(ann: Any) -> str:
    if isinstance(ann, type):
        return ann.__name__
    return str(ann).replace("typing.", "")


def _params_model(name: str, func: Callable[..., Any]) -> type[BaseModel]:
    try:
        sig = inspect.signature(func)
        hints = get_type_hints(func)
    except (TypeError, ValueError, NameError) as exc:
        raise InvalidInput(f"tool {name}: cannot read its signature ({exc})") from exc
    fields: dict[str, Any] = {}
    for pname, p in sig.parameters.items():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise InvalidInput(f"tool {name}: *args/**kwargs are not supported")
        if pname not in hints:
            raise InvalidInput(f"tool {name}: parameter {pname!r} needs a type hint")
        default = ... if p.default is p.empty else p.default
        fields[pname] = (hints[pname], default)
    model: type[BaseModel] = create_model(f"{name}_args", __base__=_Args, **fields)
    return model


# -- built-in catalog tools -------------------------------------------------------------


def now() -> str:
    """The current date and time (UTC, ISO 8601) and the weekday."""
    t = datetime.now(UTC)
    return f"{t.isoformat(timespec='seconds')} ({t.strftime('%A')})"


def calculate(expression: str) -> Any:
    """Evaluate an arithmetic expression, e.g. '(17 * 3) / 4' or 'math.sqrt(2)'.

    Runs in the restricted sandbox with a small budget, so it can only compute.
    """
    from memagent.sandbox import Limits, default_pool

    if len(expression) > 2000:
        raise InvalidInput("expression is longer than 2000 characters")
    limits = Limits(max_operations=100_000, timeout_s=2.0, max_int_bits=4096)
    result = default_pool().run(f"import math\n{expression}", limits=limits)
    if result.error:
        raise InvalidInput(f"cannot calculate {expression[:80]!r}: {result.error}")
    return result.result


BUILTIN_TOOLS: tuple[Callable[..., Any], ...] = (now, calculate)


def plugin_tools() -> list[Tool]:
    """Tools that installed packages declare under the `memagent.tools` entry point:
    each entry is a function, a `Tool`, or a list of them."""
    found: list[Tool] = []
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            obj = ep.load()
        except Exception as exc:  # a broken plugin must not break the agent
            raise InvalidInput(f"tool plugin {ep.name!r} failed to load: {exc}") from exc
        items = obj if isinstance(obj, (list, tuple)) else [obj]
        found.extend(as_tool(i) for i in items)
    return found


def as_tool(obj: Tool | Callable[..., Any]) -> Tool:
    if isinstance(obj, Tool):
        return obj
    if callable(obj):
        return Tool.of(obj)
    raise InvalidInput(f"not a tool: {obj!r}")


def agent_registry(
    memory_tools: Iterable[Tool], extra: Iterable[Tool | Callable[..., Any]] = ()
) -> ToolRegistry:
    """An agent's registry, in the order the model is shown it: the memory tools,
    `search_tools` and `load_tools` over this registry, the built-ins, then the
    plugins and `extra` (these two replace a tool of the same name)."""
    registry = ToolRegistry()
    registry.extend(memory_tools)
    registry.extend(registry.discovery_tools())
    registry.extend(BUILTIN_TOOLS)
    for plugin in plugin_tools():
        registry.add(plugin, replace=True)
    for tool in extra:
        registry.add(tool, replace=True)
    return registry


@dataclass
class ToolRegistry:
    """The catalog and the loaded tools of one agent."""

    catalog: dict[str, Tool] = field(default_factory=dict)
    loaded: list[str] = field(default_factory=list)

    def add(self, tool: Tool | Callable[..., Any], *, replace: bool = False) -> Tool:
        t = as_tool(tool)
        if t.name in self.catalog and not replace:
            raise InvalidInput(f"a tool named {t.name!r} is already registered")
        self.catalog[t.name] = t
        if t.default and t.name not in self.loaded:
            self.loaded.append(t.name)
        return t

    def extend(self, tools: Iterable[Tool | Callable[..., Any]]) -> None:
        for t in tools:
            self.add(t)

    def loaded_tools(self) -> list[Tool]:
        return [self.catalog[n] for n in self.loaded]

    def is_loaded(self, name: str) -> bool:
        return name in self.loaded

    def get(self, name: str) -> Tool:
        tool = self.catalog.get(name)
        if tool is None:
            raise NotFound(f"no tool {name!r}; use search_tools to find one")
        return tool

    def search(self, query: str, *, limit: int = 8) -> list[dict[str, str | bool]]:
        """Catalog tools ranked by shared words with `query` (name and description)."""
        if not isinstance(query, str) or len(query) > 500:
            raise InvalidInput("query must be text of at most 500 characters")
        words = set(_WORD.findall(query.lower()))
        scored = []
        for tool in self.catalog.values():
            text = f"{tool.name.replace('_', ' ')} {tool.description}".lower()
            have = set(_WORD.findall(text))
            score = len(words & have) + (2 if tool.name in query.lower() else 0)
            if score or not words:
                scored.append((score, tool.name))
        scored.sort(key=lambda s: (-s[0], s[1]))
        return [
            {**self.catalog[n].card().to_json(), "loaded": self.is_loaded(n)}
            for _, n in scored[:limit]
        ]

    def discovery_tools(self) -> list[Tool]:
        """`search_tools` and `load_tools` over this registry (always loaded)."""

        def search_tools(query: str) -> list[dict[str, str | bool]]:
            """Find more tools by what they do; load them with load_tools."""
            return self.search(query)

        def load_tools(names: list[str]) -> dict[str, list[str]]:
            """Load tools by name (from search_tools); they are usable at once."""
            return self.load(names)

        return [Tool.of(search_tools, default=True), Tool.of(load_tools, default=True)]

    def load(self, names: list[str]) -> dict[str, list[str]]:
        """Load catalog tools by name; all or nothing."""
        if isinstance(names, str):
            names = [names]
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise InvalidInput("load_tools takes a list of tool names")
        unknown = [n for n in names if n not in self.catalog]
        if unknown:
            raise NotFound(f"unknown tools {unknown}; known: {', '.join(sorted(self.catalog))}")
        added = [n for n in names if n not in self.loaded]
        self.loaded.extend(dict.fromkeys(added))
        return {"loaded": added, "signatures": [self.catalog[n].signature() for n in names]}
