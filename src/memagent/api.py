"""The Python API: one memory home behind one object.

```python
from memagent import Memory

with Memory.open("~/mem") as mem:
    mem.remember("Jane prefers tea over coffee.", tags=["jane"])
    for hit in mem.recall("what does Jane drink?", k=3):
        print(hit.score, hit.content)
```

`Memory` is what the HTTP server and the MCP server call too, so a program, a
web client and an MCP client see the same behaviour and the same errors
(`memagent.core` exceptions). Every method that does I/O has an `a…` twin that
runs it in a worker thread (`asyncio.to_thread`), for asyncio programs.

One `Memory` may be shared by many threads: operations on its index run one at a
time (they share one SQLite connection); writes are in any case serialized by
the memory home's lock, across processes too.
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from datetime import date, datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any, ParamSpec, Self, TypedDict, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from memagent.core import InvalidInput, MemoryHome
from memagent.core.jsontext import JsonObject
from memagent.stores import DEFAULT_USER, Stores, open_stores, store_url

if TYPE_CHECKING:
    from memagent.index import Hit
    from memagent.llm import LLM
    from memagent.memory.chunks import Chunk, ChunkStore
    from memagent.memory.chunks.edits import ChunkEdit
    from memagent.memory.chunks.store import ChunkRow
    from memagent.memory.profile import ProfileStore
    from memagent.memory.vault import FileCreated, FileUpdated, Vault
    from memagent.postgres import Database

__all__ = [
    "DEFAULT_USER",
    "Memory",
    "MemoryEdit",
    "MemoryItem",
    "RecallHit",
    "WrittenNote",
    "store_url",
]

P = ParamSpec("P")
R = TypeVar("R")

MAX_QUERY_CHARS = 4000


class RecallHit(BaseModel):
    """One recall result: a chunk, a vault note or a profile fact, with its score."""

    model_config = ConfigDict(extra="forbid")

    id: str
    kind: str = Field(description="chunk, note or fact")
    content: str
    score: float
    tags: list[str] = Field(default_factory=list)
    type: str | None = None
    created_at: str | None = None
    path: str | None = None
    why: JsonObject = Field(default_factory=dict)

    @classmethod
    def of(cls, hit: Hit) -> RecallHit:
        data = hit.to_json()
        return cls(
            id=data["id"],
            kind=data["kind"],
            content=data["content"],
            score=data["score"],
            tags=list(data.get("tags") or []),
            type=data.get("type"),
            created_at=data.get("created_at"),
            path=data.get("path"),
            why=dict(data.get("why") or {}),
        )


class MemoryItem(BaseModel):
    """A stored memory (a chunk) as every interface shows it: HTTP, MCP, Python."""

    id: str
    content: str
    type: str | None = None
    tags: list[str] = Field(default_factory=list)
    created_at: str | None = None
    deleted: bool = False

    @classmethod
    def of(cls, chunk: Chunk) -> Self:
        return cls(
            id=chunk.id,
            content=chunk.content,
            type=chunk.type,
            tags=list(chunk.tags),
            created_at=chunk.metadata.created,
            deleted=chunk.deleted_at is not None,
        )


class MemoryEdit(BaseModel):
    """One logged edit of a memory: the editable fields before and after."""

    # ops: update, soft_delete, restore, undo (`Memory.undo` returns the undo)

    ts: str
    edit: str
    op: str
    chunk_id: str
    before: JsonObject
    after: JsonObject
    undoes: str | None = None
    undone: bool = False

    @classmethod
    def of(cls, edit: ChunkEdit) -> Self:
        return cls.model_validate(edit.to_json())


class WrittenNote(TypedDict, total=False):
    """What `Memory.write_note` did: the note's path and size, whether it was
    created, and (when its text was already that) `changed: False`."""

    path: str
    bytes: int
    created: bool
    changed: bool


def _to_thread(fn: Callable[P, R]) -> Callable[P, Any]:
    """An async twin of a blocking method, run in a worker thread."""

    @functools.wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        return await asyncio.to_thread(fn, *args, **kwargs)

    wrapper.__doc__ = f"Async `{fn.__name__}` (runs in a worker thread)."
    return wrapper


class Memory:
    """A memory home: episodic memories (`chunks`), notes (`vault`), facts (`profile`).

    Open with `Memory.open(home)`; `home` follows the CLI rule (`--home`, else
    `$MEMAGENT_HOME`, else `~/.memagent`). `create=True` initialises a missing
    home (as `memagent init` does).

    Storage backend: the home's files (default), or a shared PostgreSQL
    database — `store="postgresql://…"` (or `[store] backend = "postgres"` and
    `url` in the home's config.toml) with `user` naming whose memory this is.
    The stores come from `memagent.stores.open_stores` (`stores=` hands in ones
    opened elsewhere, e.g. the server's per-user cache).
    """

    def __init__(
        self,
        home: MemoryHome | None = None,
        *,
        embeddings: bool | None = None,
        db: Database | None = None,
        user: str | None = None,
        stores: Stores | None = None,
    ) -> None:
        if stores is None:
            stores = Stores(home, embeddings=embeddings, db=db, user=user)
        self.stores = stores
        self._guard = stores.lock

    @property
    def home(self) -> MemoryHome:
        """The memory home (config, notes); `InvalidInput` when opened on a URL alone."""
        return self.stores.need_home("this operation")

    @property
    def db(self) -> Database | None:
        return self.stores.db

    @property
    def user(self) -> str:
        return self.stores.user

    @classmethod
    def open(
        cls,
        home: str | os.PathLike[str] | MemoryHome | None = None,
        *,
        create: bool = True,
        embeddings: bool | None = None,
        store: str | None = None,
        user: str | None = None,
    ) -> Memory:
        """`home` may also be a `postgresql://` URL (no local home at all)."""
        return cls(
            stores=open_stores(home, create=create, embeddings=embeddings, store=store, user=user)
        )

    # -- the stores ----------------------------------------------------------------
    @property
    def chunks(self) -> ChunkStore:
        """Episodic memories (`memagent.memory.chunks.ChunkStore`)."""
        return self.stores.chunks

    @property
    def vault(self) -> Vault:
        """Markdown notes (`memagent.memory.vault.Vault`)."""
        return self.stores.vault

    @property
    def profile(self) -> ProfileStore:
        """Structured profile facts (`memagent.memory.profile.ProfileStore`)."""
        return self.stores.profile

    @property
    def guard(self) -> AbstractContextManager[Any]:
        """Serializes this Memory's index work: hold it around direct calls on
        `chunks` from threads that share this Memory (the web page does)."""
        return self._guard

    def close(self) -> None:
        self.stores.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- episodic memory -------------------------------------------------------------
    def remember(
        self,
        text: str,
        *,
        tags: Sequence[str] = (),
        type: str | None = None,
        created_at: str | None = None,
    ) -> list[Chunk]:
        """Store `text` as one or more chunks (long text is split); returns them."""
        with self._guard:
            return self.chunks.remember(text, tags=list(tags), type=type, created_at=created_at)

    def recall(
        self,
        query: str,
        *,
        k: int = 10,
        tags: Sequence[str] = (),
        kinds: Sequence[str] = (),
        as_of: datetime | date | str | None = None,
    ) -> list[RecallHit]:
        """Hybrid search over all memory, best first. `as_of` (a datetime, a date,
        or ISO 8601 text): when the query is asked, "now" for relative times in it
        and for recency; None: the clock."""
        from memagent.index import Filters
        from memagent.index.temporal import parse_as_of

        if not isinstance(query, str) or not query.strip():
            raise InvalidInput("the query is empty")
        if len(query) > MAX_QUERY_CHARS:
            raise InvalidInput(f"the query is {len(query)} characters; at most {MAX_QUERY_CHARS}")
        if k < 1:
            raise InvalidInput(f"k={k}; ask for at least 1 result")
        now = parse_as_of(as_of).timestamp() if as_of is not None else None
        filters = Filters(tags=list(tags), kinds=list(kinds) or None)
        with self._guard:
            hits = self.chunks.recall(query, k=k, filters=filters, now=now)
        return [RecallHit.of(h) for h in hits]

    def get(self, memory_id: str) -> Chunk:
        """One memory by id (soft-deleted ones too); records the access."""
        with self._guard:
            return self.chunks.get(memory_id)

    def memories(
        self, *, limit: int = 50, tags: Sequence[str] = (), include_deleted: bool = False
    ) -> list[ChunkRow]:
        """Memories, newest first."""
        from memagent.index import Filters

        if limit < 1:
            raise InvalidInput(f"limit={limit}; ask for at least 1")
        filters = Filters(tags=list(tags), include_deleted=include_deleted)
        with self._guard:
            return self.chunks.list(filters, limit=limit)

    def forget(self, memory_id: str, *, hard: bool = False) -> Chunk | None:
        """Soft-delete (hidden, `restore` undoes it) or, with `hard`, remove the file."""
        with self._guard:
            if hard:
                self.chunks.hard_delete(memory_id)
                return None
            return self.chunks.soft_delete(memory_id)

    def restore(self, memory_id: str) -> Chunk:
        """Bring back a soft-deleted memory."""
        with self._guard:
            return self.chunks.restore(memory_id)

    def update(
        self,
        memory_id: str,
        *,
        text: str | None = None,
        tags: Sequence[str] | None = None,
        type: str | None = None,
    ) -> Chunk:
        """Change a memory's text, tags or type: re-indexed, logged with before and
        after, undoable (`undo`). Fields left None keep their value."""
        if text is None and tags is None and type is None:
            raise InvalidInput("nothing to change: give text, tags or type")
        if tags is not None and (isinstance(tags, str) or not isinstance(tags, Sequence)):
            raise InvalidInput("tags must be a list of strings")
        with self._guard:
            return self.chunks.update(
                memory_id,
                content=text,
                tags=list(tags) if tags is not None else None,
                type=type,
            )

    def undo(self, memory_id: str | None = None, *, edit: str | None = None) -> MemoryEdit:
        """Revert a memory's newest edit (or the edit `edit`); refused when it changed
        since. Returns the undo (itself an edit)."""
        with self._guard:
            return MemoryEdit.of(self.chunks.undo(memory_id, edit=edit))

    def history(self, memory_id: str) -> list[MemoryEdit]:
        """Every logged edit of one memory (before/after), oldest first."""
        with self._guard:
            return [MemoryEdit.of(e) for e in self.chunks.history(memory_id)]

    # -- notes -------------------------------------------------------------------------
    def read_note(self, path: str) -> str:
        return self.vault.read(path)

    def list_notes(self, path: str = "", *, recursive: bool = True) -> list[str]:
        """Note paths (vault-relative) under `path`, folders left out."""
        return self.vault.list_dir(path, recursive=recursive).files

    def write_note(self, path: str, content: str) -> WrittenNote:
        """Create the note, or replace its whole content. Returns what changed."""
        vault = self.vault
        with vault.lock():
            if not vault.exists(path):
                made = vault.create(path, content)
                return {"path": made.path, "bytes": made.size, "created": True}
            old = vault.read(path)
            if old == content:
                return {"path": vault.normalize(path), "created": False, "changed": False}
            if old:
                result: FileCreated | FileUpdated = vault.update(path, old, content)
            else:
                vault.delete(path)
                result = vault.create(path, content)
            return {"path": result.path, "bytes": result.size, "created": False}

    def delete_note(self, path: str) -> JsonObject:
        return self.vault.delete(path).to_json()

    def run_actions(self, actions: str | Sequence[Any]) -> JsonObject:
        """Run JSON vault actions: a list of action objects, a JSON array, or
        text holding `<actions>…</actions>`. Returns one result object."""
        from memagent.actions import (
            ActionsInvalid,
            parse_actions_json,
            parse_response,
            run_actions,
            validate_actions,
        )

        if isinstance(actions, str):
            parsed = parse_response(actions)
            if parsed.error is not None:
                raise ActionsInvalid(parsed.error)
            steps = parsed.actions if parsed.actions_found else parse_actions_json(actions)
        else:
            steps = validate_actions(list(actions))
        return run_actions(self.vault, steps).to_json()

    # -- profile facts ---------------------------------------------------------------------
    def profile_show(self, resource: str | None = None) -> dict[str, JsonObject]:
        """Current profile content by resource file (expired items left out)."""
        store = self.profile
        names = [store.name_for(resource)] if resource else store.names()
        today = store.today()
        return {name: store.load(name).to_json(today=today) for name in names}

    def profile_apply(self, operations: Sequence[Any], *, dry_run: bool = False) -> JsonObject:
        """Apply profile operations (append/update/remove/no_change), all or nothing.

        Returns the batch result (`ok`, `batch`, `outcomes`, `error`); a batch the
        handler rejects comes back with `ok: false` and nothing written.
        """
        from pydantic import ValidationError

        from memagent.memory.profile import apply_operations, parse_operation
        from memagent.memory.profile.operations import MAX_BATCH_OPERATIONS
        from memagent.memory.profile.pipeline import describe_error

        if not isinstance(operations, Sequence) or isinstance(operations, str | bytes):
            raise InvalidInput("operations must be a list of operation objects")
        if len(operations) > MAX_BATCH_OPERATIONS:
            raise InvalidInput(
                f"{len(operations)} operations in one batch; the limit is {MAX_BATCH_OPERATIONS}"
            )
        parsed = []
        for i, entry in enumerate(operations):
            try:
                parsed.append(parse_operation(entry))
            except ValidationError as exc:
                raise InvalidInput(f"operation {i}: {describe_error(exc)}") from None
        return apply_operations(self.profile, parsed, dry_run=dry_run).to_json()

    def profile_learn(self, text: str, *, llm: LLM | None = None) -> JsonObject:
        """Learn profile facts from a message with an LLM (default: `llm.model` of
        the home's config); returns the whole run (facts, operations, outcomes)."""
        from memagent.memory.profile import learn

        if llm is None:
            from memagent.llm import load_llm

            cfg = self.home.config.llm
            llm = load_llm(cfg.model, cfg)
        return learn(self.profile, llm, text).to_json()

    def profile_history(self, item: str, *, resource: str | None = None) -> list[JsonObject]:
        """Every recorded change to one profile item, oldest first."""
        from memagent.memory.profile import history

        store = self.profile
        file = store.name_for(resource) if resource else None
        return [entry.to_json() for entry in history(store, item, file=file)]

    # -- async twins ---------------------------------------------------------------------
    aremember = _to_thread(remember)
    arecall = _to_thread(recall)
    aget = _to_thread(get)
    amemories = _to_thread(memories)
    aforget = _to_thread(forget)
    arestore = _to_thread(restore)
    aupdate = _to_thread(update)
    aundo = _to_thread(undo)
    ahistory = _to_thread(history)
    aread_note = _to_thread(read_note)
    alist_notes = _to_thread(list_notes)
    awrite_note = _to_thread(write_note)
    adelete_note = _to_thread(delete_note)
    arun_actions = _to_thread(run_actions)
    aprofile_show = _to_thread(profile_show)
    aprofile_apply = _to_thread(profile_apply)
    aprofile_learn = _to_thread(profile_learn)
    aprofile_history = _to_thread(profile_history)
