"""The chunk store: episodic memories as JSON files, searchable through the index.

Every file write goes through `home.storage` (atomic, locked, logged with actor
`chunks`) and is followed, under the same lock, by the index update — so the
index agrees with the files after every call. Should a process die in between,
the next open's `sync` repairs the index from the files.
"""

from __future__ import annotations

import json
import secrets
import shutil
import sqlite3
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypedDict

import numpy as np
import numpy.typing as npt
from pydantic import ValidationError

from memagent.core import (
    Config,
    CorruptFile,
    InvalidInput,
    MemoryHome,
    NotFound,
    OpRecord,
    ReadOnlyHome,
    StorageFull,
    read_ops,
    read_ops_since,
)
from memagent.core.jsontext import JsonObject
from memagent.core.oplog import ops_end
from memagent.core.storage import is_full
from memagent.embeddings import (
    Embedder,
    count_tokens,
    embeddings_unavailable_reason,
    load_embedder,
)
from memagent.index import (
    Filters,
    Hit,
    Index,
    QueryFacts,
    Row,
    SearchParams,
    SyncReport,
    check_query,
    facts_of,
    read_only_index_copy,
    search,
    search_params,
    sync,
    sync_paths,
)
from memagent.index.documents import chunk_doc
from memagent.memory.chunks.chunking import detect_type, split_text
from memagent.memory.chunks.edits import ChunkEdit
from memagent.memory.chunks.edits import history as edit_history
from memagent.memory.chunks.edits import undo as undo_edit
from memagent.memory.chunks.linker import IndexLinkSource, LinkSource, auto_links
from memagent.memory.chunks.model import (
    MANUAL_LINK_TYPES,
    Chunk,
    ChunkDraft,
    ChunkMetadata,
    EditableFields,
    Link,
    check_id,
    check_tags,
    day_folder,
    editable_fields,
    new_chunk_id,
    parse_timestamp,
)

ACTOR = "chunks"
Progress = Callable[[int, int], None]

# Ranking tuned on LoCoMo (bench/recall_locomo.py); recency/access come from config.
DEFAULT_PARAMS = SearchParams()


class ChunkRow(TypedDict):
    """One chunk as `ChunkStore.list` gives it (from the index)."""

    id: str
    created: float
    created_at: str | None
    type: str | None
    tags: list[str]
    content: str
    conversation_id: str | None
    deleted: bool
    source: JsonObject | None


def _iso(dt: datetime) -> str:
    return dt.astimezone(UTC).isoformat(timespec="microseconds")


def new_edit_id() -> str:
    return f"edit-{secrets.token_hex(8)}"


class ChunkStore:
    """Create, read, update, delete, list, link and search chunks of one home.

    `embeddings=None` follows `config.embeddings.enabled`; False forces
    keyword-only. The embedder and the index are loaded once per store.
    """

    _scratch: Path | None = None  # the temporary folder of a read-only home's index copy
    progress: Progress | None = None
    """Told (done, total) while opening the index re-reads files or embeds documents
    (set by the CLI to show progress on stderr)."""

    def __init__(self, home: MemoryHome, *, embeddings: bool | None = None) -> None:
        self.home = home.require()
        self._init_common(home.config, embeddings)
        self._index: Index | None = None
        self._log_offset = 0

    def _init_common(self, config: Config, embeddings: bool | None) -> None:
        """What every backend sets up: the config and the embedder."""
        self.config = config
        self.last_edit: str | None = None
        enabled = config.embeddings.enabled if embeddings is None else embeddings
        self.embedder: Embedder | None = load_embedder(enabled=enabled)
        if self.embedder is not None:
            self.keyword_only_reason: str | None = None
        elif not enabled:
            self.keyword_only_reason = "embeddings are disabled"
        else:
            self.keyword_only_reason = embeddings_unavailable_reason()

    # -- index ---------------------------------------------------------------------
    @property
    def index(self) -> Index:
        """The index, brought in line with the files when first opened, then kept in
        line with every write made since by any process (read from the ops log), so a
        long-lived store (a server) sees notes, facts and chunks written elsewhere."""
        if self._index is None:
            self._index = self._open_index()
            self.sync(self.progress)
        else:
            self._catch_up(self._index)
        return self._index

    def _catch_up(self, index: Index) -> None:
        records, offset = read_ops_since(self.home.layout.ops_log, self._log_offset)
        if offset == self._log_offset:
            return
        with self.home.storage.lock():
            sync_paths(index, self.home.root, (r.path for r in records))
        self._log_offset = offset

    def _open_index(self) -> Index:
        """Open the index; an unreadable one is a broken cache: drop it and rebuild.
        On a read-only home the index is a private copy in a temporary folder
        (brought up to date with the files like any other), so reading works."""
        path = self.home.layout.index
        if not self.home.storage.writable():
            path = read_only_index_copy(path)
            self._scratch = path.parent
        try:
            return Index(path, self.embedder, self.progress)
        except CorruptFile:
            with self.home.storage.lock():
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{path}{suffix}").unlink(missing_ok=True)
                return Index(path, self.embedder, self.progress)

    def sync(self, progress: Progress | None = None) -> SyncReport:
        """Re-index whatever files changed since the index last saw them."""
        idx = self._index if self._index is not None else self.index
        with self.home.storage.lock():
            self._log_offset = ops_end(self.home.layout.ops_log)
            return sync(idx, self.home.root, progress=progress)

    def rebuild(self, progress: Progress | None = None) -> SyncReport:
        """Drop the index's content and re-read every file (`memagent reindex`)."""
        if not self.home.storage.writable():
            raise ReadOnlyHome(
                f"memory home {self.home.root} is read-only: cannot rebuild index.sqlite"
            )
        if self._index is None:
            self._index = self._open_index()
        with self.home.storage.lock():
            self._index.clear()
            self._log_offset = ops_end(self.home.layout.ops_log)
            return sync(self._index, self.home.root, progress=progress)

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
            self._index = None
        scratch, self._scratch = self._scratch, None
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)

    # -- for callers outside the store: its lock, and whole chunks as they are -------
    def lock(self) -> AbstractContextManager[None]:
        """The lock every write of chunks takes (the home's, or the database's), for a
        caller's read-modify-write over several calls (`edits.undo`)."""
        return self._lock()

    def save(self, chunk: Chunk, *, op: str, vec: npt.NDArray[np.float32] | None = None) -> None:
        """Write a whole chunk as it is (its id, dates and links kept) and index it,
        logged as `op`: a copy from another memory home (`memagent.postgres.transfer`,
        which holds `lock()` for the whole load). `vec`: its embedding (1 × dim)."""
        self._store(chunk, op=op, vec=vec)

    # -- backend hooks (the PostgreSQL store overrides these) -----------------------
    def _lock(self) -> AbstractContextManager[None]:
        """Serialises read-modify-write of chunks: the home's lock."""
        return self.home.storage.lock()

    def _link_source(self) -> LinkSource:
        return IndexLinkSource(self.index)

    def _store(
        self,
        chunk: Chunk,
        *,
        op: str,
        vec: npt.NDArray[np.float32] | None,
        meta: JsonObject | None = None,
    ) -> None:
        self._write(self.index, chunk, op=op, vec=vec, meta=meta)

    def op_records(self, mentioning: str | None = None) -> list[OpRecord]:
        """This store's ops-log records (actor `chunks`), oldest first: edit history
        and undo read them. `mentioning`: only records whose text contains that id
        (a superset of those about it; callers still check the fields)."""
        records = read_ops(self.home.layout.ops_log, mentioning=mentioning)
        return [r for r in records if r.actor == ACTOR]

    def _remove(self, chunk: Chunk) -> None:
        rel = chunk.rel_path
        self.home.storage.delete(
            rel, actor=ACTOR, op="delete", meta={"id": chunk.id, "content": chunk.content}
        )
        self.index.remove_path(rel)

    def _links_of(self, chunk_id: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        return self.index.links(chunk_id)

    def _search(
        self, facts: QueryFacts, k: int, filters: Filters | None, params: SearchParams
    ) -> list[Hit]:
        return search(
            self.index,
            facts,
            k=k,
            filters=filters,
            params=params,
            keyword_only_reason=self.keyword_only_reason,
        )

    def _list(self, filters: Filters, limit: int) -> list[Row]:
        where, params = filters.sql()
        return self.index.query(
            where, params, order="ORDER BY created DESC, rowid DESC", limit=limit
        )

    # -- validation ------------------------------------------------------------------
    def _check_draft(self, draft: ChunkDraft) -> ChunkDraft:
        if not draft.content.strip():
            raise InvalidInput("chunk content is empty")
        limit = self.config.limits.max_file_bytes // 2
        size = len(draft.content.encode("utf-8"))
        if size > limit:
            raise InvalidInput(f"chunk content is {size} bytes; the limit is {limit}")
        if len(json.dumps(draft.source, default=str)) > 10_000:
            raise InvalidInput("chunk source is larger than 10000 bytes")
        draft.tags = check_tags(draft.tags)
        if draft.created_at is not None:
            draft.created_at = _iso(parse_timestamp(draft.created_at))
        return draft

    # -- create ------------------------------------------------------------------------
    def create(self, content: str, **fields: Any) -> Chunk:
        """One chunk from `content` as given (no splitting)."""
        try:
            draft = ChunkDraft(content=content, **fields)
        except ValidationError as exc:
            raise InvalidInput(f"invalid chunk: {exc.errors()[0]['msg']}") from exc
        return self.create_many([draft])[0]

    def remember(self, text: str, progress: Progress | None = None, **fields: Any) -> list[Chunk]:
        """Chunk `text` (paragraphs, ~100–800 tokens) and store each piece
        (`progress(done, total)` after each batch of pieces)."""
        if not isinstance(text, str) or not text.strip():
            raise InvalidInput("nothing to remember: the text is empty")
        limit = self.config.limits.max_file_bytes
        if len(text.encode("utf-8")) > limit * 16:
            raise InvalidInput(f"text is larger than {limit * 16} bytes")
        counter = self.embedder.count_tokens if self.embedder is not None else None
        pieces = split_text(text, counter=counter)
        try:
            drafts = [
                ChunkDraft(content=p.text, **{**fields, "type": fields.get("type") or p.type})
                for p in pieces
            ]
        except ValidationError as exc:
            raise InvalidInput(f"invalid chunk: {exc.errors()[0]['msg']}") from exc
        return self.create_many(drafts, progress=progress)

    def create_many(
        self,
        drafts: Sequence[ChunkDraft],
        *,
        auto_link: bool = True,
        progress: Progress | None = None,
    ) -> list[Chunk]:
        """Store chunks in order. All drafts are validated first: one bad draft
        means nothing is written. Embeddings are computed in batches."""
        checked = [self._check_draft(d.model_copy(deep=True)) for d in drafts]
        if not checked:
            return []
        links = self._link_source() if auto_link else None
        out: list[Chunk] = []
        batch = 64
        for start in range(0, len(checked), batch):
            part = checked[start : start + batch]
            vectors: npt.NDArray[np.float32] | None = None
            if self.embedder is not None:
                vectors = self.embedder.embed([d.content for d in part])
            with self._lock():
                for i, draft in enumerate(part):
                    vec = vectors[i : i + 1] if vectors is not None else None
                    out.append(self._write_new(links, draft, vec))
            if progress is not None:
                progress(start + len(part), len(checked))
        return out

    def _write_new(
        self,
        source: LinkSource | None,
        draft: ChunkDraft,
        vec: npt.NDArray[np.float32] | None,
    ) -> Chunk:
        created = parse_timestamp(draft.created_at) if draft.created_at else datetime.now(UTC)
        stamp = _iso(created)
        now = _iso(datetime.now(UTC))
        chunk_id = new_chunk_id(created)
        links = list(draft.links)
        if source is not None:
            for kind, target in auto_links(
                source,
                chunk_id=chunk_id,
                created=created.timestamp(),
                tags=draft.tags,
                conversation_id=draft.conversation_id,
                user_id=draft.user_id,
                vector=vec[0] if vec is not None else None,
            ):
                links.append(Link.model_validate({"type": kind, "target": target}))
        chunk = Chunk(
            id=chunk_id,
            content=draft.content,
            tokens=count_tokens(draft.content, self.embedder),
            type=draft.type or detect_type(draft.content),
            tags=draft.tags,
            metadata=ChunkMetadata(created=stamp, modified=now),
            links=links,
            conversation_id=draft.conversation_id,
            user_id=draft.user_id,
            agent_id=draft.agent_id,
            session_id=draft.session_id,
            source=draft.source,
        )
        self._store(chunk, op="create", vec=vec)
        return chunk

    def _write(
        self,
        index: Index,
        chunk: Chunk,
        *,
        op: str,
        vec: npt.NDArray[np.float32] | None = None,
        meta: JsonObject | None = None,
    ) -> None:
        data = chunk.model_dump(mode="json")
        rel = chunk.rel_path
        record = {"id": chunk.id, **(meta or {})}
        with self.home.storage.lock():
            self.home.storage.write_json(rel, data, actor=ACTOR, op=op, meta=record)
            doc = chunk_doc(rel, data)
            assert doc is not None
            try:
                index.upsert([doc], vec)
                st = (self.home.root / rel).stat()
                index.record_file(rel, "chunk", st.st_mtime_ns, st.st_size)
            except (OSError, sqlite3.Error) as exc:
                if op != "create":
                    raise
                # a new chunk the index could not take: not stored (a retry stores it once)
                self.home.storage.undo_create(rel, actor=ACTOR)
                if is_full(exc):
                    raise StorageFull(f"no space left to store a memory ({exc})") from exc
                raise

    # -- read ----------------------------------------------------------------------------
    def _read(self, chunk_id: str) -> Chunk:
        rel = f"chunks/{day_folder(chunk_id)}/{check_id(chunk_id)}.json"
        path = self.home.root / rel
        try:
            raw = path.read_text(encoding="utf-8")
        except FileNotFoundError as exc:
            raise NotFound(f"no chunk {chunk_id}") from exc
        try:
            return Chunk.model_validate(json.loads(raw))
        except (ValueError, ValidationError) as exc:
            raise CorruptFile(rel, f"not a valid chunk: {exc}") from exc

    def get(self, chunk_id: str, *, record_access: bool = True) -> Chunk:
        """The chunk (soft-deleted ones too); records the access in the file."""
        if not record_access:
            return self._read(chunk_id)
        with self._lock():
            chunk = self._read(chunk_id)
            chunk.metadata.accessed = _iso(datetime.now(UTC))
            chunk.metadata.access_count += 1
            self._store(chunk, op="access", vec=self._vector(chunk.id))
            return chunk

    def _vector(self, chunk_id: str) -> npt.NDArray[np.float32] | None:
        row = self.index.get(chunk_id)
        if row is None:
            return None
        vec = self.index.vector_of(row.rowid)
        return vec[None, :] if vec is not None else None

    # -- update / delete -----------------------------------------------------------------
    def update(
        self,
        chunk_id: str,
        *,
        content: str | None = None,
        tags: list[str] | None = None,
        type: str | None = None,
        confidence: float | None = None,
    ) -> Chunk:
        """Change a chunk's text, tags, type or confidence: re-indexed (a new text is
        re-embedded) and logged with the fields before and after (`edits.undo`)."""
        if content is not None:
            if not isinstance(content, str):
                raise InvalidInput("content must be a string")
            self._check_draft(ChunkDraft(content=content))
        new_tags = None
        if tags is not None:
            if isinstance(tags, str) or not isinstance(tags, list):
                raise InvalidInput("tags must be a list of strings")
            new_tags = check_tags(tags)
        with self._lock():
            chunk = self._read(chunk_id)
            before = editable_fields(chunk)
            try:
                if type is not None:
                    chunk = Chunk.model_validate({**chunk.model_dump(), "type": type})
                if confidence is not None:
                    chunk.metadata = ChunkMetadata.model_validate(
                        {**chunk.metadata.model_dump(), "confidence": confidence}
                    )
            except ValidationError as exc:
                raise InvalidInput(f"invalid update: {exc.errors()[0]['msg']}") from exc
            if content is not None:
                chunk.content = content
                chunk.tokens = count_tokens(content, self.embedder)
            if new_tags is not None:
                chunk.tags = new_tags
            return self.save_edit(chunk, before, op="update")

    def save_edit(
        self, chunk: Chunk, before: EditableFields, *, op: str, undoes: str | None = None
    ) -> Chunk:
        """Write an edited chunk with `before`/`after` in the log (an edit id in
        `last_edit`); the caller holds `lock()` and read the chunk under it."""
        after = editable_fields(chunk)
        if after == before:
            return chunk
        vec = None if after["content"] != before["content"] else self._vector(chunk.id)
        chunk.metadata.modified = _iso(datetime.now(UTC))
        meta: JsonObject = {"edit": new_edit_id(), "before": before, "after": after}
        if undoes is not None:
            meta["undoes"] = undoes
        self._store(chunk, op=op, vec=vec, meta=meta)
        self.last_edit = meta["edit"]
        return chunk

    def history(self, chunk_id: str) -> list[ChunkEdit]:
        """Every logged edit of one chunk, oldest first (before/after of each)."""
        return edit_history(self, chunk_id)

    def undo(self, chunk_id: str | None = None, *, edit: str | None = None) -> ChunkEdit:
        """Revert an edit (the chunk's newest not yet undone, or `edit`); refused with
        `Conflict` when the chunk changed since."""
        return undo_edit(self, chunk_id, edit=edit)

    def soft_delete(self, chunk_id: str) -> Chunk:
        """Hide from search and listing; `restore` brings it back."""
        with self._lock():
            chunk = self._read(chunk_id)
            if chunk.deleted_at is None:
                before = editable_fields(chunk)
                chunk.deleted_at = _iso(datetime.now(UTC))
                self.save_edit(chunk, before, op="soft_delete")
            return chunk

    def restore(self, chunk_id: str) -> Chunk:
        with self._lock():
            chunk = self._read(chunk_id)
            if chunk.deleted_at is not None:
                before = editable_fields(chunk)
                chunk.deleted_at = None
                self.save_edit(chunk, before, op="restore")
            return chunk

    def hard_delete(self, chunk_id: str) -> None:
        """Remove the chunk for good (the ops log keeps its content for undo)."""
        with self._lock():
            self._remove(self._read(chunk_id))

    # -- links -------------------------------------------------------------------------
    def link(self, source: str, kind: str, target: str, *, remove: bool = False) -> Chunk:
        """Add (or remove) a manual link `source --kind--> target`."""
        if kind not in MANUAL_LINK_TYPES:
            raise InvalidInput(f"link type {kind!r}: use one of {', '.join(MANUAL_LINK_TYPES)}")
        check_id(target)
        if source == target:
            raise InvalidInput("a chunk cannot link to itself")
        with self._lock():
            chunk = self._read(source)
            self._read(target)
            link = Link.model_validate({"type": kind, "target": target})
            present = link in chunk.links
            if remove and present:
                chunk.links.remove(link)
            elif not remove and not present:
                chunk.links.append(link)
            else:
                return chunk
            self._store(chunk, op="link", vec=self._vector(source))
            return chunk

    def links(self, chunk_id: str) -> dict[str, list[dict[str, str]]]:
        """Outgoing and incoming links, from the index (both directions)."""
        self._read(chunk_id)
        out, inc = self._links_of(chunk_id)
        return {
            "outgoing": [{"type": t, "target": d} for t, d in out],
            "incoming": [{"type": t, "source": s} for t, s in inc],
        }

    # -- search / list ---------------------------------------------------------------
    def search_params(self) -> SearchParams:
        """The ranking's knobs: the defaults with the config's `[search]` table on
        them (every signal's knobs may be set there; `InvalidInput` for a bad one)."""
        return search_params(self.config.search.model_dump(), "config.toml")

    def recall(
        self,
        query: str | QueryFacts,
        *,
        k: int = 10,
        filters: Filters | None = None,
        params: SearchParams | None = None,
        now: float | None = None,
    ) -> list[Hit]:
        """Hybrid search over all memory: chunks, vault notes and profile facts.
        `query`: its text, or its `QueryFacts` when the caller read the message
        already (the agent's turn). `now` (epoch seconds, default the clock; with
        a text only: facts carry theirs) is when the question is asked: relative
        times in it ("last week") and recency count from there."""
        max_k = self.config.limits.max_search_results
        if k > max_k:
            raise InvalidInput(f"k={k}; at most {max_k} results (limits.max_search_results)")
        # checked before it is read: an oversized text is refused unread
        check_query(query.text if isinstance(query, QueryFacts) else query, k)
        facts = facts_of(query, now)
        return self._search(facts, k, filters, params or self.search_params())

    def list(self, filters: Filters | None = None, *, limit: int = 50) -> list[ChunkRow]:
        """Chunks matching `filters`, newest first (from the index)."""
        f = (filters or Filters()).model_copy(update={"kinds": ["chunk"]})
        rows = self._list(f, limit)
        return [
            {
                "id": r.doc_id,
                "created": r.created,
                "created_at": r.created_at,
                "type": r.type,
                "tags": r.tags,
                "content": r.content,
                "conversation_id": r.conversation_id,
                "deleted": r.deleted,
                "source": r.source,
            }
            for r in rows
        ]
