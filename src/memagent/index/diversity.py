"""Diversity in the top k: cover more conversations, repeat less.

A question often needs facts said in several conversations ("how many times…",
"what changed since…"). Ranked by relevance alone, the top of the list repeats
one conversation: a matching turn, its reply, the next turn. `diversify` picks
the top k greedily instead:

- per-conversation decay: a candidate's relevance is multiplied by
  `decay ** max(m - free, 0)`, where m is how many already-picked hits share its
  conversation (1.0 turns it off; documents without a conversation are never
  decayed); the first `free` repeats of a conversation go undecayed (a turn,
  its reply and one more);
- a head of distinct conversations: the first `head` picks each come from a
  conversation not picked yet (while the candidates hold one), so a question
  whose facts are spread over several conversations sees each of them near the
  top; after the head, the decay and MMR rank as usual (0 turns it off);
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
    free: int = 0,
    mmr_weight: float = 0.0,
    vectors: Mapping[int, Vector] | None = None,
    head: int = 0,
) -> list[Pick]:
    """The top `k` of `candidates` (row keys with a score), picked greedily."""
    pool = sorted((c for c in candidates if c in score), key=lambda c: -score[c])
    if not pool or k < 1:
        return []
    n = len(pool)
    rel = np.array([score[c] for c in pool], dtype=np.float64)
    top = float(rel.max())
    if top > 0:
        rel /= top
    # Conversations as small integers; -1 for none (never decayed).
    conv_ids: dict[str, int] = {}
    conv = np.array(
        [
            -1
            if (name := conversation.get(c)) is None
            else conv_ids.setdefault(name, len(conv_ids))
            for c in pool
        ],
        dtype=np.int64,
    )
    # The last slot stands for "no conversation" and is never counted.
    counts = np.zeros(len(conv_ids) + 1, dtype=np.int64)
    slot = np.where(conv >= 0, conv, len(conv_ids))
    mat: Vector | None = None
    has_vec = np.zeros(n, dtype=bool)
    if mmr_weight > 0 and vectors is not None and vectors:
        dim = len(next(iter(vectors.values())))
        got = [vectors.get(c) for c in pool]
        has_vec = np.array([v is not None and len(v) == dim for v in got], dtype=bool)
        zero = np.zeros(dim, dtype=np.float32)
        mat = np.stack(
            [v if ok and v is not None else zero for v, ok in zip(got, has_vec, strict=True)]
        )
    max_sim = np.zeros(n, dtype=np.float64)
    penalty = np.zeros(n, dtype=np.float64)
    taken = np.zeros(n, dtype=bool)
    picks: list[Pick] = []
    for _ in range(min(k, n)):
        seen = counts[slot]
        value = rel * np.power(decay, np.maximum(seen - free, 0)) if decay < 1.0 else rel - penalty
        if decay < 1.0:
            value -= penalty
        value[taken] = -math.inf
        if len(picks) < head:
            # The head: only a conversation not picked yet (or none at all).
            fresh = ((seen == 0) | (conv < 0)) & ~taken
            if fresh.any():
                value[~fresh] = -math.inf
        i = int(np.argmax(value))
        picks.append(
            Pick(
                key=pool[i],
                value=float(value[i]),
                same_conversation=int(seen[i]),
                max_similarity=float(max_sim[i]),
            )
        )
        taken[i] = True
        if conv[i] >= 0:
            counts[slot[i]] += 1
        if mat is not None and has_vec[i]:
            np.maximum(max_sim, mat @ mat[i], out=max_sim)
            penalty = mmr_weight * max_sim
    return picks
