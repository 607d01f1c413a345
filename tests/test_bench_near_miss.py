"""`python -m bench.near_miss` on the scripted path: the probe set is what the
issue asks for, and the focus check refuses near misses the model alone answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench.near_miss import (
    PROBES,
    AlwaysYes,
    load_probes,
    main,
    run_arm,
    sample,
    summary,
)

from memagent.core import InvalidInput


def test_the_probe_set_has_60_of_each_kind() -> None:
    scenarios = load_probes()
    probes = [p for s in scenarios for p in s.probes]
    assert sum(p.answerable for p in probes) >= 60
    assert sum(not p.answerable for p in probes) >= 60
    assert len({(p.scenario, p.question) for p in probes}) == len(probes)
    assert all(p.expect for p in probes if p.answerable)


def test_sample_keeps_both_kinds() -> None:
    picked = sample(load_probes(), 10, seed=1)
    probes = [p for s in picked for p in s.probes]
    assert len(probes) == 10 and sum(p.answerable for p in probes) == 5


def test_scripted_run_refuses_near_misses_and_answers_told_facts() -> None:
    scenarios = load_probes()[:6]
    checks = summary(run_arm("checks", scenarios, AlwaysYes(), embeddings=False))
    none = summary(run_arm("none", scenarios, AlwaysYes(), embeddings=False))
    assert none["near_miss_refused"]["rate"] == 0.0  # the model alone never refuses
    assert checks["near_miss_refused"]["rate"] >= 0.75
    assert checks["false_refusal"]["rate"] <= 0.1
    lo, hi = checks["near_miss_refused"]["lo"], checks["near_miss_refused"]["hi"]
    assert lo <= checks["near_miss_refused"]["rate"] <= hi
    assert checks["check_tokens_per_question"] > 0 == none["check_tokens_per_question"]


def test_cli_prints_both_arms_and_writes_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.json"
    assert main(["--sample", "8", "--json", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(x)["arm"] for x in lines[:2]] == ["checks", "none"]
    assert lines[2].startswith("checks vs none:")
    assert [r["arm"] for r in json.loads(out.read_text())] == ["checks", "none"]


def test_a_malformed_probe_file_is_one_error(tmp_path: Path) -> None:
    bad = tmp_path / "p.json"
    bad.write_text('{"scenarios": [{"id": 1}]}')
    with pytest.raises(InvalidInput, match="not a probe set"):
        load_probes(bad)
    assert PROBES.is_file()
    with pytest.raises(InvalidInput, match="unknown arm"):
        run_arm("both", [], AlwaysYes(), embeddings=False)
