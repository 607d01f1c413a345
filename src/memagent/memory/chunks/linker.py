"""The auto-linker: links a new chunk to what it belongs with, by asking the
index — never by scanning files — so its cost does not grow with the store.

- `context_of`: the latest earlier chunks of the same conversation (at most 3).
- `follows`: the chunk created just before it, within 5 minutes, same scope.
- `related_to`: chunks sharing a tag (the newest few), and, when embeddings
  exist, the nearest of the latest 2000 chunks above a cosine threshold.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
import numpy.typing as npt

from memagent.index import Index

FOLLOWS_WINDOW_S = 300.0
CONTEXT_LIMIT = 3
TAG_LIMIT = 3
SIMILAR_LIMIT = 3
SIMILARITY_THRESHOLD = 0.55
SIMILAR_WINDOW = 2000


class LinkSource(Protocol):
    """What the auto-linker asks of a backend (the SQLite index or PostgreSQL):
    each answer newest first, live (not soft-deleted) chunks only."""

    def conversation_chunks(self, conversation_id: str, created: float, limit: int) -> list[str]:
        """Ids of the latest chunks of the conversation created at or before `created`."""
        ...

    def previous_chunks(
        self, created: float, window_s: float, user_id: str | None, limit: int
    ) -> list[str]:
        """Ids of the chunks of the same user scope created in `[created - window_s, created]`."""
        ...

    def tagged_chunks(self, tag: str, limit: int) -> list[str]:
        """Ids of the newest chunks carrying `tag`."""
        ...

    def similar_chunks(
        self, vector: npt.NDArray[np.float32], limit: int, window: int
    ) -> list[tuple[str, float]]:
        """(id, cosine) of the nearest among the latest `window` chunks, best first."""
        ...


class IndexLinkSource:
    """`LinkSource` over the SQLite index (the local backend)."""

    def __init__(self, index: Index) -> None:
        self.index = index

    def conversation_chunks(self, conversation_id: str, created: float, limit: int) -> list[str]:
        return [
            doc_id
            for (doc_id,) in self.index.conn.execute(
                "SELECT doc_id FROM docs INDEXED BY docs_conv WHERE conversation_id = ? "
                "AND created <= ? AND kind = 'chunk' AND deleted = 0 "
                "ORDER BY created DESC, rowid DESC LIMIT ?",
                (conversation_id, created, limit),
            )
        ]

    def previous_chunks(
        self, created: float, window_s: float, user_id: str | None, limit: int
    ) -> list[str]:
        scope_sql, scope_params = ("user_id = ?", [user_id]) if user_id else ("user_id IS NULL", [])
        rows = self.index.query(
            f"kind = 'chunk' AND deleted = 0 AND created <= ? AND created >= ? AND {scope_sql}",
            (created, created - window_s, *scope_params),
            order="ORDER BY created DESC, rowid DESC",
            limit=limit,
        )
        return [r.doc_id for r in rows]

    def tagged_chunks(self, tag: str, limit: int) -> list[str]:
        # Driven by the tags index, newest-inserted first: O(1) however common
        # the tag (ordering docs by `created` instead would scan the store).
        return [
            doc_id
            for (doc_id,) in self.index.conn.execute(
                "SELECT d.doc_id FROM tags t CROSS JOIN docs d ON d.rowid = t.rowid "
                "WHERE t.tag = ? AND d.kind = 'chunk' AND d.deleted = 0 "
                "ORDER BY t.rowid DESC LIMIT ?",
                (tag, limit),
            )
        ]

    def similar_chunks(
        self, vector: npt.NDArray[np.float32], limit: int, window: int
    ) -> list[tuple[str, float]]:
        # Similarity is searched among the most recent chunks only, so the cost
        # stays bounded however large the store grows.
        recent = self.index.conn.execute(
            "SELECT rowid FROM docs WHERE kind = 'chunk' AND deleted = 0 "
            "ORDER BY created DESC LIMIT ?",
            (window,),
        ).fetchall()
        allowed = np.fromiter((r[0] for r in recent), dtype=np.int64, count=len(recent))
        near = self.index.vectors.search(vector, limit, allowed)
        rows = self.index.rows([r for r, _ in near])
        out: list[tuple[str, float]] = []
        for r, s in near:
            hit = rows.get(r)
            if hit is not None and hit.kind == "chunk" and not hit.deleted:
                out.append((hit.doc_id, s))
        return out


def auto_links(
    source: LinkSource | Index,
    *,
    chunk_id: str,
    created: float,
    tags: list[str],
    conversation_id: str | None,
    user_id: str | None,
    vector: npt.NDArray[np.float32] | None,
) -> list[tuple[str, str]]:
    """[(link type, target id)] for a chunk about to be written."""
    src: LinkSource = IndexLinkSource(source) if isinstance(source, Index) else source
    links: list[tuple[str, str]] = []

    def add(kind: str, target: str) -> None:
        linked = {t for _, t in links}
        if target == chunk_id or (kind, target) in links:
            return
        if kind == "related_to" and target in linked:
            return
        links.append((kind, target))

    if conversation_id is not None:
        for doc_id in src.conversation_chunks(conversation_id, created, CONTEXT_LIMIT):
            add("context_of", doc_id)
    for doc_id in src.previous_chunks(created, FOLLOWS_WINDOW_S, user_id, 2):
        if doc_id != chunk_id:
            add("follows", doc_id)
            break
    for tag in tags:
        for doc_id in src.tagged_chunks(tag, TAG_LIMIT):
            add("related_to", doc_id)
    if vector is not None:
        similar = 0
        for doc_id, s in src.similar_chunks(vector, SIMILAR_LIMIT + 1, SIMILAR_WINDOW):
            if s < SIMILARITY_THRESHOLD:
                continue
            add("related_to", doc_id)
            similar += 1
            if similar >= SIMILAR_LIMIT:
                break
    return links
