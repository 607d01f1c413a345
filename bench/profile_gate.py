"""Train and measure the embedding gate (`memagent.memory.profile.factgate`):
`python -m bench.profile_gate [--write]`.

Data: every step of the labelled profile sets in `tests/fixtures/profile` (the
dev/held, fresh, dev2 and dev3 sets, and the blind sets since read, under
`read/`), as the mechanical screen leaves it (`statements.screen`: the kept
sentences; a step it drops entirely never reaches the model and is left out).
Label: 1 when the step states or changes a fact (tags fact, correction, negation,
expiry), 0 when it should change nothing (none, hostile).

Model: L2-regularised logistic regression over MiniLM unit vectors of the kept
text, fitted by Newton's method; a step's P is its highest sentence's, as learning
reads it. Every constant is chosen with each set held out in turn
(leave-one-set-out): the regularisation that gives the best pooled held-out AUC,
then the cut under which a statement is not made to list a fact, the highest
whose held-out predictions leave at most `--max-unforced` of the fact steps under
it (5%: a fact step left unforced is not lost, the model free to list nothing still
lists most; replaying the read sets b13, b15 and b17 with weights fitted without
each, cuts 0.35, 0.5 and 0.7 cost at most two expected items a set, and 0.5 removed
half the junk the forced reading let in). Printed: held-out AUC per set for the
logistic regression and, as the baseline measured in the same run, for a
15-nearest-neighbour vote; the steps each cut would leave unforced. `--write`
fits on every set and writes `src/memagent/memory/profile/factgate.json`.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import yaml

from memagent.embeddings import MODEL_NAME, load_embedder
from memagent.memory.profile.factgate import WEIGHTS_FILE
from memagent.memory.profile.statements import screen

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "profile"
OUT = ROOT / "src" / "memagent" / "memory" / "profile" / WEIGHTS_FILE
SETS = (
    "statements.yaml",
    "statements_fresh.yaml",
    "statements_dev2.yaml",
    "statements_dev3.yaml",
    "read/b13.yaml",
    "read/b14.yaml",
    "read/b15.yaml",
    "read/b17.yaml",
    "read/b22.yaml",
    "read/r24.yaml",
    "read/r27.yaml",
    "read/r28.yaml",
    "read/r31.yaml",
    "read/r33.yaml",
    "read/r34.yaml",
    "read/r39.yaml",
    "read/r40.yaml",
)
FACT_TAGS = ("fact", "correction", "negation", "expiry")
LAMBDAS = (0.03, 0.1, 0.3, 1.0)
CUTS = (0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5)
KNN = 15

Array = npt.NDArray[np.float64]


@dataclass
class Data:
    texts: list[str]
    sentences: list[list[str]]
    labels: Array
    groups: npt.NDArray[np.str_]
    """Which set a step comes from: the unit held out."""


def trained_on(data: Data) -> dict[str, int]:
    """Steps per set, as the weights file records them."""
    return {g: int((data.groups == g).sum()) for g in sorted(set(data.groups))}


def embedded(embedder: Any, data: Data) -> tuple[Array, Array, npt.NDArray[np.int_]]:
    """Each step's vector, each sentence's vector and its step: every distinct string
    embedded once (most steps are one sentence, the same string twice)."""
    flat = [(i, t) for i, sents in enumerate(data.sentences) for t in sents]
    distinct = sorted({*data.texts, *(t for _, t in flat)})
    row = {t: n for n, t in enumerate(distinct)}
    vectors = embedder.embed(distinct).astype(np.float64)
    x = vectors[[row[t] for t in data.texts]]
    each = vectors[[row[t] for _, t in flat]]
    return x, each, np.asarray([i for i, _ in flat])


def _group(name: str) -> str:
    return "fixtures" if name.startswith("statements") else Path(name).stem


def load(sets: tuple[str, ...] = SETS) -> Data:
    texts: list[str] = []
    sentences: list[list[str]] = []
    labels: list[int] = []
    groups: list[str] = []
    for name in sets:
        group = _group(name)
        for scenario in yaml.safe_load((FIXTURES / name).read_text(encoding="utf-8")):
            for step in scenario["steps"]:
                kept = screen(step["say"]).kept
                if kept:
                    texts.append(" ".join(kept))
                    sentences.append(list(kept))
                    labels.append(1 if step.get("tag", "fact") in FACT_TAGS else 0)
                    groups.append(group)
    return Data(texts, sentences, np.asarray(labels, dtype=np.float64), np.asarray(groups))


def fit(x: Array, y: Array, lam: float) -> Array:
    """Weights with the bias last; the bias is not regularised."""
    xb = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(xb.shape[1])
    reg = lam * np.eye(xb.shape[1])
    reg[-1, -1] = 0.0
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-np.clip(xb @ w, -60, 60)))
        hess = xb.T @ (xb * (p * (1 - p))[:, None]) + reg
        step = np.linalg.solve(hess, xb.T @ (p - y) + reg @ w)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def predict(w: Array, x: Array) -> Array:
    return 1.0 / (1.0 + np.exp(-np.clip(x @ w[:-1] + w[-1], -60, 60)))


def knn(x_train: Array, y_train: Array, x_test: Array, k: int = KNN) -> Array:
    nearest = np.argsort(-(x_test @ x_train.T), axis=1)[:, :k]
    return y_train[nearest].mean(axis=1)


def auc(p: Array, y: Array) -> float:
    pos, neg = p[y == 1], p[y == 0]
    if not len(pos) or not len(neg):
        return float("nan")
    return float((pos[:, None] > neg[None, :]).mean() + 0.5 * (pos[:, None] == neg[None, :]).mean())


def held_out(x: Array, each: Array, owner: Array, data: Data, lam: float) -> tuple[Array, Array]:
    """Each step's P from the model fitted without its set, as learning reads it: the
    highest of its sentences' (`each`, one row per sentence; `owner`, its step), so a
    fact buried in chatter is not outvoted; the same for k-NN."""
    logit, vote = np.zeros(len(x)), np.zeros(len(x))
    for g in sorted(set(data.groups)):
        test = data.groups == g
        w = fit(x[~test], data.labels[~test], lam)
        rows = test[owner]
        np.maximum.at(logit, owner[rows], predict(w, each[rows]))
        np.maximum.at(vote, owner[rows], knn(x[~test], data.labels[~test], each[rows]))
    return logit, vote


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.profile_gate", description=__doc__)
    ap.add_argument("--write", action="store_true", help=f"write {OUT.name} from every set")
    ap.add_argument(
        "--max-unforced",
        type=float,
        default=0.05,
        help="the most fact steps (held out) a cut may leave unforced (default 0.05)",
    )
    args = ap.parse_args(argv)
    embedder = load_embedder()
    if embedder is None:
        print("bench.profile_gate: the MiniLM embeddings are not installed", file=sys.stderr)
        return 1
    data = load()
    x, each, owner = embedded(embedder, data)
    y = data.labels
    facts, nones = y == 1, y == 0
    print(f"{len(y)} steps ({int(facts.sum())} facts, {int(nones.sum())} none), {len(SETS)} files")
    best: tuple[float, float, Array] = (-1.0, LAMBDAS[0], np.zeros(len(y)))
    for lam in LAMBDAS:
        logit, vote = held_out(x, each, owner, data, lam)
        per_set = "  ".join(
            f"{g} {auc(logit[data.groups == g], y[data.groups == g]):.3f}"
            for g in sorted(set(data.groups))
        )
        pooled, base = auc(logit, y), auc(vote, y)
        print(f"lambda {lam:<5} held-out AUC {pooled:.3f} (k-NN baseline {base:.3f}, "
              f"ratio {pooled / base:.3f})  per set: {per_set}")  # fmt: skip
        if pooled > best[0]:
            best = (pooled, lam, logit)
    _, lam, logit = best
    cut = 0.0
    print(f"chosen lambda {lam}; held-out steps under each cut:")
    for c in CUTS:
        lost = float(((logit < c) & facts).sum() / facts.sum())
        caught = float(((logit < c) & nones).sum() / nones.sum())
        print(f"  {c:.2f}: none steps {caught:.1%}, fact steps {lost:.1%}")
        if lost <= args.max_unforced:
            cut = c
    print(f"chosen cut {cut}")
    if args.write:
        w = fit(x, y, lam)
        out = {
            "embedder": MODEL_NAME,
            "lambda": lam,
            "unforce_below": cut,
            "trained_on": trained_on(data),
            "bias": round(float(w[-1]), 6),
            "weights": [round(float(v), 6) for v in w[:-1]],
        }
        OUT.write_text(json.dumps(out) + "\n", encoding="utf-8")
        print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
