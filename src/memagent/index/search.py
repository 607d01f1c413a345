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
5. Signals (`memagent.index.signals.SIGNALS`, in order), each a factor of the
   score with its reason in words: speaker (said by a person the query names),
   time (said within a time the query names; see `temporal`), recency and
   access (off by default and for benchmarks), not a fact (a question or
   command put to the assistant, or its own reply, keeps `non_fact_weight` of
   its score unless the query asks about the assistant's words; see `roles`),
   and the answer type (a question asking for a quantity favours memories
   stating one; see `answers`), which looks at the whole pool.
6. Diversity: the top k are picked greedily, each conversation's later picks
   decayed and near-duplicates of earlier picks held back (see `diversity`);
   a question that counts, adds up, compares or orders (`breadth`) gets its
   first `session_head` hits from distinct conversations.

Steps 2-6 are written once (`rank`) over the `Candidates` a backend gives
(`memagent.index.candidates`: this SQLite index's, or PostgreSQL's in
`memagent.postgres.chunks`). The query is read once into `QueryFacts`
(`memagent.index.query`) by the caller or here; nothing re-reads its text.

Every hit carries its score and `why` (`memagent.index.why`: ranks and raw
scores from each list, the boosts applied with their reasons, and the mode:
hybrid or keyword-only with the reason).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memagent.core.jsontext import JsonObject
from memagent.index.candidates import Candidates, Listing, LocalCandidates, Pool, fts_query
from memagent.index.diversity import diversify
from memagent.index.filters import Filters
from memagent.index.params import SearchParams, bind
from memagent.index.query import (
    MAX_QUERY_CHARS,
    QueryFacts,
    check_query,
    facts_of,
    query_terms,
)
from memagent.index.signals import Scored
from memagent.index.sqlite import Index, Row
from memagent.index.why import Boost, Diversified, Listed, Why

__all__ = [
    "MAX_QUERY_CHARS",
    "Fused",
    "Hit",
    "SearchParams",
    "check_query",
    "finish",
    "fts_query",
    "fuse",
    "query_terms",
    "rank",
    "search",
    "session_of",
]


@dataclass
class Hit:
    """One search result. `why` may be given as its JSON (read with `Why.from_json`)."""

    row: Row
    score: float
    why: Why = field(default_factory=Why)

    def __post_init__(self) -> None:
        if not isinstance(self.why, Why):
            self.why = Why.from_json(self.why)

    def to_json(self) -> JsonObject:
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
            "why": self.why.to_json(),
        }


def session_of(row: Row) -> str | None:
    """The session a row was said in, as diversity counts them: its conversation,
    split by `session_id` where one is set (an import splits a conversation with
    no per-session ids at time gaps); None for a document in no conversation."""
    if row.session_id is None:
        return row.conversation_id
    return f"{row.conversation_id or ''}\x00{row.session_id}"


def search(
    index: Index,
    query: str | QueryFacts,
    *,
    k: int = 10,
    filters: Filters | None = None,
    params: SearchParams | None = None,
    keyword_only_reason: str | None = None,
    now: float | None = None,
) -> list[Hit]:
    """Top-`k` documents of the local index for `query` (its text, read here at
    `now`, or its `QueryFacts`); see the module docstring for the ranking."""
    check_query(query.text if isinstance(query, QueryFacts) else query, k)
    facts = facts_of(query, now)
    cands = LocalCandidates(index, facts.text, filters or Filters(), keyword_only_reason)
    return rank(cands, facts, k=k, params=params or SearchParams())


def rank(cands: Candidates, facts: QueryFacts, *, k: int, params: SearchParams) -> list[Hit]:
    """Top-`k` for `facts` from a backend's candidates: keyword and dense lists,
    fused, then `finish` (module doc). Every backend searches through this."""
    p = params
    n = max(p.candidates, k)
    kw = cands.keyword(facts.terms, n, p)
    dense = cands.dense(n)
    if not kw and not dense and not facts.terms:
        # Nothing but stop words: fall back to every word, so "who am I" still searches.
        kw = cands.keyword(facts.words, n, p)
    fused = fuse(kw, dense, p)
    if not fused.score:
        return []
    keys = fused.pool(max(n, k))
    pool = cands.pool(keys, neighbours=p.neighbour_weight > 0, vectors=p.mmr_weight > 0)
    return finish(fused, pool, facts, k=k, params=p, mode=cands.mode)


@dataclass
class Fused:
    """The fused candidate scores (by row key), and where each was found: its
    place (rank, raw score rounded as shown) in the keyword and the dense list."""

    score: dict[int, float]
    keyword: dict[int, tuple[int, float]] = field(default_factory=dict)
    dense: dict[int, tuple[int, float]] = field(default_factory=dict)

    def pool(self, n: int) -> list[int]:
        """The best `n` row keys, whose rows and neighbours `finish` needs."""
        return sorted(self.score, key=lambda r: -self.score[r])[:n]

    def why(self, key: int, boosts: list[Boost] | None, mode: str) -> Why:
        """The `Why` of one ranked row (made only for the hits a search returns)."""
        kw, dense = self.keyword.get(key), self.dense.get(key)
        return Why(
            keyword=Listed(*kw) if kw is not None else None,
            dense=Listed(*dense) if dense is not None else None,
            boosts={b.name: b for b in boosts} if boosts else {},
            mode=mode,
        )


def fuse(kw: Listing, dense: Listing, p: SearchParams) -> Fused:
    """Weighted reciprocal-rank fusion of the keyword and dense lists (each best
    first, `(row key, raw score)`), plus a share of the normalised raw scores.
    Pure: every backend's candidates are fused the same way."""
    fused = Fused({})
    score = fused.score
    kw_max = kw[0][1] if kw else 1.0
    for place, (rowid, s) in enumerate(kw, 1):
        score[rowid] = score.get(rowid, 0.0) + p.keyword_weight / (p.rrf_k + place)
        score[rowid] += p.score_weight * p.keyword_weight * (s / kw_max if kw_max > 0 else 0.0)
        fused.keyword[rowid] = (place, round(s, 4))
    for place, (rowid, s) in enumerate(dense, 1):
        score[rowid] = score.get(rowid, 0.0) + p.dense_weight / (p.rrf_k + place)
        score[rowid] += p.score_weight * p.dense_weight * max(s, 0.0)
        fused.dense[rowid] = (place, round(s, 4))
    return fused


NEIGHBOUR_WORDS = "next to a message that matches"


def finish(
    fused: Fused,
    pool: Pool,
    facts: QueryFacts,
    *,
    k: int,
    params: SearchParams,
    mode: str,
) -> list[Hit]:
    """The ranking after fusion, pure like `fuse`: each memory of the pool starts
    from its fused score plus the neighbour share (a stage: it adds, it does not
    multiply), each active signal multiplies it in `SIGNALS` order, the signals'
    pool hooks run, and the top `k` are taken, diversified when the params ask
    (MMR needs the pool's vectors)."""
    p = params
    base = fused.score
    bound = [s for s in bind(p) if s.active(facts)]
    per_row = [s for s in bound if s.per_row()]
    final: dict[int, float] = {}
    scored = Scored(final, pool.rows, max(5 * k, 50) if p.diversifies else k)
    boosts = scored.boosts
    for rowid in fused.pool(len(base)):
        row = pool.rows.get(rowid)
        if row is None:
            continue
        s = base[rowid]
        if p.neighbour_weight > 0:
            near = max((base.get(nb, 0.0) for nb in pool.near.get(rowid, [])), default=0.0)
            if near > 0:
                s += p.neighbour_weight * near
                lift = round(p.neighbour_weight * near, 6)
                boosts[rowid] = [Boost("neighbour", lift, NEIGHBOUR_WORDS)]
        for signal in per_row:
            factor, boost = signal.factor(row, facts)
            if boost is not None:
                s *= factor
                boosts.setdefault(rowid, []).append(boost)
                if factor < 1.0:
                    scored.lowered.add(rowid)
        final[rowid] = s
    for signal in bound:
        if signal.per_pool():
            signal.rescore(scored, facts)
    if not p.diversifies:
        ranked = sorted(final, key=lambda r: -final[r])[:k]
        return [Hit(pool.rows[r], final[r], fused.why(r, boosts.get(r), mode)) for r in ranked]
    # Diversity reorders the head of the list: the best 5k (at least 50) by score.
    top = sorted(final, key=lambda r: -final[r])[: scored.window]
    picks = diversify(
        top,
        final,
        {r: session_of(pool.rows[r]) for r in top},
        k,
        decay=p.session_decay,
        free=p.session_free,
        mmr_weight=p.mmr_weight,
        vectors=pool.vectors,
        head=p.session_head if p.session_head_always or facts.breadth else 0,
    )
    hits = []
    for pick in picks:
        why = fused.why(pick.key, boosts.get(pick.key), mode)
        if pick.same_conversation or pick.max_similarity:
            why.diversity = Diversified(pick.same_conversation, pick.max_similarity)
        hits.append(Hit(pool.rows[pick.key], final[pick.key], why))
    return hits
