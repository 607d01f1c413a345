"""Every ```python example in README.md runs, as written, twice (a second run
must work too: examples are what new users paste). A block preceded by an
`<!-- readme-test: skip (why) -->` line is left out (it needs a server). A block
that runs the embedded model is `slow` and runs once."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
_FENCE = re.compile(
    r"^(?P<indent>[ \t]*)```python[ \t]*\n(?P<body>.*?)^(?P=indent)```", re.M | re.S
)
_SKIP = "<!-- readme-test: skip"


def python_blocks() -> list[tuple[int, str]]:
    text = README.read_text(encoding="utf-8")
    out: list[tuple[int, str]] = []
    for m in _FENCE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        if before.strip().startswith(_SKIP):
            continue
        out.append((line, textwrap.dedent(m.group("body"))))
    return out


BLOCKS = python_blocks()


def test_the_readme_has_examples_and_skips_say_why() -> None:
    assert len(BLOCKS) >= 3
    for m in re.finditer(re.escape(_SKIP) + r"(.*?)-->", README.read_text(encoding="utf-8")):
        assert m.group(1).strip(" ():"), "a skipped example must say why"


def _runs_a_model(code: str) -> bool:
    return 'model="embedded"' in code


@pytest.mark.parametrize(
    ("line", "code"),
    [pytest.param(n, c, marks=[pytest.mark.slow] if _runs_a_model(c) else []) for n, c in BLOCKS],
    ids=[f"README.md:{n}" for n, _ in BLOCKS],
)
def test_readme_example_runs_twice(line: int, code: str, tmp_path: Path) -> None:
    (tmp_path / "replies.json").write_text(json.dumps(["hello"]), encoding="utf-8")
    src = Path(__file__).resolve().parents[1] / "src"
    env = {
        **os.environ,
        "MEMAGENT_HOME": str(tmp_path / "home"),
        "MEMAGENT_LLM_BASE_URL": "http://127.0.0.1:9/v1",  # nothing listens: no network
        "PYTHONPATH": os.pathsep.join([str(src), os.environ.get("PYTHONPATH", "")]),
    }
    for attempt in (1,) if _runs_a_model(code) else (1, 2):
        proc = subprocess.run(
            [sys.executable, "-c", code],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert proc.returncode == 0, f"README.md:{line}, run {attempt}:\n{proc.stderr[-2000:]}"
