"""Diversity in the top k: cover more conversations, repeat less.

A question often needs facts said in several conversations ("how many times…",
"what changed since…"). Ranked by relevance alone, the top of the list repeats
one conversation: a matching turn, its reply, the next turn. `diversify` picks
the top k greedily instead:

- per-conversation decay: a candidate's relevance is multiplied by
  `decay ** m`, where m is how many already-picked hits share its conversation
  (1.0 turns it off; documents without a conversation are never decayed);
- maximal marginal relevance (Carbonell & Goldstein, 1998): minus
  `mmr_weight` × its highest cosine similarity to an already-picked hit, so a
  near-duplicate of a picked hit waits (0 turns it off; needs the vectors).

Relevance is the candidate's score divided by the best score, so the knobs mean
the same whatever the scale of the fused scores.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]


@dataclass
class Pick:
    """One picked candidate and what diversity did to it."""

    key: int
    value: float  # the relevance it was picked with (after decay and MMR)
    same_conversation: int  # picked hits before it from its conversation
    max_similarity: float  # its highest cosine to a hit picked before it


def diversify(
    candidates: Sequence[int],
    score: Mapping[int, float],
    conversation: Mapping[int, str | None],
    k: int,
    *,
    decay: float = 1.0,
    mmr_weight: float = 0.0,
    vectors: Mapping[int, Vector] | None = None,
) -> list[Pick]:
    """The top `k` of `candidates` (row keys with a score), picked greedily."""
    pool = sorted((c for c in candidates if c in score), key=lambda c: -score[c])
    if not pool or k < 1:
        return []
    top = max(score[c] for c in pool)
    scale = 1.0 / top if top > 0 else 1.0
    use_mmr = mmr_weight > 0 and vectors is not None
    mat: Vector | None = None
    has_vec = np.zeros(len(pool), dtype=bool)
    if use_mmr and vectors is not None:
        dim = next((len(v) for v in vectors.values()), 0)
        mat = np.zeros((len(pool), dim), dtype=np.float32)
        for i, c in enumerate(pool):
            vec = vectors.get(c)
            if vec is not None and len(vec) == dim:
                mat[i] = vec
                has_vec[i] = True
    max_sim = np.zeros(len(pool), dtype=np.float32)
    counts: dict[str, int] = {}
    left = list(range(len(pool)))
    picks: list[Pick] = []
    while left and len(picks) < k:
        best_i, best_v = -1, -math.inf
        for i in left:
            c = pool[i]
            conv = conversation.get(c)
            m = counts.get(conv, 0) if conv is not None else 0
            v = score[c] * scale * (decay**m if m else 1.0)
            if use_mmr and has_vec[i]:
                v -= mmr_weight * float(max_sim[i])
            if v > best_v:
                best_i, best_v = i, v
        c = pool[best_i]
        conv = conversation.get(c)
        picks.append(
            Pick(
                key=c,
                value=float(best_v),
                same_conversation=counts.get(conv, 0) if conv is not None else 0,
                max_similarity=float(max_sim[best_i]),
            )
        )
        if conv is not None:
            counts[conv] = counts.get(conv, 0) + 1
        left.remove(best_i)
        if use_mmr and mat is not None and has_vec[best_i]:
            sims = mat @ mat[best_i]
            np.maximum(max_sim, np.where(has_vec, sims, 0.0).astype(np.float32), out=max_sim)
    return picks
