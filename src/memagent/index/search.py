"""Hybrid search: BM25 (FTS5) and cosine similarity, fused, then shaped by what
conversations show.

Pipeline for one query:
1. Query rewriting without an LLM: keyword terms lose question words and stop
   words and become an OR query (FTS5's default AND misses paraphrases).
2. Candidates: top-N by BM25 and top-N by cosine (when embeddings exist).
   A conversation turn's BM25 document also holds the words of the turns
   beside it, at `context_weight` of its own (see `context`), so "it was
   amazing" is found by a question about the concert it answers.
3. Fusion: weighted reciprocal-rank fusion of the two lists, plus a small
   weight on the normalised raw scores (ranks alone throw away how *much*
   better the first hit is).
4. Context: in a conversation, the answer to a question often sits in the turn
   next to the one that matches; a document gains a share of its best
   neighbour's score (neighbours = adjacent documents of the same conversation).
5. Speaker: a document said by a person the query names gains a boost.
6. Time: a document said within a time the query names ("in May 2023", "last
   summer", "two weeks ago"; see `temporal`) gains a boost. Answer type: a
   question asking for a quantity ("how many…", "how much…", "how old…")
   favours documents that state one (see `answers`).
7. Optional recency and access boosts (config; off by default and for benchmarks).
8. Not a fact: a document whose source marks it as a question or command put
   to the assistant, or as the assistant's own reply (`non_fact`), keeps only
   `non_fact_weight` of its score: it stays findable (the conversation record)
   but never outranks what the user actually said — unless the query asks
   about the assistant's own words ("remind me what you suggested"; see `roles`).
9. Diversity: the top k are picked greedily, each conversation's later picks
   decayed and near-duplicates of earlier picks held back (see `diversity`);
   a question that counts, adds up, compares or orders (`breadth`) gets its
   first `session_head` hits from distinct conversations.

Every hit carries its score and `why` (ranks and raw scores from each list,
the boosts applied, and the mode: hybrid or keyword-only with the reason).
"""

from __future__ import annotations

import heapq
import math
import re
import sqlite3
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from memagent.core import InvalidInput
from memagent.index.answers import asks_quantity, states_quantity
from memagent.index.breadth import wants_many
from memagent.index.diversity import diversify
from memagent.index.filters import Filters
from memagent.index.roles import asks_about_assistant, non_fact, said_by_assistant
from memagent.index.store import CONTEXT_MAX_DOCS, CONTEXT_WEIGHT, Index, Row, fts_rank
from memagent.index.temporal import time_ranges

MAX_QUERY_CHARS = 4000
_TERM = re.compile(r"[^\W_]+", re.UNICODE)
STOPWORDS = frozenset(
    line.strip()
    for line in (Path(__file__).with_name("stopwords.txt")).read_text("utf-8").splitlines()
    if line.strip() and not line.startswith("#")
)


class SearchParams(BaseModel):
    """Knobs of the ranking; defaults are tuned on LoCoMo (see bench/recall_locomo.py)."""

    model_config = ConfigDict(extra="forbid")

    candidates: int = Field(default=100, ge=1, le=5000)
    rrf_k: float = Field(default=60.0, gt=0)
    keyword_weight: float = Field(default=1.0, ge=0)
    dense_weight: float = Field(default=1.0, ge=0)
    score_weight: float = Field(default=0.5, ge=0)
    neighbour_weight: float = Field(default=0.3, ge=0)
    speaker_boost: float = Field(default=0.5, ge=0)
    recency_weight: float = Field(default=0.0, ge=0)
    recency_half_life_days: float = Field(default=30.0, gt=0)
    access_weight: float = Field(default=0.0, ge=0)
    non_fact_weight: float = Field(default=0.05, ge=0, le=1)
    # A query word in the turns next to a turn (its context, see `context`) counts
    # this much of one in the turn itself; 0 matches the turns' own words only
    # (FTS5's BM25 still normalises by the whole row's length, context included).
    context_weight: float = Field(default=CONTEXT_WEIGHT, ge=0, le=10)
    # A query word in the own words of more than this many documents is matched
    # in their own words only (see `_context_terms`).
    context_max_docs: int = Field(default=CONTEXT_MAX_DOCS, ge=0, le=10**9)
    # A time the query names doubles what was said then (a soft filter).
    temporal_boost: float = Field(default=1.0, ge=0)
    # A question asking for a quantity ("how many…", "how much…") favours the
    # memories that state one (a number, an amount) by this share (see `answers`).
    quantity_boost: float = Field(default=0.5, ge=0)
    # After three picks from one conversation (a turn, its reply and one more),
    # each further pick from it counts half: the top k cover more conversations.
    session_decay: float = Field(default=0.5, ge=0, le=1)
    session_free: int = Field(default=2, ge=0, le=1000)
    mmr_weight: float = Field(default=0.3, ge=0)
    # A question that counts, adds up, compares or orders (see `breadth`) gets
    # its first three hits from three different conversations; always, if set.
    session_head: int = Field(default=3, ge=0, le=1000)
    session_head_always: bool = False

    @property
    def diversifies(self) -> bool:
        return self.session_decay < 1.0 or self.mmr_weight > 0 or self.session_head > 0


@dataclass
class Hit:
    """One search result."""

    row: Row
    score: float
    why: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        r = self.row
        return {
            "id": r.doc_id,
            "kind": r.kind,
            "content": r.content,
            "score": round(self.score, 6),
            "tags": r.tags,
            "type": r.type,
            "created_at": r.created_at,
            "source": r.source,
            "path": r.path,
            "why": self.why,
        }


def session_of(row: Row) -> str | None:
    """The session a row was said in, as diversity counts them: its conversation,
    split by `session_id` where one is set (an import splits a conversation with
    no per-session ids at time gaps); None for a document in no conversation."""
    if row.session_id is None:
        return row.conversation_id
    return f"{row.conversation_id or ''}\x00{row.session_id}"


def check_query(query: object, k: int) -> None:
    """Refuse what no backend may search for: an empty or oversized query, k < 1."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidInput("query is empty")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidInput(f"query is {len(query)} characters; the limit is {MAX_QUERY_CHARS}")
    if k < 1:
        raise InvalidInput("k must be at least 1")


def query_terms(query: str) -> list[str]:
    """Keyword terms of a query: lower-cased words, no stop words, possessives cut."""
    terms: list[str] = []
    for raw in _TERM.findall(query.lower()):
        if raw in STOPWORDS or (len(raw) == 1 and not raw.isdigit()):
            continue
        if raw not in terms:
            terms.append(raw)
    return terms


def _quoted(terms: list[str]) -> str:
    return " OR ".join('"' + t.replace('"', "") + '"' for t in terms)


def fts_query(terms: list[str], *, context: bool | set[str] = True) -> str:
    """The FTS5 query: any of the terms; searched in the turns' context as well
    as their own words and tags if `context` is True (or, a set, for those terms
    in it), else in the own words and tags only."""
    if context is True:
        return _quoted(terms)
    own = [t for t in terms if context is False or t not in context]
    anywhere = [t for t in terms if t not in own]
    parts = ([f"{{content tags}} : ({_quoted(own)})"] if own else []) + (
        [_quoted(anywhere)] if anywhere else []
    )
    return " OR ".join(parts)


def _context_terms(index: Index, terms: list[str], max_docs: int) -> set[str]:
    """The terms said in the own words of at most `max_docs` documents: those
    worth matching in the turns' context. A word said in many turns says little
    about which exchange a question means, and its context matches would be
    many more rows to rank (the cost of FTS5 grows with the rows that match).
    Each count stops at `max_docs` + 1 rows, so it costs little."""
    out: set[str] = set()
    for t in terms:
        own = f'{{content tags}} : "{t.replace(chr(34), "")}"'
        found = index.conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM docs_fts WHERE docs_fts MATCH ? LIMIT ?)",
            (own, max_docs + 1),
        ).fetchone()[0]
        if found <= max_docs:
            out.add(t)
    return out


def _keyword(
    index: Index, terms: list[str], filters: Filters, n: int, p: SearchParams
) -> list[tuple[int, float]]:
    if not terms:
        return []
    where, params = filters.sql("d")
    context: bool | set[str] = False
    if p.context_weight > 0:
        context = _context_terms(index, terms, p.context_max_docs)
    match = fts_query(terms, context=context)
    rank = fts_rank(p.context_weight)
    if filters.narrowing:
        sql = (
            "SELECT f.rowid, -f.rank AS s FROM docs_fts f "
            "JOIN docs d ON d.rowid = f.rowid WHERE docs_fts MATCH ? AND f.rank MATCH ? "
            f"AND {where} ORDER BY f.rank LIMIT ?"
        )
        args: tuple[Any, ...] = (match, rank, *params, n)
    else:
        # FTS5 ranks fastest on its own; soft-deleted rows are dropped afterwards
        # (over-fetching a little), which keeps p95 at 10^6 documents in bounds.
        sql = (
            "SELECT f.rowid, f.s FROM (SELECT rowid, -rank AS s FROM docs_fts "
            "WHERE docs_fts MATCH ? AND rank MATCH ? ORDER BY rank LIMIT ?) f "
            f"JOIN docs d ON d.rowid = f.rowid WHERE {where} ORDER BY f.s DESC LIMIT ?"
        )
        args = (match, rank, n + 16, *params, n)
    try:
        rows = index.conn.execute(sql, args).fetchall()
    except sqlite3.OperationalError as exc:
        raise InvalidInput(f"query could not be searched: {exc}") from exc
    return [(int(r), float(s)) for r, s in rows]


def _dense(index: Index, qv: np.ndarray, filters: Filters, n: int) -> list[tuple[int, float]]:
    """The best `n` rows by cosine among those the filters allow.

    The vector index knows nothing of filters, so the best rows overall are
    fetched first (a few more than `n`; four times as many under a narrowing
    filter) and checked in SQL. When at least `n` pass, or the store holds no
    more, they are exactly the best `n` allowed rows. Only otherwise (a selective
    filter, or many soft-deleted rows on top) is the whole allowed set read and
    searched: reading it costs ~0.7 ms per thousand rows.
    """
    where, params = filters.sql("docs")
    want = 4 * n if filters.narrowing else n + 16
    found = index.vectors.search(qv, want)
    if not found:
        return []
    ids = [r for r, _ in found]
    keep: set[int] = set()
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        # NOT INDEXED: look the rows up by rowid, never scan a filter's index.
        marks = ",".join("?" * len(part))
        sql = f"SELECT rowid FROM docs NOT INDEXED WHERE rowid IN ({marks}) AND {where}"
        keep.update(r[0] for r in index.conn.execute(sql, [*part, *params]))
    hits = [(r, s) for r, s in found if r in keep]
    if len(hits) >= n or len(found) < want:
        return hits[:n]
    allowed = np.fromiter(
        (r[0] for r in index.conn.execute(f"SELECT rowid FROM docs WHERE {where}", params)),
        dtype=np.int64,
    )
    return index.vectors.search(qv, n, allowed)


def neighbours(index: Index, rowids: list[int]) -> dict[int, list[int]]:
    """The previous and next document of the same conversation, for each rowid."""
    return {r: [x for x in pn if x is not None] for r, pn in index.neighbours(rowids).items()}


def search(
    index: Index,
    query: str,
    *,
    k: int = 10,
    filters: Filters | None = None,
    params: SearchParams | None = None,
    keyword_only_reason: str | None = None,
    now: float | None = None,
) -> list[Hit]:
    """Top-`k` documents for `query` (see the module docstring for the ranking)."""
    check_query(query, k)
    filters = filters or Filters()
    p = params or SearchParams()
    n = max(p.candidates, k)
    terms = query_terms(query)
    hybrid = index.embedder is not None and len(index.vectors) > 0
    # The query is embedded on a worker thread while FTS5 runs here.
    qv = index.query_vector_soon(query) if hybrid else None
    kw = _keyword(index, terms, filters, n, p)
    got = _Fetched(index, p.neighbour_weight > 0)
    if qv is not None and not qv.done():
        # Still embedding: read what `finish` needs of the keyword candidates now;
        # after fusion only the rest of the pool is read.
        got.fetch([r for r, _ in kw])
    dense: list[tuple[int, float]] = []
    if qv is not None:
        dense = _dense(index, qv.result(), filters, n)
        mode = "hybrid"
    else:
        mode = "keyword-only" + (f" ({keyword_only_reason})" if keyword_only_reason else "")
    if not kw and not dense and not terms:
        # Nothing but stop words: fall back to every word, so "who am I" still searches.
        every = list(dict.fromkeys(_TERM.findall(query.lower())))
        kw = _keyword(index, every, filters, n, p)

    fused = fuse(kw, dense, p)
    if not fused.score:
        return []
    pool = fused.pool(max(n, k))
    got.fetch(pool)
    rows = {r: got.rows[r] for r in pool if r in got.rows}
    near_of = {r: got.near[r] for r in pool if r in got.near}
    vectors = index.vectors.get(pool) if hybrid and p.mmr_weight > 0 else None
    return finish(fused, rows, near_of, query, k=k, params=p, mode=mode, now=now, vectors=vectors)


class _Fetched:
    """Rows and conversation neighbours read so far, each rowid read once."""

    def __init__(self, index: Index, with_neighbours: bool) -> None:
        self.index = index
        self.with_neighbours = with_neighbours
        self.done: set[int] = set()
        self.rows: dict[int, Row] = {}
        self.near: dict[int, list[int]] = {}

    def fetch(self, rowids: list[int]) -> None:
        todo = [r for r in rowids if r not in self.done]
        if not todo:
            return
        self.rows.update(self.index.rows(todo))
        if self.with_neighbours:
            self.near.update(neighbours(self.index, todo))
        self.done.update(todo)


@dataclass
class Fused:
    """The fused candidate scores (by row key) and why each scored."""

    score: dict[int, float]
    why: dict[int, dict[str, Any]]

    def pool(self, n: int) -> list[int]:
        """The best `n` row keys, whose rows and neighbours `finish` needs."""
        return sorted(self.score, key=lambda r: -self.score[r])[:n]


def fuse(kw: list[tuple[int, float]], dense: list[tuple[int, float]], p: SearchParams) -> Fused:
    """Weighted reciprocal-rank fusion of the keyword and dense lists (each best
    first, `(row key, raw score)`), plus a share of the normalised raw scores.

    Pure, so every backend ranks the same way: the SQLite index and the
    PostgreSQL store both feed it their candidate lists.
    """
    why: dict[int, dict[str, Any]] = {}
    score: dict[int, float] = {}
    kw_max = kw[0][1] if kw else 1.0
    for rank, (rowid, s) in enumerate(kw, 1):
        score[rowid] = score.get(rowid, 0.0) + p.keyword_weight / (p.rrf_k + rank)
        score[rowid] += p.score_weight * p.keyword_weight * (s / kw_max if kw_max > 0 else 0.0)
        why.setdefault(rowid, {})["keyword"] = {"rank": rank, "bm25": round(s, 4)}
    for rank, (rowid, s) in enumerate(dense, 1):
        score[rowid] = score.get(rowid, 0.0) + p.dense_weight / (p.rrf_k + rank)
        score[rowid] += p.score_weight * p.dense_weight * max(s, 0.0)
        why.setdefault(rowid, {})["dense"] = {"rank": rank, "cosine": round(s, 4)}
    return Fused(score, why)


def _quantity(
    final: dict[int, float],
    may_state: list[int],
    rows: dict[int, Row],
    why: dict[int, dict[str, Any]],
    boost: float,
    window: int,
) -> None:
    """The answer type (see `answers`): each of `may_state` that states a quantity
    gains `boost` (a factor, like the other boosts, so applying it last changes
    nothing). Reading a memory's text is the cost, so only those that could then
    reach the best `window` scores (all that is ranked further) are read: the
    `window`-th score can only rise, so one below it even when lifted never enters."""
    floor = heapq.nlargest(window, final.values())[-1] if len(final) >= window else 0.0
    for rowid in may_state:
        if final[rowid] * (1.0 + boost) >= floor and states_quantity(rows[rowid].content):
            final[rowid] *= 1.0 + boost
            why.setdefault(rowid, {}).setdefault("boosts", {})["quantity"] = boost


def finish(
    fused: Fused,
    rows: dict[int, Row],
    near_of: dict[int, list[int]],
    query: str,
    *,
    k: int,
    params: SearchParams,
    mode: str,
    now: float | None = None,
    vectors: Mapping[int, np.ndarray] | None = None,
) -> list[Hit]:
    """Apply the neighbour, speaker, time, recency and access boosts to the
    fused scores of `rows` (the pool) and return the top `k`, diversified when
    the params ask (MMR needs `vectors` of the pool). Pure, like `fuse`."""
    p = params
    base = fused.score
    why = fused.why
    final: dict[int, float] = {}
    query_words = set(_TERM.findall(query.lower()))
    now = time.time() if now is None else now
    ranges = time_ranges(query, now) if p.temporal_boost > 0 else []
    # A question about what the assistant said lifts the penalty on its replies.
    about_assistant = p.non_fact_weight < 1 and asks_about_assistant(query)
    quantity = p.quantity_boost > 0 and asks_quantity(query)
    may_state: list[int] = []  # memories the answer type may lift (see `_quantity`)
    for rowid in fused.pool(len(base)):
        row = rows.get(rowid)
        if row is None:
            continue
        s = base[rowid]
        boosts: dict[str, float] = {}
        if p.neighbour_weight > 0:
            near = max((base.get(nb, 0.0) for nb in near_of.get(rowid, [])), default=0.0)
            if near > 0:
                s += p.neighbour_weight * near
                boosts["neighbour"] = round(p.neighbour_weight * near, 6)
        if p.speaker_boost > 0 and row.speaker and row.speaker.lower() in query_words:
            s *= 1.0 + p.speaker_boost
            boosts["speaker"] = p.speaker_boost
        # Not a fact (see `roles`): kept at `non_fact_weight` of its score below,
        # unless the query asks about the assistant's words and these are theirs.
        not_a_fact = p.non_fact_weight < 1 and non_fact(row.source)
        asked_about = not_a_fact and about_assistant and said_by_assistant(row.source)
        penalised = not_a_fact and not asked_about
        if quantity and not penalised:
            may_state.append(rowid)
        if ranges and row.created > 0 and any(r.contains(row.created) for r in ranges):
            s *= 1.0 + p.temporal_boost
            boosts["time"] = p.temporal_boost
        if p.recency_weight > 0 and row.created > 0:
            age_days = max(now - row.created, 0.0) / 86400.0
            factor = p.recency_weight * math.pow(0.5, age_days / p.recency_half_life_days)
            s *= 1.0 + factor
            boosts["recency"] = round(factor, 6)
        if p.access_weight > 0 and row.access_count > 0:
            factor = p.access_weight * math.log1p(row.access_count)
            s *= 1.0 + factor
            boosts["access"] = round(factor, 6)
        if penalised:
            s *= p.non_fact_weight
            boosts["non_fact"] = p.non_fact_weight
        elif asked_about:
            boosts["about_assistant"] = 1.0
        final[rowid] = s
        w = why.setdefault(rowid, {})
        if boosts:
            w["boosts"] = boosts
        w["mode"] = mode
    window = max(5 * k, 50) if p.diversifies else k
    if may_state:
        _quantity(final, may_state, rows, why, p.quantity_boost, window)
    if not p.diversifies:
        ranked = sorted(final, key=lambda r: -final[r])[:k]
        return [Hit(rows[r], final[r], why[r]) for r in ranked]
    # Diversity reorders the head of the list: the best 5k (at least 50) by score.
    top = sorted(final, key=lambda r: -final[r])[:window]
    picks = diversify(
        top,
        final,
        {r: session_of(rows[r]) for r in top},
        k,
        decay=p.session_decay,
        free=p.session_free,
        mmr_weight=p.mmr_weight,
        vectors=vectors,
        head=p.session_head if p.session_head_always or wants_many(query) else 0,
    )
    for pick in picks:
        if pick.same_conversation or pick.max_similarity:
            why[pick.key]["diversity"] = {
                "same_conversation": pick.same_conversation,
                "max_cosine": round(pick.max_similarity, 4),
            }
    return [Hit(rows[pk.key], final[pk.key], why[pk.key]) for pk in picks]
