"""Per-user dense top-k is exact at many users: 1,000 users of uneven sizes
share one HNSW-indexed table, and every user's top-k equals the exact top-k
computed in Python over that user's (live) vectors alone.

The table lives in a schema of its own (the full migrations run there), filled
before its HNSW index is built, which keeps the test fast."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from urllib.parse import quote

import numpy as np
import psycopg
import pytest

from memagent.index import Filters
from memagent.postgres import Database, PgChunkStore
from memagent.postgres.chunks import DIM
from memagent.postgres.vectors import vector_text

USERS = 1000
K = 5


@pytest.fixture(scope="module")
def schema_db(pg_url: str) -> Iterator[Database]:
    schema = f"topk_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    sep = "&" if "?" in pg_url else "?"
    url = f"{pg_url}{sep}options={quote(f'-csearch_path={schema},public')}"
    database = Database.open(url, max_size=2)
    yield database
    database.close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_every_users_top_k_is_exact_among_a_thousand_users(schema_db: Database) -> None:
    db = schema_db
    rng = np.random.default_rng(7)
    # uneven: most users have a row or two, a few have hundreds
    sizes = np.minimum(rng.zipf(2.0, USERS), 200)
    sizes[:3] = [1, 2, K - 1]  # users with fewer rows than k get all of theirs
    users = [f"u{i}" for i in range(USERS)]
    vectors = {u: _unit(rng, int(n)) for u, n in zip(users, sizes, strict=True)}
    deleted = {u: rng.random(len(v)) < 0.1 for u, v in vectors.items()}
    with db._connection() as conn:
        conn.execute("DROP INDEX chunks_search_vec")
        with (
            conn.cursor() as cur,
            cur.copy(
                "COPY chunks (user_id, id, data, content, tsv, embedding, search_vec, deleted) "
                "FROM STDIN"
            ) as copy,
        ):
            for u, vecs in vectors.items():
                for i, vec in enumerate(vecs):
                    copy.write_row(
                        (
                            u,
                            f"c{i}",
                            "{}",
                            "x",
                            "",
                            vector_text(vec),
                            vector_text(vec),
                            bool(deleted[u][i]),
                        )
                    )
        conn.execute("SET statement_timeout = 0")
        conn.execute(
            "CREATE INDEX chunks_search_vec ON chunks USING hnsw (search_vec vector_cosine_ops)"
        )
        conn.commit()
        ids = {
            (u, int(seq)): cid
            for u, seq, cid in conn.execute("SELECT user_id, seq, id FROM chunks").fetchall()
        }
    for u, q in zip(users, _unit(rng, USERS), strict=True):
        got = PgChunkStore(db, u, embeddings=False).dense_candidates(q, K, Filters())
        live = np.flatnonzero(~deleted[u])
        sims = vectors[u][live] @ q
        best = live[np.argsort(-sims, kind="stable")][:K]
        assert [ids[(u, seq)] for seq, _ in got] == [f"c{i}" for i in best], u
        assert np.allclose([s for _, s in got], np.sort(sims)[::-1][:K], atol=1e-4)
    # a filter narrows the exact scan too: only the deleted rows of the biggest user
    big = users[int(np.argmax(sizes))]
    gone = PgChunkStore(db, big, embeddings=False).dense_candidates(
        _unit(rng, 1)[0], 1000, Filters(include_deleted=True)
    )
    assert len(gone) == int(sizes.max())
