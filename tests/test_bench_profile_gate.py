"""bench.profile_gate: the trainer of the embedding gate, and that the shipped
weights are what it fits from the committed sets."""

from __future__ import annotations

import json

import numpy as np
import pytest
from bench import profile_gate as pg

from memagent.embeddings import load_embedder
from memagent.memory.profile.factgate import shipped_weights


def test_auc_counts_pairs_and_ties() -> None:
    y = np.array([1.0, 1.0, 0.0, 0.0])
    assert pg.auc(np.array([0.9, 0.8, 0.2, 0.1]), y) == 1.0
    assert pg.auc(np.array([0.1, 0.2, 0.8, 0.9]), y) == 0.0
    assert pg.auc(np.array([0.5, 0.5, 0.5, 0.5]), y) == 0.5
    assert np.isnan(pg.auc(np.array([0.5]), np.array([1.0])))


def test_the_fit_separates_what_is_separable_and_the_bias_is_not_shrunk() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(size=(200, 5))
    y = (x[:, 0] > 0.3).astype(np.float64)
    w = pg.fit(x, y, lam=0.1)
    assert pg.auc(pg.predict(w, x), y) > 0.99
    # all one class: the bias alone carries it, however strong the penalty
    w = pg.fit(np.zeros((50, 5)), np.ones(50) * (np.arange(50) < 40), lam=100.0)
    assert pg.predict(w, np.zeros((1, 5)))[0] == pytest.approx(0.8, abs=1e-6)


def test_every_committed_set_labels_its_steps() -> None:
    data = pg.load()
    assert len(data.texts) == len(data.sentences) == len(data.labels) == len(data.groups)
    assert set(data.groups) == {
        "fixtures",
        "b13",
        "b14",
        "b15",
        "b17",
        "b22",
        "r24",
        "r27",
        "r28",
        "r31",
        "r33",
        "r34",
        "r39",
        "r40",
    }
    assert 0.1 < float(data.labels.mean()) < 0.95  # both kinds of step are there
    assert all(s and " ".join(s) == t for s, t in zip(data.sentences, data.texts, strict=True))


def test_each_distinct_string_is_embedded_once_and_rows_line_up() -> None:
    class Counting:
        def __init__(self) -> None:
            self.asked: list[str] = []

        def embed(self, texts: list[str]) -> np.ndarray:
            self.asked.extend(texts)
            return np.asarray([[float(len(t)), float(t.count("a"))] for t in texts])

    data = pg.Data(
        texts=["I am a baker.", "Hi. I like tea."],
        sentences=[["I am a baker."], ["Hi.", "I like tea."]],
        labels=np.asarray([1.0, 1.0]),
        groups=np.asarray(["x", "x"]),
    )
    fake = Counting()
    x, each, owner = pg.embedded(fake, data)
    assert sorted(fake.asked) == sorted({"I am a baker.", "Hi. I like tea.", "Hi.", "I like tea."})
    assert x[:, 0].tolist() == [13.0, 15.0]
    assert each[:, 0].tolist() == [13.0, 3.0, 11.0] and owner.tolist() == [0, 1, 1]


@pytest.mark.skipif(load_embedder() is None, reason="the MiniLM embeddings are not installed")
def test_the_shipped_weights_are_what_the_trainer_fits() -> None:
    """The final fit only (the held-out choice of lambda and cut is the bench's to print):
    the committed sets, embedded, fitted with the shipped lambda, give the shipped weights."""
    shipped = json.loads(pg.OUT.read_text(encoding="utf-8"))
    gate = shipped_weights()
    assert gate is not None
    data = pg.load()
    embedder = load_embedder()
    assert embedder is not None
    w = pg.fit(embedder.embed(data.texts).astype(np.float64), data.labels, shipped["lambda"])
    stale = "the screen or the sets changed since the fit: run python -m bench.profile_gate --write"
    assert np.allclose(w[:-1], gate.weights, atol=1e-3), stale
    assert float(w[-1]) == pytest.approx(gate.bias, abs=1e-3), stale
    assert shipped["trained_on"] == pg.trained_on(data)
    assert sum(shipped["trained_on"].values()) == len(data.texts)
