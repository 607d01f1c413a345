"""What a user's file without metadata costs recall, and what inference wins back
(`python -m bench.recall_locomo --shape full minimal`).

Each LoCoMo dev conversation is written as an import file (`bench.shapes`) and
imported through the importer `memagent import` runs; every question of
categories 1–4 is asked of each home with the shipped ranking. Printed: recall
@1/5/10 per shape and category, a bootstrap 95% interval on recall@5 (questions
resampled), and each shape against the first, paired question by question.

`Variant` is an ablation: `infer` "speaker" / "session" / "none" turns off the
importer's session split or speaker inference (the reindex-time one too), and
`gap_minutes` replaces `SESSION_GAP`.

The session gap is checked by leave-one-conversation-out on how well the split
finds LoCoMo's own session boundaries (`print_gap_cv`): for each conversation,
the gap best on the other four (ties: the shipped one), scored on it.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from bench.recall_locomo import CATEGORIES, KS, evidence_of, recall_at
from bench.shapes import Shape, conversation_turns, records, write_import
from memagent.agent.attribution import attribute
from memagent.agent.recalled import RecalledMemory
from memagent.core import MemoryHome
from memagent.embeddings import Embedder
from memagent.index import documents
from memagent.memory.chunks import ChunkStore, exports
from memagent.memory.chunks.importer import SESSION_GAP, drafts_from_messages, infer_metadata
from memagent.memory.chunks.message import ImportedMessage
from memagent.memory.chunks.store import DEFAULT_PARAMS
from memagent.setup import init_home

GAPS_MINUTES = (1.0, 5.0, 10.0, 30.0, 60.0, 180.0, 720.0, 1440.0, 2880.0, 4320.0)


@dataclass(frozen=True)
class Variant:
    """What the import may infer ("all", "speaker", "session", "none") and the
    session gap in minutes (None: the shipped `SESSION_GAP`)."""

    infer: str = "all"
    gap_minutes: float | None = None

    @property
    def gap(self) -> timedelta:
        return SESSION_GAP if self.gap_minutes is None else timedelta(minutes=self.gap_minutes)

    @property
    def tag(self) -> str:
        if self.infer == "all" and self.gap_minutes is None:
            return ""
        return f"-{self.infer}-{self.gap_minutes or 'default'}"


@contextlib.contextmanager
def _no_speaker_inference(off: bool) -> Iterator[None]:
    """Turn off the index's reading of `Name:` prefixes (for an ablation only)."""
    if not off:
        yield
        return
    saved = documents.infer_speaker
    documents.infer_speaker = lambda source, content: None
    try:
        yield
    finally:
        documents.infer_speaker = saved


def messages_of(path: Path, variant: Variant) -> list[ImportedMessage]:
    """The file's messages as `memagent import` reads them, less what `variant` turns off."""
    raw = exports.read(path.read_text(encoding="utf-8"), path.name)
    msgs = infer_metadata(raw, gap=variant.gap)
    if variant.infer in ("session", "none"):  # keep sessions only / nothing
        msgs = [
            m.model_copy(update={"speaker": None}) if "speaker" in m.inferred else m for m in msgs
        ]
    if variant.infer in ("speaker", "none"):
        msgs = [
            m.model_copy(update={"session_id": None}) if "session" in m.inferred else m
            for m in msgs
        ]
    return msgs


def import_home(
    root: Path,
    name: str,
    conv: dict[str, Any],
    shape: Shape,
    embedder: Embedder | None = None,
    variant: Variant | None = None,
) -> ChunkStore:
    """A home holding `conv` imported as a user's file of `shape`; built once per workdir."""
    variant = variant or Variant()
    home = MemoryHome.open(root / f"{name}-{shape}{variant.tag}")
    fresh = not (home.layout.chunks.is_dir() and any(home.layout.chunks.iterdir()))
    if fresh:
        init_home(home)
    with _no_speaker_inference(variant.infer in ("session", "none")):
        store = ChunkStore(home, embeddings=True)
        if embedder is not None:
            store.embedder = embedder
        if fresh:
            path = root / f"{name}.{shape}.jsonl"
            write_import(conv, path, shape, name=name)
            msgs = messages_of(path, variant)
            store.create_many(drafts_from_messages(msgs, origin=path.name, tags=[]))
    return store


def bootstrap(values: list[float], n: int = 2000, seed: int = 7) -> tuple[float, float]:
    """95% percentile interval of the mean of `values` (resampled with replacement)."""
    arr = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    means = arr[rng.integers(0, len(arr), size=(n, len(arr)))].mean(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def compare_shapes(
    files: list[Path],
    shapes: list[Shape],
    workdir: Path,
    embedder: Embedder,
    variant: Variant | None = None,
) -> dict[str, dict[int, list[float]]]:
    """The hybrid's recall@1/5/10 per question (same order in every shape), printed
    per shape and category with bootstrap intervals, and each shape against the first."""
    variant = variant or Variant()
    per: dict[str, dict[int, list[float]]] = {s: {k: [] for k in KS} for s in shapes}
    attributed: dict[str, list[int]] = {s: [0, 0, 0, 0, 0] for s in shapes}
    cats: list[int] = []
    for f in files:
        conv = json.loads(f.read_text(encoding="utf-8"))
        last = conversation_turns(conv)[-1].timestamp
        now = datetime.fromisoformat(last).timestamp() + 86400  # asked the next day
        questions = [q for q in conv["qa"] if q.get("category") in CATEGORIES and evidence_of(q)]
        cats += [int(q["category"]) for q in questions]
        for shape in shapes:
            store = import_home(workdir, f.stem, conv, shape, embedder, variant)
            for q in questions:
                hits = store.recall(q["question"], k=10, params=DEFAULT_PARAMS, now=now)
                ids = [str((h.row.source or {}).get("id")) for h in hits]
                got = recall_at(ids, evidence_of(q))
                for k in KS:
                    per[shape][k].append(got[k])
                count_attribution(attributed[shape], hits, q["question"], evidence_of(q))
            store.close()
        save = getattr(embedder, "save", None)
        if save is not None:
            save()
    gap = variant.gap_minutes or SESSION_GAP.total_seconds() / 60
    print(
        f"LoCoMo retrieval by import shape, {len(files)} conversations, {len(cats)} questions "
        f"(inferred: {variant.infer}; session gap {gap:g} min)"
    )
    print(f"{'shape':<8} {'category':<12} {'n':>4}   R@1    R@5  95% interval   R@10")
    for shape in shapes:
        for cat, label in [*CATEGORIES.items(), (0, "overall")]:
            idx = [i for i, c in enumerate(cats) if cat in (0, c)]
            r5 = [per[shape][5][i] for i in idx]
            lo, hi = bootstrap(r5)
            r1 = np.mean([per[shape][1][i] for i in idx])
            r10 = np.mean([per[shape][10][i] for i in idx])
            print(
                f"{shape:<8} {label:<12} {len(idx):>4} {r1:>6.3f}"
                f" {np.mean(r5):>6.3f} [{lo:.3f}, {hi:.3f}] {r10:>6.3f}"
            )
    for shape in shapes:
        named, lines, withheld, lost, evidence = attributed[shape]
        print(
            f"{shape}: speaker attribution on the top 10: {named} questions name a speaker; "
            f"{withheld} of their {lines} lines withheld (neither by nor about the named "
            f"speaker, or only about the one spoken to); evidence lines withheld: "
            f"{lost} of {evidence}"
        )
    base = shapes[0]
    for shape in shapes[1:]:
        diff = [a - b for a, b in zip(per[shape][5], per[base][5], strict=True)]
        lo, hi = bootstrap(diff)
        print(
            f"{shape} - {base} recall@5: {100 * np.mean(diff):+.1f} points "
            f"(95% interval {100 * lo:+.1f} to {100 * hi:+.1f}, paired)"
        )
    return per


def count_attribution(tally: list[int], hits: list[Any], question: str, gold: set[str]) -> None:
    """Add to `tally` [questions naming a speaker, their lines, lines withheld,
    evidence lines withheld, evidence lines] what `attribute` does to these hits (as the agent
    sees them: content and source)."""
    lines = [RecalledMemory.of(h) for h in hits]
    who = attribute(lines, question, k=5)
    if not who.named:
        return
    kept = {h.id for h in who.hits}
    out = [h for h in hits if h.row.doc_id not in kept]
    tally[0] += 1
    tally[1] += len(lines)
    tally[2] += len(out)
    tally[3] += sum(str((h.row.source or {}).get("id")) in gold for h in out)
    tally[4] += sum(str((h.row.source or {}).get("id")) in gold for h in hits)


def boundary_f1(conv: dict[str, Any], gap: timedelta) -> float:
    """How well splitting the minimal file at `gap` finds the conversation's own
    session boundaries: F1 over "a new session starts at this turn"."""
    turns = conversation_turns(conv)
    msgs = infer_metadata([ImportedMessage(**r) for r in records(conv, "minimal")], gap=gap)
    truth = {i for i in range(1, len(turns)) if turns[i].session != turns[i - 1].session}
    found = {i for i in range(1, len(msgs)) if msgs[i].session_id != msgs[i - 1].session_id}
    if not truth and not found:
        return 1.0
    hit = len(truth & found)
    return 2 * hit / (len(truth) + len(found))


def print_gap_cv(files: list[Path]) -> dict[str, float]:
    """Leave-one-conversation-out choice of the session gap (see the module docstring)."""
    default = SESSION_GAP.total_seconds() / 60
    convs = {f.stem: json.loads(f.read_text(encoding="utf-8")) for f in files}
    f1 = {
        (name, g): boundary_f1(c, timedelta(minutes=g))
        for name, c in convs.items()
        for g in GAPS_MINUTES
    }
    print("session gap, leave one conversation out (session-boundary F1 of the minimal file)")
    print("gap (min): " + " ".join(f"{g:g}" for g in GAPS_MINUTES))
    held: dict[str, float] = {}
    for name in convs:
        rest = [n for n in convs if n != name]

        def train(g: float, rest: list[str] = rest) -> float:
            return float(np.mean([f1[(n, g)] for n in rest]))

        best = max(GAPS_MINUTES, key=lambda g: (train(g), g == default))
        held[name] = f1[(name, best)]
        row = " ".join(f"{f1[(name, g)]:.2f}" for g in GAPS_MINUTES)
        print(f"{name}: {row} | picked {best:g} min on the rest, held-out F1 {held[name]:.3f}")
    return held
