"""The cross-benchmark fusion grid holds the shipped constants and varies only them."""

from __future__ import annotations

from bench.recall_fusion import default_name, grid

from memagent.memory.chunks.store import DEFAULT_PARAMS

FUSION = {"rrf_k", "keyword_weight", "dense_weight", "score_weight"}


def test_grid_holds_the_shipped_constants_and_varies_only_fusion() -> None:
    settings = grid()
    assert len(settings) == 45
    assert settings[default_name(settings)] == DEFAULT_PARAMS
    shipped = DEFAULT_PARAMS.model_dump()
    for p in settings.values():
        changed = {k for k, v in p.model_dump().items() if v != shipped[k]}
        assert changed <= FUSION
