"""Keyword ranking by BM25 in PostgreSQL, as the local index ranks (SQLite
FTS5's `bm25(1.0, 0.5)`: k1 1.2, b 0.75, content counted fully and tags at half,
IDF `ln((N - df + 0.5) / (df + 0.5))` floored at 1e-6), over one user's rows.

`ts_rank_cd` has no inverse document frequency: a common word counts as much as
a rare one, which cost PostgreSQL recall several points on LoCoMo. Here N, the
average length and each query lexeme's document frequency are counted over the
user's live rows at query time (the rows' lengths, `dl`, are kept by a trigger;
see migration 0006), so both backends rank keyword candidates alike.
"""

from __future__ import annotations

from typing import Any

K1 = 1.2
B = 0.75
TAG_WEIGHT = 0.5


def bm25(
    conn: Any,
    table: str,
    user: str,
    terms: list[str],
    where: str,
    params: list[Any],
    n: int,
    *,
    alias: str,
    sign: int = 1,
) -> list[tuple[int, float]]:
    """The best `n` rows of `table` (aliased `alias` in `where`) matching any of
    `terms`, as (sign * seq, BM25 score), best first."""
    if not terms:
        return []
    a = alias
    text = " ".join(terms)
    sql = (
        "WITH q AS (SELECT DISTINCT u.lexeme AS lex FROM unnest(to_tsvector('english', %s)) u), "
        f"stats AS (SELECT count(*)::float8 AS n, greatest(avg(x.dl), 1)::float8 AS avgdl "
        f"FROM {table} x WHERE x.user_id = %s AND NOT x.deleted), "
        f"df AS (SELECT q.lex, (SELECT count(*) FROM {table} x WHERE x.user_id = %s "
        "AND NOT x.deleted AND x.tsv @@ plainto_tsquery('simple', q.lex))::float8 AS df FROM q), "
        f"cand AS (SELECT {a}.seq, {a}.tsv, {a}.dl FROM {table} {a}, "
        "websearch_to_tsquery('english', %s) wq "
        f"WHERE {a}.user_id = %s AND {a}.tsv @@ wq AND {where}) "
        "SELECT cand.seq, sum(greatest(ln((stats.n - df.df + 0.5) / (df.df + 0.5)), 1e-6) "
        f"* (t.tf * {K1 + 1}) / (t.tf + {K1} * ({1 - B} + {B} * cand.dl / stats.avgdl))) AS s "
        "FROM cand CROSS JOIN stats CROSS JOIN LATERAL unnest(cand.tsv) u "
        "JOIN df ON df.lex = u.lexeme CROSS JOIN LATERAL (SELECT sum(CASE WHEN w = 'A' "
        f"THEN 1.0 ELSE {TAG_WEIGHT} END) AS tf FROM unnest(u.weights) w) t "
        "GROUP BY cand.seq ORDER BY s DESC, cand.seq DESC LIMIT %s"
    )
    rows = conn.execute(sql, (text, user, user, " or ".join(terms), user, *params, n)).fetchall()
    return [(sign * int(r[0]), float(r[1])) for r in rows]
