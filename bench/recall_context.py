"""What the conversation context (`memagent.index.context`) adds, part by part and
against the variants measured beside it, on LoCoMo and LongMemEval at once.

The context is built at index time, so no query knob turns all of it off. This
bench opens the homes `bench.recall_locomo` and `bench.recall_longmemeval` built
(and kept), copies each index into memory, rewrites the copy's context column
(and FTS rows) or its conversation-aware vectors the way a variant says, and asks
every question with the shipped knobs. The files and the homes' own index are
never changed.

    python -m bench.recall_context [--variants NAME …] [--locomo-workdir DIR] [--lme-workdir DIR]

Variants (`VARIANTS`): `shipped`; `none` (no keyword context, each turn searched
by its own vector: the previous round); `keyword only`; `vectors only`;
`keyword: replies lend and receive`; `keyword: previous turn only`; `vectors:
0.25` / `0.75` (a neighbour's weight); `vectors: session mean 0.3` (the mean
vector of the turn's conversation instead of its neighbours).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from bench import recall_locomo as locomo
from bench import recall_longmemeval as lme
from bench.embcache import RESULTS
from bench.embedders import cached
from memagent.index import Index, search
from memagent.index.context import context_text, mix, parse_source, takes_part
from memagent.index.vectors import ExactVectors
from memagent.memory.chunks.store import DEFAULT_PARAMS

Variant = Callable[[sqlite3.Connection], None]


def _turns(conn: sqlite3.Connection) -> list[tuple[int, str, str, dict[str, Any] | None]]:
    """(rowid, conversation, content, source) of the live turns, in conversation order."""
    rows = conn.execute(
        "SELECT rowid, conversation_id, content, source FROM docs "
        "WHERE conversation_id IS NOT NULL AND deleted = 0 "
        "ORDER BY conversation_id, created, rowid"
    ).fetchall()
    return [(int(r), str(c), str(t), parse_source(s)) for r, c, t, s in rows]


def set_contexts(conn: sqlite3.Connection, contexts: dict[int, str]) -> None:
    """Every document's context (missing: none), and the FTS table rebuilt."""
    conn.execute("UPDATE docs SET context = ''")
    conn.executemany(
        "UPDATE docs SET context = ? WHERE rowid = ?", [(c, r) for r, c in contexts.items()]
    )
    conn.execute("INSERT INTO docs_fts(docs_fts) VALUES('rebuild')")


def keyword_context(*, everyone: bool = False, previous_only: bool = False) -> Variant:
    """The keyword context by another rule: every turn lends and receives
    (`everyone`), or only the previous turn lends (`previous_only`)."""

    def apply(conn: sqlite3.Connection) -> None:
        turns = _turns(conn)
        out: dict[int, str] = {}
        for i, (rowid, conv, _text, source) in enumerate(turns):
            if not (everyone or takes_part(source)):
                continue
            near = [
                turns[j][2]
                for j in ((i - 1,) if previous_only else (i - 1, i + 1))
                if 0 <= j < len(turns)
                and turns[j][1] == conv
                and (everyone or takes_part(turns[j][3]))
            ]
            if near:
                out[rowid] = context_text(near)
        set_contexts(conn, out)

    return apply


def no_keyword_context(conn: sqlite3.Connection) -> None:
    set_contexts(conn, {})


def no_vectors(conn: sqlite3.Connection) -> None:
    conn.execute("DELETE FROM ctx_vectors")


def mixed_vectors(weight: float = 0.5, *, session_mean: bool = False) -> Variant:
    """Conversation-aware vectors with another neighbour weight, or mixed with
    the mean vector of the turn's conversation."""

    def apply(conn: sqlite3.Connection) -> None:
        own = {
            int(r): np.frombuffer(b, dtype=np.float32)
            for r, b in conn.execute("SELECT rowid, vec FROM vectors")
        }
        turns = [t for t in _turns(conn) if t[0] in own]
        by_conv: dict[str, list[int]] = {}
        for rowid, conv, _text, _source in turns:
            by_conv.setdefault(conv, []).append(rowid)
        rows: list[tuple[int, bytes]] = []
        for ids in by_conv.values():
            mean = np.mean([own[r] for r in ids], axis=0)
            for i, r in enumerate(ids):
                if session_mean:
                    v = own[r] + weight * mean
                    got = (v / np.linalg.norm(v)).astype(np.float32)
                else:
                    near = [own[ids[j]] for j in (i - 1, i + 1) if 0 <= j < len(ids)]
                    scaled = [n * (weight / 0.5) for n in near]  # `mix` weighs 0.5
                    mixed = mix(own[r], scaled)
                    if mixed is None:
                        continue
                    got = mixed
                rows.append((r, got.tobytes()))
        conn.execute("DELETE FROM ctx_vectors")
        conn.executemany("INSERT INTO ctx_vectors(rowid, vec) VALUES (?, ?)", rows)

    return apply


def _both(*parts: Variant) -> Variant:
    def apply(conn: sqlite3.Connection) -> None:
        for part in parts:
            part(conn)

    return apply


VARIANTS: dict[str, Variant | None] = {
    "shipped": None,
    "none": _both(no_keyword_context, no_vectors),
    "keyword only": no_vectors,
    "vectors only": no_keyword_context,
    "keyword: replies lend and receive": keyword_context(everyone=True),
    "keyword: previous turn only": keyword_context(previous_only=True),
    "vectors: 0.25": mixed_vectors(0.25),
    "vectors: 0.75": mixed_vectors(0.75),
    "vectors: session mean 0.3": mixed_vectors(0.3, session_mean=True),
}


class Copy:
    """A home's index, searched from an in-memory copy a variant may rewrite."""

    def __init__(self, index: Index) -> None:
        self.index = index
        self.base = sqlite3.connect(":memory:", check_same_thread=False)
        index.conn.backup(self.base)

    def use(self, variant: Variant | None) -> None:
        work = sqlite3.connect(":memory:", check_same_thread=False)
        self.base.backup(work)
        if variant is not None:
            with work:
                variant(work)
        self.index.conn = work
        self.index.vectors = ExactVectors(work, self.index.vectors_dim)

    def ids(self, query: str, k: int, now: float) -> list[str]:
        hits = search(self.index, query, k=k, params=DEFAULT_PARAMS, now=now)
        return [str((h.row.source or {}).get("id")) for h in hits]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--variants", nargs="*", default=list(VARIANTS), choices=list(VARIANTS))
    ap.add_argument("--locomo-workdir", type=Path, default=RESULTS / "locomo-homes")
    ap.add_argument("--lme-workdir", type=Path, default=RESULTS / "lme-homes")
    args = ap.parse_args(argv)
    emb_lc, emb_lm = cached("minilm", RESULTS, "locomo"), cached("minilm", RESULTS, "lme-dev50")
    if emb_lc is None or emb_lm is None:
        print("embeddings are not installed: this benchmark needs them", file=sys.stderr)
        return 2
    convs = []
    for f in sorted(locomo.DATA.glob("conv-*.json")):
        conv = json.loads(f.read_text(encoding="utf-8"))
        turns = locomo.turns_of(conv.get("conversation", conv))
        store = locomo.build_home(args.locomo_workdir, f.stem, turns, emb_lc)
        now = datetime.fromisoformat(turns[-1]["created_at"]).timestamp() + 86400
        qs = [q for q in conv["qa"] if q.get("category") in locomo.CATEGORIES]
        convs.append((Copy(store.index), [q for q in qs if locomo.evidence_of(q)], now))
    haystacks = []
    for q in lme.stratified(json.loads(lme.DATA.read_text(encoding="utf-8"))):
        said = lme.turns_of(q)
        home = lme.build_home(args.lme_workdir, q["question_id"], said, emb_lm)
        gold = {str(s) for s in q["answer_session_ids"]}
        haystacks.append((Copy(home.index), q, {t.tid: t for t in said}, gold))
    print(f"{'variant':<36} {'LoCoMo R@5':>10} {'LME any@5':>9} {'all@5':>6} {'turn@10':>7}")
    for name in args.variants:
        variant = VARIANTS[name]
        r5: list[float] = []
        for copy, questions, now in convs:
            copy.use(variant)
            for q in questions:
                ranked = copy.ids(q["question"], 5, now)
                r5.append(locomo.recall_at(ranked, locomo.evidence_of(q))[5])
        rows = []
        for copy, q, by_id, gold in haystacks:
            copy.use(variant)
            now = lme.lme_time(q["question_date"]).timestamp()
            rows.append(lme.score(copy.ids(q["question"], lme.DEPTH, now), by_id, gold))
        print(
            f"{name:<36} {np.mean(r5):>10.3f} {lme.mean(rows, 'any@5'):>9.3f} "
            f"{lme.mean(rows, 'all@5'):>6.3f} {lme.mean(rows, 'turn@10'):>7.3f}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
