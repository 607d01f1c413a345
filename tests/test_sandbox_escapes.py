"""The escape corpus (tests/fixtures/sandbox/escapes.yaml): classic pyjail
payloads and published smolagents escapes. Each must fail, leave a canary file
outside the sandbox untouched and spawn no process."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from memagent.sandbox import Limits, Session

CORPUS = yaml.safe_load(
    (Path(__file__).parent / "fixtures" / "sandbox" / "escapes.yaml").read_text("utf-8")
)


def _children() -> set[str]:
    found: set[str] = set()
    task_dir = Path(f"/proc/{os.getpid()}/task")
    if task_dir.exists():
        for task in task_dir.iterdir():
            try:
                found.update((task / "children").read_text().split())
            except OSError:
                continue
    return found


def test_corpus_is_big_enough_and_ids_unique() -> None:
    ids = [case["id"] for case in CORPUS]
    assert len(ids) >= 60
    assert len(set(ids)) == len(ids)


@pytest.mark.parametrize("case", CORPUS, ids=[c["id"] for c in CORPUS])
def test_escape_attempt_fails(
    case: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    canary = tmp_path / "canary.txt"
    canary.write_text("untouched")
    spawned: list[str] = []

    def record(name: str) -> Any:
        def fake(*args: Any, **kwargs: Any) -> Any:
            spawned.append(name)
            raise AssertionError(f"sandbox spawned a process via {name}")

        return fake

    for mod, name in [
        (subprocess, "Popen"),
        (os, "system"),
        (os, "fork"),
        (os, "posix_spawn"),
        (os, "posix_spawnp"),
        (os, "execv"),
        (os, "execve"),
        (os, "popen"),
    ]:
        if hasattr(mod, name):
            monkeypatch.setattr(mod, name, record(name))
    before = _children()
    session = Session(
        tools={"read_file": lambda path: f"contents of {path}"},
        limits=Limits(timeout_s=2.0, max_operations=300_000),
    )
    result = session.run(case["code"].replace("CANARY", str(canary)))
    assert result.error is not None, f"escape {case['id']} did not fail: {result}"
    assert case["expect"] in result.error
    assert result.error.rstrip().endswith(")")  # "(line N)"
    assert canary.read_text() == "untouched"
    assert not spawned
    assert _children() <= before
