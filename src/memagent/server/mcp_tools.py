"""The MCP server (official `mcp` SDK): memory tools, notes as resources, prompts.

`build_mcp_server(memory_of)` makes one `MCPServer` whose every tool, prompt and
resource asks `memory_of(request_context)` for the caller's `Memory`: over
stdio that is the one home given to `memagent mcp`; over streamable HTTP (under
`memagent serve`) it is the home of the user whose API key sent the request.
Tool inputs and outputs are pydantic models, so their JSON Schemas are the
models' schemas. Every failure comes back as one plain sentence naming the tool
(`mcp_common.plain_error`), with the message the HTTP API and the CLI give.

Each tool is one small function beside the model of its arguments (see
`mcp_common`), listed in its module's `TOOLS`: here remember, recall, memories,
notes read and write, vault actions and profile; `mcp_notes` edit, move, delete
and list folders; `mcp_memory` restore, history, build_context,
recent_activity, profile_history and profile_learn. `mcp_prompts` holds the
prompts and resources.
"""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from mcp_types import (
    INVALID_PARAMS,
    ListResourcesResult,
    PaginatedRequestParams,
)
from pydantic import BaseModel, ConfigDict, Field, Strict, ValidationError

from memagent.api import MemoryItem, RecallHit
from memagent.core import MemagentError
from memagent.core.jsontext import JsonObject
from memagent.memory.profile.operations import MAX_BATCH_OPERATIONS, Operation
from memagent.server import mcp_memory, mcp_notes, mcp_prompts
from memagent.server.mcp_common import (
    Backend,
    LLMResolver,
    MemoryResolver,
    ModelSlot,
    Tool,
    ToolCall,
    describe_validation,
    one_line,
    plain_error,
    register_tools,
)

__all__ = ["TOOLS", "MemoryResolver", "build_mcp_server"]

ChunkIdField = Field(pattern=r"^chunk-\d{8}-[0-9a-f]{12}$", description="A memory id.")
Tags = Annotated[list[str], Field(max_length=32, description="Tags, e.g. ['jane']")]


# -- remember, recall, list -----------------------------------------------------------
class RememberArgs(BaseModel):
    text: Annotated[str, Field(min_length=1, description="What to remember.")]
    tags: Tags = []


class RememberedIds(BaseModel):
    model_config = ConfigDict(title="Remembered")

    ids: list[str] = Field(description="The memories made (long text is split).")
    count: int


def remember(call: ToolCall, args: RememberArgs) -> RememberedIds:
    """Store something worth remembering as episodic memory."""
    chunks = call.memory.remember(args.text, tags=args.tags)
    return RememberedIds(ids=[c.id for c in chunks], count=len(chunks))


class RecallArgs(BaseModel):
    query: Annotated[str, Field(min_length=1, max_length=4000)]
    k: Annotated[int, Field(ge=1, le=100, description="How many hits.")] = 5


class Recalled(BaseModel):
    hits: list[RecallHit]


def recall(call: ToolCall, args: RecallArgs) -> Recalled:
    """Search all memory (memories, notes, profile facts), best first."""
    return Recalled(hits=call.memory.recall(args.query, k=args.k))


class ListMemoriesArgs(BaseModel):
    limit: Annotated[int, Field(ge=1, le=200, description="How many, newest first.")] = 20
    tags: Annotated[list[str], Field(max_length=32, description="Only with these tags.")] = []
    include_deleted: Annotated[bool, Field(description="Also soft-deleted ones.")] = False


class MemoryListing(BaseModel):
    memories: list[MemoryItem]


def list_memories(call: ToolCall, args: ListMemoriesArgs) -> MemoryListing:
    """List stored memories, newest first (ids for update_memory and forget)."""
    rows = call.memory.memories(
        limit=args.limit, tags=args.tags, include_deleted=args.include_deleted
    )
    return MemoryListing(memories=[MemoryItem.model_validate(r) for r in rows])


# -- correct, undo, forget ------------------------------------------------------------
class UpdateMemoryArgs(BaseModel):
    id: Annotated[str, ChunkIdField]
    text: Annotated[str | None, Field(min_length=1, description="The new text.")] = None
    tags: Annotated[
        list[str] | None, Field(max_length=32, description="The new tags (replaces all).")
    ] = None


def update_memory(call: ToolCall, args: UpdateMemoryArgs) -> MemoryItem:
    """Correct a memory's text or tags (re-indexed, logged, undoable)."""
    return MemoryItem.of(call.memory.update(args.id, text=args.text, tags=args.tags))


class UndoMemoryArgs(BaseModel):
    id: Annotated[str, ChunkIdField]
    edit: Annotated[
        str | None,
        Field(
            pattern=r"^edit-[0-9a-f]{16}$",
            description="The edit to revert (default: the memory's newest one).",
        ),
    ] = None


class UndoneEdit(BaseModel):
    id: str
    edit: str = Field(description="The undo (itself an edit).")
    undoes: str
    now: JsonObject = Field(description="The memory's fields after the undo.")


def undo_memory(call: ToolCall, args: UndoMemoryArgs) -> UndoneEdit:
    """Undo an edit of a memory (update_memory, forget); refused if it changed since."""
    done = call.memory.undo(args.id, edit=args.edit)
    return UndoneEdit(id=args.id, edit=done.edit, undoes=str(done.undoes), now=done.after)


class ForgetArgs(BaseModel):
    id: Annotated[str, ChunkIdField]
    hard: Annotated[bool, Strict(), Field(description="Remove for good (no restore).")] = False


class Forgot(BaseModel):
    id: str
    hard: bool
    restorable: bool = Field(description="True for a soft delete (undo with restore).")


def forget(call: ToolCall, args: ForgetArgs) -> Forgot:
    """Forget a memory: hidden from recall (restorable), or with hard=true removed."""
    call.memory.forget(args.id, hard=args.hard)
    return Forgot(id=args.id, hard=args.hard, restorable=not args.hard)


# -- notes ----------------------------------------------------------------------------
class ReadNoteArgs(BaseModel):
    path: Annotated[str, Field(min_length=1, description="Vault path, e.g. user.md")]


class NoteText(BaseModel):
    path: str
    content: str


def read_note(call: ToolCall, args: ReadNoteArgs) -> NoteText:
    """Read a markdown note from the vault."""
    memory = call.memory
    return NoteText(path=memory.vault.locate(args.path).rel, content=memory.read_note(args.path))


class WriteNoteArgs(BaseModel):
    path: Annotated[str, Field(min_length=1, description="Vault path, e.g. entities/jane.md")]
    content: Annotated[str, Field(description="The note's whole new content (markdown).")]


class NoteSaved(BaseModel):
    path: str
    created: bool
    changed: bool = True


def write_note(call: ToolCall, args: WriteNoteArgs) -> NoteSaved:
    """Create a note, or replace its whole content."""
    result = call.memory.write_note(args.path, args.content)
    return NoteSaved(
        path=result["path"], created=result["created"], changed=result.get("changed", True)
    )


class RunActionsArgs(BaseModel):
    actions: Annotated[
        list[JsonObject],
        Field(
            min_length=1,
            max_length=100,
            description='Vault actions, e.g. [{"action": "read_file", "path": "user.md"}]',
        ),
    ]


def run_actions(call: ToolCall, args: RunActionsArgs) -> JsonObject:
    """Run JSON vault actions (read_file, create_file, update_file, delete_file,
    list_files, go_to_link, …); returns one result per action."""
    return call.memory.run_actions(args.actions)


# -- profile --------------------------------------------------------------------------
class ProfileShowArgs(BaseModel):
    resource: Annotated[
        str | None,
        Field(description="One resource, e.g. user_food_prefs (default: all)."),
    ] = None


def profile_show(call: ToolCall, args: ProfileShowArgs) -> JsonObject:
    """The user's structured profile facts, by resource file (expired items left out)."""
    return call.memory.profile_show(args.resource)


class ProfileApplyArgs(BaseModel):
    operations: Annotated[
        list[Operation],
        Field(
            min_length=1,
            max_length=MAX_BATCH_OPERATIONS,
            description="append / update / remove / no_change operations on profile "
            "resource files (see profile_show for files and paths).",
        ),
    ]
    dry_run: Annotated[bool, Strict(), Field(description="Check only; write nothing.")] = False


def profile_apply(call: ToolCall, args: ProfileApplyArgs) -> JsonObject:
    """Apply profile operations, all or nothing; returns each operation's outcome."""
    ops = [op.model_dump(mode="json", exclude_none=True) for op in args.operations]
    result = call.memory.profile_apply(ops, dry_run=args.dry_run)
    if not result["ok"]:
        raise ToolError(f"batch rejected, nothing changed: {result.get('error')}")
    return result


TOOLS: list[Tool] = [
    remember,
    recall,
    list_memories,
    update_memory,
    undo_memory,
    forget,
    read_note,
    write_note,
    run_actions,
    profile_show,
    profile_apply,
]


class _MemagentMCP(MCPServer[Any]):
    """`MCPServer` with per-request resource lists and plain-sentence errors."""

    def __init__(self, backend: Backend, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._backend = backend

    async def call_tool(
        self, name: str, arguments: JsonObject, context: Context[Any, Any] | None = None
    ) -> Any:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            raise ToolError(plain_error(name, exc)) from None

    async def get_prompt(
        self, name: str, arguments: JsonObject | None = None, context: Any = None
    ) -> Any:
        from mcp import MCPError

        try:
            return await super().get_prompt(name, arguments, context)
        except ValueError as exc:
            cause: BaseException = exc
            while cause.__cause__ is not None and not isinstance(
                cause, ValidationError | MemagentError
            ):
                cause = cause.__cause__
            if isinstance(cause, ValidationError):
                text = describe_validation(cause)
            elif str(exc).startswith("Missing required arguments"):
                missing = str(exc).split(": ", 1)[-1].strip("{}")
                text = f"{missing} is required"
            elif str(exc).startswith("Unknown prompt"):
                text = "there is no such prompt"
            else:
                text = str(cause)
            raise MCPError(code=INVALID_PARAMS, message=one_line(f"{name}: {text}")) from None

    async def read_resource(self, uri: Any, context: Any = None) -> Any:
        try:
            return await super().read_resource(uri, context)
        except ResourceNotFoundError:
            raise ResourceNotFoundError(
                one_line(
                    f"{str(uri)[:200]}: no such resource (notes are memory://notes/<path>, "
                    "memories memory://memories/<id>)"
                )
            ) from None
        except ResourceError as exc:
            raise ResourceError(one_line(f"{str(uri)[:200]}: {exc}")) from None

    async def _handle_list_resources(
        self, ctx: Any, params: PaginatedRequestParams | None
    ) -> ListResourcesResult:
        import anyio.to_thread

        memory = self._backend.memory_of(ctx)
        resources = await anyio.to_thread.run_sync(mcp_prompts.resource_list, memory)
        return ListResourcesResult(resources=resources)


def build_mcp_server(
    memory_of: MemoryResolver,
    *,
    llm_of: LLMResolver | None = None,
    model_slot: ModelSlot | None = None,
) -> MCPServer[Any]:
    """The memagent MCP server; `memory_of` picks the Memory for each request,
    `llm_of` the model profile_learn uses (default: the home's configured one) and
    `model_slot` the admission held around that model call (default: none)."""
    from memagent.core.version import __version__

    backend = Backend(memory_of, llm_of, model_slot)
    mcp = _MemagentMCP(
        backend,
        name="memagent",
        version=__version__,
        instructions=(
            "Long-term memory. Use `recall` before answering questions about the user or "
            "past conversations, `remember` for things worth keeping, `build_context` to "
            "continue from a note or memory, and the note tools for the user's markdown "
            "notes (user.md, entities/<name>.md)."
        ),
        log_level="WARNING",
    )

    register_tools(mcp, backend, [*TOOLS, *mcp_notes.TOOLS, *mcp_memory.TOOLS])
    mcp_prompts.register(mcp, backend)
    return mcp
