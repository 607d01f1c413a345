"""Notes and profile facts as searchable rows (`search_docs`), the way the local
index holds them (`memagent.index.documents`: the same `note_doc` and
`fact_docs`), kept in step with the note or resource they come from, and
searched next to the chunks (keys are negative `seq`, so one fused ranking
holds both tables)."""

from __future__ import annotations

import json
import time
from datetime import date
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from memagent.index import Filters, Row
from memagent.index.documents import NOTE, Doc, fact_docs, note_doc
from memagent.index.filters import PostgresFilterSQL
from memagent.postgres.bm25 import bm25
from memagent.postgres.vectors import unpack_vector, vector_text

if TYPE_CHECKING:
    from memagent.embeddings import Embedder

DOCS_SQL = PostgresFilterSQL()
_COLS = (
    "seq, doc_id, kind, path, content, tags, type, created, created_at, conversation_id, "
    "session_id, scope_user_id, agent_id, deleted, source"
)


def note_path(rel: str) -> str:
    """A vault path as the index names it (home-relative)."""
    return f"vault/{rel}"


def _expiries(data: Any) -> dict[str, date]:
    """doc_id → expiry date of each profile item that has one."""
    out: dict[str, date] = {}
    if not isinstance(data, dict):
        return out
    meta = data.get("_metadata") if isinstance(data.get("_metadata"), dict) else {}
    resource = meta.get("resource_id") if isinstance(meta, dict) else None
    for section, lists in data.items():
        if section.startswith("_") or not isinstance(lists, dict):
            continue
        for list_name, items in lists.items():
            for item in items if isinstance(items, list) else []:
                if not isinstance(item, dict) or not isinstance(item.get("expiry"), str):
                    continue
                text = item.get("display") or item.get("item")
                key = item.get("item") if isinstance(item.get("item"), str) else text
                try:
                    out[f"fact:{resource}:{section}:{list_name}:{key}"] = date.fromisoformat(
                        item["expiry"][:10]
                    )
                except ValueError:
                    continue
    return out


def replace_docs(
    conn: Any,
    user: str,
    kind: str,
    path: str,
    docs: list[Doc],
    embedder: Embedder | None,
    expires: dict[str, date] | None = None,
) -> None:
    """Make the `kind` rows of `path` exactly `docs` (in the caller's transaction)."""
    conn.execute(
        "DELETE FROM search_docs WHERE user_id = %s AND kind = %s AND path = %s",
        (user, kind, path),
    )
    if not docs:
        return

    vectors = embedder.embed([d.content for d in docs]) if embedder is not None else None
    rows = []
    for i, d in enumerate(docs):
        source = json.dumps(d.source, ensure_ascii=False) if d.source else None
        vec = vector_text(vectors[i]) if vectors is not None else None
        when = (expires or {}).get(d.doc_id)
        head = (user, d.doc_id, d.kind, d.path, d.content, d.tags, d.type, d.created)
        rows.append((*head, d.created_at, when, source, d.content, " ".join(d.tags), vec))
    with conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO search_docs(user_id, doc_id, kind, path, content, tags, type, created, "
            "created_at, deleted, expires, source, tsv, embedding) VALUES (%s, %s, %s, %s, %s, "
            "%s, %s, %s, %s, false, %s, %s::jsonb, setweight(to_tsvector('english', %s), 'A') "
            "|| setweight(to_tsvector('english', %s), 'B'), %s::vector) "
            "ON CONFLICT (user_id, doc_id) DO NOTHING",
            rows,
        )


def index_note(
    conn: Any, user: str, rel: str, data: bytes | None, embedder: Embedder | None
) -> None:
    """The search row of a vault note (none when deleted or not UTF-8 text)."""
    path = note_path(rel)
    docs: list[Doc] = []
    if data is not None:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text is not None and rel.endswith(".md"):
            docs = [note_doc(path, text, time.time())]
    replace_docs(conn, user, NOTE, path, docs, embedder)


def index_facts(conn: Any, user: str, name: str, text: str, embedder: Embedder | None) -> None:
    """The search rows of a profile resource's live items."""
    path = f"profile/{name}"
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    docs = fact_docs(path, data, time.time())
    replace_docs(conn, user, "fact", path, docs, embedder, _expiries(data))


def _row(r: tuple[Any, ...]) -> Row:
    return Row(
        rowid=-int(r[0]),
        doc_id=r[1],
        kind=r[2],
        path=r[3],
        content=r[4],
        tags=list(r[5]),
        type=r[6],
        created=float(r[7]),
        created_at=r[8],
        conversation_id=r[9],
        session_id=r[10],
        user_id=r[11],
        agent_id=r[12],
        speaker=None,
        deleted=bool(r[13]),
        access_count=0,
        accessed=None,
        source=r[14],
    )


def _live(where: str) -> str:
    return f"{where} AND (d.expires IS NULL OR d.expires >= current_date)"


def keyword(conn: Any, user: str, terms: list[str], f: Filters, n: int) -> list[tuple[int, float]]:
    """Keyword candidates among notes and facts: (-seq, BM25), best first."""
    where, params = f.sql("d", DOCS_SQL)
    return bm25(conn, "search_docs", user, terms, _live(where), params, n, alias="d", sign=-1)


def dense(conn: Any, user: str, q: str, f: Filters, n: int) -> list[tuple[int, float]]:
    """Dense candidates among notes and facts (exact): (-seq, cosine), best first."""
    where, params = f.sql("d", DOCS_SQL)
    rows = conn.execute(
        "SELECT d.seq, 1 - (d.embedding <=> %s::vector) FROM search_docs d "
        f"WHERE d.user_id = %s AND d.embedding IS NOT NULL AND {_live(where)} "
        "ORDER BY (d.embedding <=> %s::vector) + 0, d.seq LIMIT %s",
        (q, user, *params, q, n),
    ).fetchall()
    return [(-int(r[0]), float(r[1])) for r in rows]


def rows(
    conn: Any, user: str, keys: list[int], *, with_vectors: bool = False
) -> tuple[dict[int, Row], dict[int, npt.NDArray[np.float32]]]:
    """The rows of the (negative) keys, and (`with_vectors`) their embeddings,
    which MMR compares, read in pgvector's binary form."""
    seqs = [-k for k in keys if k < 0]
    if not seqs:
        return {}, {}
    extra = ", vector_send(embedding)" if with_vectors else ""
    found = conn.execute(
        f"SELECT {_COLS}{extra} FROM search_docs WHERE user_id = %s AND seq = ANY(%s)",
        (user, seqs),
    ).fetchall()
    vectors: dict[int, npt.NDArray[np.float32]] = {}
    for r in found:
        vec = unpack_vector(r[15]) if with_vectors else None
        if vec is not None:
            vectors[-int(r[0])] = vec
    return {-int(r[0]): _row(r) for r in found}, vectors


def merge(
    a: list[tuple[int, float]], b: list[tuple[int, float]], n: int
) -> list[tuple[int, float]]:
    """Two candidate lists (each best first, same score scale) as one, best first."""
    return sorted(a + b, key=lambda x: -x[1])[:n]
