"""A conversation turn's context on PostgreSQL: the twin of the local index's
`memagent.index.context`, with the same rules (its helpers, not a copy of them).

Keyword side: a turn's neighbours' text is kept in `chunks.context` and its
lexemes are part of `tsv` at weight C (content A, tags B; `memagent_chunk_tsv`,
migration 0007), so BM25 (`bm25.py`) counts them at `context_weight` and the
row's length includes them, as FTS5 counts its third column.

Dense side: `chunks.search_vec` is what dense search and MMR compare: the
turn's own embedding mixed with its neighbours' (`mix`), or its own where it
has none; `embedding` stays the turn's own (auto-linking uses it).

Both are recomputed for a written turn and the turns beside it, before and
after the write, in the write's transaction (`refresh`); rows written before
migration 0007 are filled by `fill`, which the migration runs (and 0008 again,
for a database whose 0007 ran as a role that row-level security hid rows from).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy.typing as npt

from memagent.index.context import (
    Near,
    lent_text,
    lent_vector,
    neighbourhood,
    speaker,
    takes_part,
)
from memagent.postgres.vectors import unpack_vector, vector_text

_NEAR_SQL = (
    "SELECT d.seq, "
    "(SELECT p.seq FROM chunks p WHERE p.user_id = d.user_id "
    " AND p.conversation_id = d.conversation_id AND NOT p.deleted "
    " AND (p.created, p.seq) < (d.created, d.seq) "
    " ORDER BY p.created DESC, p.seq DESC LIMIT 1), "
    "(SELECT x.seq FROM chunks x WHERE x.user_id = d.user_id "
    " AND x.conversation_id = d.conversation_id AND NOT x.deleted "
    " AND (x.created, x.seq) > (d.created, d.seq) "
    " ORDER BY x.created, x.seq LIMIT 1) "
    "FROM chunks d WHERE d.user_id = %s AND d.conversation_id IS NOT NULL "
    "AND d.seq = ANY(%s)"
)


def neighbours(conn: Any, user: str, seqs: Iterable[int]) -> dict[int, Near]:
    """(previous, next) live chunk of the same conversation, for each of `seqs`
    that has a conversation (deleted ones included: where they sat)."""
    ids = sorted(set(seqs))
    if not ids:
        return {}
    rows = conn.execute(_NEAR_SQL, (user, ids)).fetchall()
    return {int(r[0]): (r[1], r[2]) for r in rows}


def around(conn: Any, user: str, seq: int | None) -> list[int]:
    """`seq` and the turns beside it now: what a write or delete of it touches
    (taken before the write, so the turns it leaves get a new context too)."""
    if seq is None:
        return []
    near = neighbours(conn, user, [seq]).get(seq, (None, None))
    return [seq, *(x for x in near if x is not None)]


def refresh(conn: Any, user: str, seqs: Iterable[int]) -> None:
    """Recompute the context (and `tsv`) and the searched vector of `seqs` and
    of the turns now beside them. Inside the caller's transaction."""
    hood = neighbourhood(lambda ids: neighbours(conn, user, ids), sorted(set(seqs)))
    near, targets, wanted = hood.near, hood.targets, hood.wanted
    if not targets:
        return
    # seq -> (content, takes part, speaker, own vector, live)
    info: dict[int, tuple[str, bool, str | None, npt.NDArray[Any] | None, bool]] = {}
    rows = conn.execute(
        "SELECT seq, content, deleted, source, vector_send(embedding) FROM chunks "
        "WHERE user_id = %s AND seq = ANY(%s)",
        (user, wanted),
    ).fetchall()
    for seq, content, deleted, source, emb in rows:
        src = source if isinstance(source, dict) else None
        part_of = takes_part(src, bool(deleted))
        info[int(seq)] = (content, part_of, speaker(src), unpack_vector(emb), not deleted)
    updates: list[tuple[str, str, str | None, str, int]] = []
    for t in targets:
        if t not in info:
            continue  # deleted by this very write
        content, part_of, who, own, live = info[t]
        lent = [info[x] for x in near.get(t, ()) if x is not None and x in info]
        ctx = lent_text(part_of, who, [(n[0], n[1], n[2]) for n in lent])
        vec = None
        if own is not None:
            mixed = lent_vector(own, who, [(n[3], n[2]) for n in lent if n[3] is not None], live)
            vec = vector_text(own if mixed is None else mixed)
        updates.append((ctx, ctx, vec, user, t))
    with conn.cursor() as cur:
        cur.executemany(
            "UPDATE chunks SET context = %s, tsv = memagent_chunk_tsv(content, tags, %s), "
            "search_vec = %s::vector WHERE user_id = %s AND seq = %s",
            updates,
        )


def fill(conn: Any, batch: int = 500) -> None:
    """Every stored turn's context and searched vector (rows written before
    migration 0007), user by user, `batch` turns at a time. Idempotent."""
    users = [r[0] for r in conn.execute("SELECT DISTINCT user_id FROM chunks").fetchall()]
    for user in users:
        conn.execute("SELECT set_config('memagent.user_id', %s, true)", (user,))
        seqs = [
            int(r[0])
            for r in conn.execute(
                "SELECT seq FROM chunks WHERE user_id = %s AND conversation_id IS NOT NULL "
                "ORDER BY seq",
                (user,),
            ).fetchall()
        ]
        for start in range(0, len(seqs), batch):
            refresh(conn, user, seqs[start : start + batch])
