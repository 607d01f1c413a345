"""The auto-linker: links a new chunk to what it belongs with, by asking the
index — never by scanning files — so its cost does not grow with the store.

- `context_of`: the latest earlier chunks of the same conversation (at most 3).
- `follows`: the chunk created just before it, within 5 minutes, same scope.
- `related_to`: chunks sharing a tag (the newest few), and, when embeddings
  exist, the nearest of the latest 2000 chunks above a cosine threshold.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from memagent.index import Index

FOLLOWS_WINDOW_S = 300.0
CONTEXT_LIMIT = 3
TAG_LIMIT = 3
SIMILAR_LIMIT = 3
SIMILARITY_THRESHOLD = 0.55
SIMILAR_WINDOW = 2000


def auto_links(
    index: Index,
    *,
    chunk_id: str,
    created: float,
    tags: list[str],
    conversation_id: str | None,
    user_id: str | None,
    vector: npt.NDArray[np.float32] | None,
) -> list[tuple[str, str]]:
    """[(link type, target id)] for a chunk about to be written."""
    links: list[tuple[str, str]] = []

    def add(kind: str, target: str) -> None:
        linked = {t for _, t in links}
        if target == chunk_id or (kind, target) in links:
            return
        if kind == "related_to" and target in linked:
            return
        links.append((kind, target))

    if conversation_id is not None:
        for (doc_id,) in index.conn.execute(
            "SELECT doc_id FROM docs INDEXED BY docs_conv WHERE conversation_id = ? "
            "AND created <= ? AND kind = 'chunk' AND deleted = 0 "
            "ORDER BY created DESC, rowid DESC LIMIT ?",
            (conversation_id, created, CONTEXT_LIMIT),
        ):
            add("context_of", doc_id)
    scope_sql, scope_params = ("user_id = ?", [user_id]) if user_id else ("user_id IS NULL", [])
    for row in index.query(
        f"kind = 'chunk' AND deleted = 0 AND created <= ? AND created >= ? AND {scope_sql}",
        (created, created - FOLLOWS_WINDOW_S, *scope_params),
        order="ORDER BY created DESC, rowid DESC",
        limit=2,
    ):
        if row.doc_id != chunk_id:
            add("follows", row.doc_id)
            break
    for tag in tags:
        # Driven by the tags index, newest-inserted first: O(1) however common
        # the tag (ordering docs by `created` instead would scan the store).
        for (doc_id,) in index.conn.execute(
            "SELECT d.doc_id FROM tags t CROSS JOIN docs d ON d.rowid = t.rowid "
            "WHERE t.tag = ? AND d.kind = 'chunk' AND d.deleted = 0 "
            "ORDER BY t.rowid DESC LIMIT ?",
            (tag, TAG_LIMIT),
        ):
            add("related_to", doc_id)
    if vector is not None:
        # Similarity is searched among the most recent chunks only, so the cost
        # stays bounded however large the store grows.
        recent = index.conn.execute(
            "SELECT rowid FROM docs WHERE kind = 'chunk' AND deleted = 0 "
            "ORDER BY created DESC LIMIT ?",
            (SIMILAR_WINDOW,),
        ).fetchall()
        allowed = np.fromiter((r[0] for r in recent), dtype=np.int64, count=len(recent))
        near = index.vectors.search(vector, SIMILAR_LIMIT + 1, allowed)
        good = [r for r, s in near if s >= SIMILARITY_THRESHOLD]
        rows = index.rows(good)
        similar = 0
        for r in good:
            hit = rows.get(r)
            if hit is not None and hit.kind == "chunk" and not hit.deleted:
                add("related_to", hit.doc_id)
                similar += 1
                if similar >= SIMILAR_LIMIT:
                    break
    return links
