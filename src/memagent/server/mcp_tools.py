"""The MCP server (official `mcp` SDK): memory tools and vault notes as resources.

`build_mcp_server(memory_of)` makes one `MCPServer` whose every tool and
resource asks `memory_of(request_context)` for the caller's `Memory`: over
stdio that is the one home given to `memagent mcp`; over streamable HTTP (under
`memagent serve`) it is the home of the user whose API key sent the request.
Tool inputs and outputs are pydantic models, so their JSON Schemas are the
models' schemas. Errors come back as MCP tool errors carrying the same message
the HTTP API and the CLI give.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any
from urllib.parse import quote, unquote

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp_types import ListResourcesResult, PaginatedRequestParams
from mcp_types import Resource as MCPResource
from pydantic import BaseModel, Field

from memagent.api import Memory, MemoryItem, RecallHit
from memagent.core import MemagentError
from memagent.memory.profile.operations import MAX_BATCH_OPERATIONS, Operation

MemoryResolver = Callable[[Any], Memory]
"""Given the MCP request context (or None outside a request), the caller's Memory."""

VAULT_URI = "memagent://vault/"
MAX_LISTED_NOTES = 1000


class Remembered(BaseModel):
    ids: list[str] = Field(description="The memories made (long text is split).")
    count: int


class Recalled(BaseModel):
    hits: list[RecallHit]


class MemoryListing(BaseModel):
    memories: list[MemoryItem]


class Forgot(BaseModel):
    id: str
    hard: bool
    restorable: bool = Field(description="True for a soft delete (undo with restore).")


class UndoneEdit(BaseModel):
    id: str
    edit: str = Field(description="The undo (itself an edit).")
    undoes: str
    now: dict[str, Any] = Field(description="The memory's fields after the undo.")


ChunkIdField = Field(pattern=r"^chunk-\d{8}-[0-9a-f]{12}$", description="A memory id.")


class NoteText(BaseModel):
    path: str
    content: str


class NoteSaved(BaseModel):
    path: str
    created: bool
    changed: bool = True


def _fail(exc: MemagentError) -> ToolError:
    return ToolError(str(exc))


def note_uri(path: str) -> str:
    return VAULT_URI + quote(path, safe="/")


class _MemagentMCP(MCPServer[Any]):
    """`MCPServer` whose resource list is the caller's vault notes (per request)."""

    def __init__(self, memory_of: MemoryResolver, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._memory_of = memory_of

    async def _handle_list_resources(
        self, ctx: Any, params: PaginatedRequestParams | None
    ) -> ListResourcesResult:
        import anyio.to_thread

        memory = self._memory_of(ctx)
        try:
            notes = await anyio.to_thread.run_sync(memory.list_notes)
        except MemagentError:
            notes = []
        resources = [
            MCPResource(
                uri=note_uri(path),
                name=path,
                title=path.rsplit("/", 1)[-1],
                mime_type="text/markdown",
            )
            for path in notes[:MAX_LISTED_NOTES]
            if path.endswith(".md")
        ]
        return ListResourcesResult(resources=resources)


def build_mcp_server(memory_of: MemoryResolver) -> MCPServer[Any]:
    """The memagent MCP server; `memory_of` picks the Memory for each request."""
    from memagent.core.version import __version__

    mcp = _MemagentMCP(
        memory_of,
        name="memagent",
        version=__version__,
        instructions=(
            "Long-term memory. Use `recall` before answering questions about the user or "
            "past conversations, `remember` for things worth keeping, and the vault tools "
            "for the user's markdown notes (user.md, entities/<name>.md)."
        ),
        log_level="WARNING",
    )

    def current(ctx: Context) -> Memory:
        try:
            request_context = ctx.request_context
        except ValueError:
            request_context = None
        return memory_of(request_context)

    @mcp.tool()
    def remember(
        text: Annotated[str, Field(min_length=1, description="What to remember.")],
        ctx: Context,
        tags: Annotated[list[str], Field(max_length=32, description="Tags, e.g. ['jane']")] = [],  # noqa: B006
    ) -> Remembered:
        """Store something worth remembering as episodic memory."""
        try:
            chunks = current(ctx).remember(text, tags=tags)
        except MemagentError as exc:
            raise _fail(exc) from exc
        return Remembered(ids=[c.id for c in chunks], count=len(chunks))

    @mcp.tool()
    def recall(
        query: Annotated[str, Field(min_length=1, max_length=4000)],
        ctx: Context,
        k: Annotated[int, Field(ge=1, le=100, description="How many hits.")] = 5,
    ) -> Recalled:
        """Search all memory (memories, notes, profile facts), best first."""
        try:
            return Recalled(hits=current(ctx).recall(query, k=k))
        except MemagentError as exc:
            raise _fail(exc) from exc

    @mcp.tool()
    def list_memories(
        ctx: Context,
        limit: Annotated[int, Field(ge=1, le=200, description="How many, newest first.")] = 20,
        tags: Annotated[list[str], Field(max_length=32, description="Only with these tags.")] = [],  # noqa: B006
        include_deleted: Annotated[bool, Field(description="Also soft-deleted ones.")] = False,
    ) -> MemoryListing:
        """List stored memories, newest first (ids for update_memory and forget)."""
        try:
            rows = current(ctx).memories(limit=limit, tags=tags, include_deleted=include_deleted)
        except MemagentError as exc:
            raise _fail(exc) from exc
        return MemoryListing(memories=[MemoryItem.model_validate(r) for r in rows])

    @mcp.tool()
    def update_memory(
        id: Annotated[str, ChunkIdField],
        ctx: Context,
        text: Annotated[str | None, Field(min_length=1, description="The new text.")] = None,
        tags: Annotated[
            list[str] | None, Field(max_length=32, description="The new tags (replaces all).")
        ] = None,
    ) -> MemoryItem:
        """Correct a memory's text or tags (re-indexed, logged, undoable)."""
        try:
            chunk = current(ctx).update(id, text=text, tags=tags)
        except MemagentError as exc:
            raise _fail(exc) from exc
        return MemoryItem.of(chunk)

    @mcp.tool()
    def undo_memory(
        id: Annotated[str, ChunkIdField],
        ctx: Context,
        edit: Annotated[
            str | None,
            Field(
                pattern=r"^edit-[0-9a-f]{16}$",
                description="The edit to revert (default: the memory's newest one).",
            ),
        ] = None,
    ) -> UndoneEdit:
        """Undo an edit of a memory (update_memory, forget); refused if it changed since."""
        try:
            done = current(ctx).undo(id, edit=edit)
        except MemagentError as exc:
            raise _fail(exc) from exc
        return UndoneEdit(id=id, edit=done.edit, undoes=str(done.undoes), now=done.after)

    @mcp.tool()
    def forget(
        id: Annotated[str, ChunkIdField],
        ctx: Context,
        hard: Annotated[bool, Field(description="Remove for good (no restore).")] = False,
    ) -> Forgot:
        """Forget a memory: hidden from recall (restorable), or with hard=true removed."""
        try:
            current(ctx).forget(id, hard=hard)
        except MemagentError as exc:
            raise _fail(exc) from exc
        return Forgot(id=id, hard=hard, restorable=not hard)

    @mcp.tool()
    def read_note(
        path: Annotated[str, Field(min_length=1, description="Vault path, e.g. user.md")],
        ctx: Context,
    ) -> NoteText:
        """Read a markdown note from the vault."""
        memory = current(ctx)
        try:
            return NoteText(path=memory.vault.locate(path).rel, content=memory.read_note(path))
        except MemagentError as exc:
            raise _fail(exc) from exc

    @mcp.tool()
    def write_note(
        path: Annotated[str, Field(min_length=1, description="Vault path, e.g. entities/jane.md")],
        content: Annotated[str, Field(description="The note's whole new content (markdown).")],
        ctx: Context,
    ) -> NoteSaved:
        """Create a note, or replace its whole content."""
        try:
            result = current(ctx).write_note(path, content)
        except MemagentError as exc:
            raise _fail(exc) from exc
        return NoteSaved(
            path=result["path"], created=result["created"], changed=result.get("changed", True)
        )

    @mcp.tool()
    def run_actions(
        actions: Annotated[
            list[dict[str, Any]],
            Field(
                min_length=1,
                max_length=100,
                description='Vault actions, e.g. [{"action": "read_file", "path": "user.md"}]',
            ),
        ],
        ctx: Context,
    ) -> dict[str, Any]:
        """Run JSON vault actions (read_file, create_file, update_file, delete_file,
        list_files, go_to_link, …); returns one result per action."""
        try:
            return current(ctx).run_actions(actions)
        except MemagentError as exc:
            raise _fail(exc) from exc

    @mcp.tool()
    def profile_show(
        ctx: Context,
        resource: Annotated[
            str | None,
            Field(description="One resource, e.g. user_food_prefs (default: all)."),
        ] = None,
    ) -> dict[str, Any]:
        """The user's structured profile facts, by resource file (expired items left out)."""
        try:
            return current(ctx).profile_show(resource)
        except MemagentError as exc:
            raise _fail(exc) from exc

    @mcp.tool()
    def profile_apply(
        operations: Annotated[
            list[Operation],
            Field(
                min_length=1,
                max_length=MAX_BATCH_OPERATIONS,
                description="append / update / remove / no_change operations on profile "
                "resource files (see profile_show for files and paths).",
            ),
        ],
        ctx: Context,
        dry_run: Annotated[bool, Field(description="Check only; write nothing.")] = False,
    ) -> dict[str, Any]:
        """Apply profile operations, all or nothing; returns each operation's outcome."""
        ops = [op.model_dump(mode="json", exclude_none=True) for op in operations]
        try:
            result = current(ctx).profile_apply(ops, dry_run=dry_run)
        except MemagentError as exc:
            raise _fail(exc) from exc
        if not result["ok"]:
            raise ToolError(f"batch rejected, nothing changed: {result.get('error')}")
        return result

    @mcp.resource(
        VAULT_URI + "{+path}",
        name="vault-note",
        description="A markdown note of the vault (e.g. memagent://vault/user.md).",
        mime_type="text/markdown",
    )
    def vault_note(path: str, ctx: Context) -> str:
        try:
            return current(ctx).read_note(unquote(path))
        except MemagentError as exc:
            raise ResourceError(str(exc)) from exc

    return mcp
