"""The profile-learning bench: its sets load, the fresh held-out part runs only
when asked for, matching folds word endings, and a scripted run scores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench import profile_learn as pl


def test_the_sets_load_with_unique_ids_and_three_splits() -> None:
    scenarios = pl.load_set()
    ids = [s.id for s in scenarios]
    assert len(ids) == len(set(ids))
    by_split = {split: [s for s in scenarios if s.split == split] for split in pl.SPLITS}
    assert sum(len(s.steps) for s in by_split["fresh"]) >= 60
    assert sum(len(s.steps) for s in by_split["dev"] + by_split["held"]) >= 150
    assert set(pl.DEFAULT_SPLITS) == {"dev", "held"}  # fresh: only by name


def test_matching_folds_word_endings() -> None:
    item = pl.Stored("fitness.activities", "swimming", "Swimming", None)
    assert pl.matches(pl.Entry.parse("fitness.activities|routine.daily=swim"), item)
    assert not pl.matches(pl.Entry.parse("routine.daily=swim"), item)
    assert not pl.matches(pl.Entry.parse("fitness.activities=swim team"), item)


def test_a_scripted_run_on_two_dev_scenarios(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "figures.json"
    assert (
        pl.main(["--model", "scripted", "--split", "dev", "--limit", "2", "--json", str(out)]) == 0
    )
    rows = json.loads(out.read_text())
    assert rows[0]["model"] == "scripted" and "held" not in rows[0] and "fresh" not in rows[0]
    assert rows[0]["dev"]["statements"] >= 2
    assert "precision" in capsys.readouterr().out
