"""What the MCP tool modules share: how a tool finds the caller's memory (and
model), how a tool is registered, and how any failure becomes one plain sentence
for the client.

A tool is one function `tool(call: ToolCall, args: ItsArgs) -> ItsResult`, its
docstring the description the client reads, beside the pydantic model of its
arguments (whose JSON Schema is the tool's input schema); each tool module lists
its functions in `TOOLS`, and `register_tools` adds them to a server.

An MCP client is usually a model: an error it can read and act on is "forget:
'id' is required", not a pydantic dump with links. `plain_error` turns every
failure a tool call can meet (invalid arguments, a memagent refusal, an unknown
tool, a crash) into one line naming the tool.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, get_type_hints

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError, UnexpectedToolError
from pydantic import BaseModel, ValidationError

from memagent.api import Memory
from memagent.core import MemagentError

if TYPE_CHECKING:
    from memagent.llm import LLM

MemoryResolver = Callable[[Any], Memory]
"""Given the MCP request context (or None outside a request), the caller's Memory."""
LLMResolver = Callable[[Any, Memory], "LLM"]
"""Given the request context and the caller's Memory, the model to learn with."""
ModelSlot = Callable[[Any], AbstractAsyncContextManager[None]]
"""Held around a model call: the server's model admission (a no-op over stdio)."""

MAX_MESSAGE_CHARS = 300


@dataclass(frozen=True)
class Backend:
    """How the tools of one MCP server reach the caller's memory and model."""

    memory_of: MemoryResolver
    llm_of: LLMResolver | None = None
    model_slot: ModelSlot | None = None

    def request_context(self, ctx: Context) -> Any:
        try:
            return ctx.request_context
        except ValueError:
            return None

    def memory(self, ctx: Context) -> Memory:
        return self.memory_of(self.request_context(ctx))

    def call(self, ctx: Context) -> ToolCall:
        """What a tool called in the request `ctx` works with."""
        request_context = self.request_context(ctx)
        return ToolCall(self.memory_of(request_context), self, request_context)


@dataclass(frozen=True)
class ToolCall:
    """What one tool call works with besides its arguments: the caller's memory,
    and for a tool that asks the model, the model and the admission around it."""

    memory: Memory
    backend: Backend
    request_context: Any = None

    def llm(self) -> LLM | None:
        """The model to learn with (None: the memory home's configured one)."""
        llm_of = self.backend.llm_of
        return llm_of(self.request_context, self.memory) if llm_of else None

    def model_slot(self) -> AbstractAsyncContextManager[Any]:
        """Held around a model call: the server's admission (nothing over stdio)."""
        slot = self.backend.model_slot
        return slot(self.request_context) if slot else nullcontext()


Tool = Callable[[ToolCall, Any], Any] | Callable[[ToolCall, Any], Awaitable[Any]]
"""An MCP tool function (see the module doc)."""


def tool_function(tool: Tool, backend: Backend) -> Callable[..., Any]:
    """`tool` as the SDK registers a function: one keyword parameter per field of its
    arguments model (so the input schema is that model's), plus the request context."""
    hints = get_type_hints(tool)
    model: type[BaseModel] = hints["args"]
    annotated = get_type_hints(model, include_extras=True)
    params = [
        inspect.Parameter(
            name,
            inspect.Parameter.KEYWORD_ONLY,
            annotation=annotated[name],
            default=inspect.Parameter.empty
            if field.is_required()
            else field.get_default(call_default_factory=True),
        )
        for name, field in model.model_fields.items()
    ]
    params.append(inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context))

    if inspect.iscoroutinefunction(tool):

        async def run_async(ctx: Context, **arguments: Any) -> Any:
            return await tool(backend.call(ctx), model.model_validate(arguments))

        run: Callable[..., Any] = run_async
    else:

        def run_sync(ctx: Context, **arguments: Any) -> Any:
            return tool(backend.call(ctx), model.model_validate(arguments))

        run = run_sync
    run.__name__ = run.__qualname__ = tool.__name__
    run.__doc__ = inspect.cleandoc(tool.__doc__ or "")  # no indentation for the client
    run.__signature__ = inspect.Signature(params, return_annotation=hints["return"])  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in params} | {"return": hints["return"]}
    return run


def register_tools(mcp: MCPServer[Any], backend: Backend, tools: Sequence[Tool]) -> None:
    """Add each tool of `tools` to `mcp`, named after its function."""
    for tool in tools:
        mcp.add_tool(tool_function(tool, backend))


def _loc(parts: tuple[int | str, ...]) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def describe_validation(exc: ValidationError) -> str:
    """The first problem of `exc` in words ("'id' is required"), never the input."""
    errors = exc.errors(include_url=False, include_input=False)
    if not errors:
        return "the arguments are not valid"
    first = errors[0]
    where = _loc(tuple(first.get("loc") or ()))
    kind = first.get("type", "")
    if kind == "missing":
        text = f"'{where}' is required"
    elif kind in ("extra_forbidden", "unexpected_keyword_argument"):
        text = f"'{where}' is not an argument of this tool"
    else:
        msg = str(first.get("msg") or "is not valid")
        msg = msg[:1].lower() + msg[1:]
        text = f"'{where}': {msg}" if where else msg
    more = len(errors) - 1
    if more:
        text += f" (and {more} more problem{'s' if more > 1 else ''})"
    return text


def one_line(text: str) -> str:
    flat = " ".join(text.split())
    if len(flat) > MAX_MESSAGE_CHARS:
        flat = flat[: MAX_MESSAGE_CHARS - 1] + "…"
    return flat


def plain_error(tool: str, exc: BaseException) -> str:
    """One sentence for the failure `exc` of the call of `tool` (see the module doc)."""
    cause: BaseException | None = exc
    while isinstance(cause, ToolError | ResourceError) and cause.__cause__ is not None:
        cause = cause.__cause__
    if isinstance(cause, ValidationError):
        return one_line(f"{tool}: {describe_validation(cause)}")
    if isinstance(cause, MemagentError):
        return one_line(f"{tool}: {cause}")
    if isinstance(exc, UnexpectedToolError) or not isinstance(cause, ToolError | ResourceError):
        return f"{tool}: the tool failed unexpectedly (the server log has the details)"
    text = str(cause)
    prefix = f"Error executing tool {tool}: "
    while text.startswith(prefix):
        text = text[len(prefix) :]
    if text.startswith("Unknown tool: "):
        return one_line(f"there is no tool named '{text.removeprefix('Unknown tool: ')}'")
    return one_line(f"{tool}: {text}")


def fail(exc: MemagentError) -> ToolError:
    return ToolError(str(exc))
