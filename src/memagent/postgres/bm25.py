"""Keyword ranking by BM25 in PostgreSQL, as the local index ranks (SQLite
FTS5's `bm25(1.0, 0.5, context_weight)`: k1 1.2, b 0.75, content counted fully,
tags at half and a turn's context (its neighbours' words, weight C in `tsv`,
see `context.py`) at `context_weight`; IDF `ln((N - df + 0.5) / (df + 0.5))`
floored at 1e-6), over one user's rows.

`ts_rank_cd` has no inverse document frequency: a common word counts as much as
a rare one, which cost PostgreSQL recall several points on LoCoMo. Here N, the
average length and each query lexeme's document frequency are counted over the
user's live rows at query time (the rows' lengths, `dl`, are kept by a trigger;
see migration 0006), so both backends rank keyword candidates alike. The
statistics are MATERIALIZED CTEs: inlined, each document frequency was counted
again for every (candidate, lexeme) pair (1.2 s a query over one LoCoMo
conversation's 663 turns, 15 ms with them computed once). A candidate's term
frequencies are read from its tsvector cut down to the query's lexemes
(`ts_delete` of every other lexeme: all C, no per-lexeme rows), not from every
lexeme it has, its neighbours' included (about 40 a turn): half the time, the
same sums in the same order.

As the local search does, a query lexeme is matched in the context only when
it is in `context` (`context_lexemes`: said in the own words of at most
`context_max_docs` documents); the others count, and their document frequency
is taken, in own words (and tags) only.
"""

from __future__ import annotations

from typing import Any

K1 = 1.2
B = 0.75
TAG_WEIGHT = 0.5
_OWN = "ts_filter({t}, '{{a,b}}') @@ plainto_tsquery('simple', {lex})"


def context_lexemes(conn: Any, user: str, terms: list[str], max_docs: int) -> list[str]:
    """The query lexemes of `terms` said in the own words (or tags) of at most
    `max_docs` of the user's live documents (chunks, notes and facts): those
    worth matching in the turns' context. Each count stops at `max_docs` + 1."""
    if not terms:
        return []
    own_c = _OWN.format(t="x.tsv", lex="q.lex")
    rows = conn.execute(
        "SELECT q.lex FROM (SELECT DISTINCT u.lexeme AS lex "
        "FROM unnest(to_tsvector('english', %s)) u) q WHERE "
        "(SELECT count(*) FROM (SELECT 1 FROM chunks x WHERE x.user_id = %s AND NOT x.deleted "
        f"AND x.tsv @@ plainto_tsquery('simple', q.lex) AND {own_c} LIMIT %s) a) + "
        "(SELECT count(*) FROM (SELECT 1 FROM search_docs x WHERE x.user_id = %s "
        f"AND NOT x.deleted AND x.tsv @@ plainto_tsquery('simple', q.lex) AND {own_c} "
        "LIMIT %s) b) <= %s",
        (" ".join(terms), user, max_docs + 1, user, max_docs + 1, max_docs),
    ).fetchall()
    return sorted(r[0] for r in rows)


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
    context: list[str] | None = None,
    context_weight: float = 0.0,
) -> list[tuple[int, float]]:
    """The best `n` rows of `table` (aliased `alias` in `where`) matching any of
    `terms`, as (sign * seq, BM25 score), best first. Lexemes in `context` are
    matched in a row's context too, at `context_weight`."""
    if not terms:
        return []
    a = alias
    text = " ".join(terms)
    ctx = list(context or []) if context_weight > 0 else []
    cw = float(context_weight)
    own_x = _OWN.format(t="x.tsv", lex="q.lex")
    sql = (
        "WITH q AS MATERIALIZED (SELECT DISTINCT u.lexeme AS lex "
        "FROM unnest(to_tsvector('english', %s)) u), "
        "stats AS MATERIALIZED (SELECT count(*)::float8 AS n, "
        "greatest(avg(x.dl), 1)::float8 AS avgdl "
        f"FROM {table} x WHERE x.user_id = %s AND NOT x.deleted), "
        "df AS MATERIALIZED (SELECT q.lex, q.lex = ANY(%s::text[]) AS ctx, "
        f"(SELECT count(*) FROM {table} x WHERE x.user_id = %s "
        "AND NOT x.deleted AND x.tsv @@ plainto_tsquery('simple', q.lex) "
        f"AND (q.lex = ANY(%s::text[]) OR {own_x}))::float8 AS df FROM q), "
        f"cand AS (SELECT {a}.seq, {a}.tsv, {a}.dl FROM {table} {a}, "
        "websearch_to_tsquery('english', %s) wq "
        f"WHERE {a}.user_id = %s AND {a}.tsv @@ wq AND {where}) "
        "SELECT cand.seq, sum(greatest(ln((stats.n - df.df + 0.5) / (df.df + 0.5)), 1e-6) "
        f"* (t.tf * {K1 + 1}) / (t.tf + {K1} * ({1 - B} + {B} * cand.dl / stats.avgdl))) AS s "
        "FROM cand CROSS JOIN stats CROSS JOIN LATERAL unnest(ts_delete(cand.tsv, "
        "tsvector_to_array(ts_delete(cand.tsv, (SELECT array_agg(q.lex) FROM q))))) u "
        "JOIN df ON df.lex = u.lexeme CROSS JOIN LATERAL (SELECT sum(CASE w WHEN 'A' THEN 1.0 "
        f"WHEN 'C' THEN (CASE WHEN df.ctx THEN {cw!r} ELSE 0 END) ELSE {TAG_WEIGHT} END) AS tf "
        "FROM unnest(u.weights) w) t WHERE t.tf > 0 "
        "GROUP BY cand.seq ORDER BY s DESC, cand.seq DESC LIMIT %s"
    )
    rows = conn.execute(
        sql, (text, user, ctx, user, ctx, " or ".join(terms), user, *params, n)
    ).fetchall()
    return [(sign * int(r[0]), float(r[1])) for r in rows]
