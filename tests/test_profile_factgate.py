"""The embedding gate: P(a statement states a lasting fact) from its MiniLM vector."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from memagent.embeddings import DIM, MODEL_NAME, load_embedder
from memagent.memory.profile import factgate
from memagent.memory.profile.factgate import fact_probability, parse_weights, shipped_weights

needs_embeddings = pytest.mark.skipif(
    load_embedder() is None, reason="the MiniLM embeddings are not installed"
)


def weights_json(**change: Any) -> str:
    data: dict[str, Any] = {
        "embedder": MODEL_NAME,
        "weights": [0.01] * DIM,
        "bias": 0.5,
        "unforce_below": 0.3,
    }
    data.update(change)
    return json.dumps({k: v for k, v in data.items() if v is not ...})


def test_the_shipped_weights_fit_the_embedder_and_hold_a_cut() -> None:
    gate = shipped_weights()
    assert gate is not None and gate.embedder == MODEL_NAME
    assert gate.weights.shape == (DIM,) and 0.0 < gate.unforce_below < 1.0


def test_well_formed_weights_are_read() -> None:
    gate = parse_weights(weights_json())
    assert gate is not None and gate.bias == 0.5 and gate.unforce_below == 0.3
    # a zero vector leaves only the bias: P = sigmoid(0.5)
    assert gate.probability(np.zeros(DIM, dtype=np.float32)) == pytest.approx(0.6225, abs=1e-4)


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "not json",
        "[1, 2, 3]",
        weights_json(embedder="another-model"),
        weights_json(weights=[0.01] * (DIM - 1)),
        weights_json(weights=[[0.01] * DIM]),
        weights_json(weights=["x"] * DIM),
        weights_json(weights=[float("nan")] + [0.0] * (DIM - 1)),
        weights_json(bias="high"),
        weights_json(bias=float("inf")),
        weights_json(unforce_below=1.5),
        weights_json(unforce_below=-0.1),
        weights_json(bias=...),
        weights_json(unforce_below=...),
        weights_json(weights=[1e308] * DIM),
        weights_json(bias=1e9),
        weights_json(bias=None),
    ],
)
def test_malformed_weights_are_not_used(raw: str) -> None:
    assert parse_weights(raw) is None


def test_a_large_score_is_a_probability_not_an_overflow() -> None:
    gate = parse_weights(weights_json(weights=[9e3] * DIM))
    assert gate is not None
    assert gate.probability(np.ones(DIM, dtype=np.float32)) == 1.0
    assert gate.probability(-np.ones(DIM, dtype=np.float32)) < 1e-20


def test_without_embeddings_or_text_nothing_is_known(monkeypatch: pytest.MonkeyPatch) -> None:
    assert fact_probability("   ") is None
    monkeypatch.setattr(factgate, "load_embedder", lambda: None)
    assert fact_probability("I'm vegetarian.") is None


@needs_embeddings
def test_plain_facts_score_above_the_cut_and_remarks_below() -> None:
    gate = shipped_weights()
    assert gate is not None
    facts = ["I live in Leeds and work as a nurse.", "Im vegetarian", "I run a small bakery."]
    remarks = ["I never thought of it like that", "I'm not sure how I feel about that tbh"]
    fact_p = [fact_probability(t) for t in facts]
    remark_p = [fact_probability(t) for t in remarks]
    assert all(p is not None and p >= gate.unforce_below for p in fact_p), fact_p
    assert all(p is not None and p < gate.unforce_below for p in remark_p), remark_p


@needs_embeddings
def test_an_oversized_or_hostile_text_gets_a_probability() -> None:
    """The embedder truncates; a 20 KB statement or one full of JSON is scored, not an error."""
    for text in ["word " * 4000, '{"facts": [{"kind": "allergy"}]} ' * 50, "\x00\ufeff🙂" * 100]:
        p = fact_probability(text)
        assert p is not None and 0.0 <= p <= 1.0
