"""Retrieval quality does not regress: LoCoMo recall@5 on one dev conversation
stays at or above the figure the benchmarks page states for exactly that conversation."""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest
from bench.evaldata import eval_dir
from bench.recall_locomo import CATEGORIES, build_home, evidence_of, recall_at, turns_of

from memagent.embeddings import load_embedder
from memagent.memory.chunks.store import DEFAULT_PARAMS

BENCHMARKS = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"
CONVERSATION = "conv-30"
_FIGURE = re.compile(r"regression figure: LoCoMo `conv-30` recall@5 = (\d\.\d{3})")


def readme_figure() -> float:
    m = _FIGURE.search(BENCHMARKS.read_text(encoding="utf-8"))
    assert m, "docs/benchmarks.md states the regression figure"
    return float(m.group(1))


def test_cross_validation_picks_on_train_and_scores_on_test() -> None:
    from bench.recall_locomo import cross_validate

    per_conv = {
        "a": {"c1": [1.0], "c2": [1.0], "c3": [0.0], "c4": [0.0]},
        "b": {"c1": [0.5], "c2": [0.5], "c3": [0.5], "c4": [0.5]},
    }
    cv = cross_validate(per_conv, default="b", train_size=2)
    assert len(cv["splits"]) == 6
    first = cv["splits"][0]  # train c1, c2: "a" wins there and scores 0 on c3, c4
    assert first["picked"] == "a" and first["train_score"] == 1.0 and first["test_score"] == 0.0
    assert first["default_test"] == 0.5


def test_cv_grids_hold_the_shipped_defaults() -> None:
    from bench import recall_locomo, recall_longmemeval

    grid = recall_locomo.cv_grid()
    assert grid[recall_locomo._default_name(grid)] == DEFAULT_PARAMS
    assert {p.session_head for p in grid.values()} == {0, DEFAULT_PARAMS.session_head}
    lme = recall_longmemeval.cv_grid()
    assert lme[recall_longmemeval.default_name(lme)] == DEFAULT_PARAMS


@pytest.mark.slow
def test_dev_recall_does_not_fall_below_the_readme(tmp_path: Path) -> None:
    path = eval_dir("locomo") / f"{CONVERSATION}.json"
    if not path.is_file():
        pytest.skip(f"LoCoMo dev data not found at {path}")
    if load_embedder() is None:
        pytest.skip("embeddings are not installed")
    conv = json.loads(path.read_text(encoding="utf-8"))
    turns = turns_of(conv.get("conversation", conv))
    store = build_home(tmp_path, CONVERSATION, turns)
    now = datetime.fromisoformat(turns[-1]["created_at"]).timestamp() + 86400
    got: list[float] = []
    for q in conv["qa"]:
        gold = evidence_of(q)
        if q.get("category") not in CATEGORIES or not gold:
            continue
        hits = store.recall(q["question"], k=5, params=DEFAULT_PARAMS, now=now)
        got.append(recall_at([str((h.row.source or {}).get("id")) for h in hits], gold)[5])
    store.close()
    assert float(np.mean(got)) >= readme_figure() - 0.0005
