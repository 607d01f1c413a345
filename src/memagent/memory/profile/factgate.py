"""Whether a statement states a lasting fact about its writer, read from its
sentence embedding rather than asked of the model.

Why: the 1.5B model is made to list a fact for a kept statement (`extract.Reading`),
because left free it lists none for many plain facts. Made to, it also reads a
"fact" into small talk, moods and one-offs that the mechanical screen let through,
and that is most of the junk the bench measures. The model's own yes/no on "is
there a fact here?" hardly told the two apart (P(yes) 0.40-0.83 for both); a
logistic regression over MiniLM sentence embeddings does (area under the ROC curve
about 0.9 with each labelled set held out in turn: `python -m bench.profile_gate`).

Contract: `fact_probability(sentences)` is P(they state a lasting fact about the
writer, or changes one), or None when the embeddings are not installed or the
weights file is missing or malformed; a caller treats None as "not known" and
does what it did without the gate. The weights (`factgate.json`) are data,
written by `python -m bench.profile_gate --write` from the labelled statements
in `tests/fixtures/profile`; nothing here learns at run time.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib.resources import files

import numpy as np
import numpy.typing as npt

from memagent.embeddings import DIM, MODEL_NAME, load_embedder

WEIGHTS_FILE = "factgate.json"
MAX_WEIGHT = 1e4
"""A fitted weight is of the order of ten; one past this is not a trained model's."""


@dataclass(frozen=True)
class GateWeights:
    """A logistic regression over one embedder's unit vectors, and the cut under
    which a statement is not made to list a fact."""

    embedder: str
    weights: npt.NDArray[np.float64]
    bias: float
    unforce_below: float

    def probability(self, vector: npt.NDArray[np.float32]) -> float:
        z = float(np.dot(self.weights, vector.astype(np.float64))) + self.bias
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


def parse_weights(raw: str) -> GateWeights | None:
    """The weights in `raw` (the JSON `bench.profile_gate` writes), or None when
    they do not fit this embedder (another model, another size, not numbers)."""
    try:
        data = json.loads(raw)
        weights = np.asarray(data["weights"], dtype=np.float64)
        bias, cut = float(data["bias"]), float(data["unforce_below"])
        embedder = str(data["embedder"])
    except (ValueError, KeyError, TypeError):
        return None
    if embedder != MODEL_NAME or weights.shape != (DIM,) or not np.isfinite(weights).all():
        return None
    if np.abs(weights).max() > MAX_WEIGHT or not (abs(bias) <= MAX_WEIGHT and 0.0 <= cut <= 1.0):
        return None
    return GateWeights(embedder, weights, bias, cut)


@cache
def shipped_weights() -> GateWeights | None:
    """The weights shipped beside this module (read once a process)."""
    source = files("memagent.memory.profile").joinpath(WEIGHTS_FILE)
    try:
        return parse_weights(source.read_text(encoding="utf-8"))
    except OSError:
        return None


def fact_probability(
    sentences: str | Sequence[str], gate: GateWeights | None = None
) -> float | None:
    """P(`sentences` state a lasting fact about their writer): the highest of the
    sentences', so a fact said among remarks is not outvoted by them ("I never
    thought of it like that. I run a small bakery."). None when not known."""
    texts = [sentences] if isinstance(sentences, str) else list(sentences)
    texts = [t for t in texts if t.strip()]
    gate = gate or shipped_weights()
    if gate is None or not texts:
        return None
    embedder = load_embedder()
    if embedder is None or embedder.name != gate.embedder:
        return None
    return max(gate.probability(v) for v in embedder.embed(texts))
