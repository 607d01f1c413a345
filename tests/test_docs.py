"""Every code example in README.md and docs/**/*.md runs, as written.

- A ```python block runs in a fresh process, twice (a second run must work too: examples
  are what new users paste), with `MEMAGENT_HOME` in a temporary folder and no model
  server reachable.
- The ```bash blocks of one page run in order, once, in one temporary folder, as a reader
  following the page would: `HOME` is that folder, where `memagent init` has made the
  default home (`~/.memagent`) and, for a page that uses it, `~/mem`, `memagent` is this
  checkout's CLI, and each block runs under `set -euo pipefail`.
- A synopsis (placeholders, alternatives in brackets) is a ```text block, which nothing
  runs. Other fences (json, toml, text) are data.

The line just before a fence may say how to run it, and must say why:
`<!-- docs-test: skip (why) -->` leaves the block out (it needs a server, a database, the
network or a model); `<!-- docs-test: slow (why) -->` marks it `slow` and runs it once
(it runs the embedded model). A slow block whose lines, comments aside, begin another slow
block (the README's agent example, continued in the agent page) runs through that one: the
model's minute-long first load is paid once for both."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import tokenize
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
_FENCE = re.compile(
    r"^(?P<indent>[ \t]*)```(?P<lang>[a-z]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```", re.M | re.S
)
_MARK = re.compile(r"<!-- docs-test: (?P<kind>[a-z-]+)(?P<why>.*?)-->")
RUN = {"python", "bash"}
TIMEOUT = 600


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    lang: str
    code: str
    mark: str  # "", "skip" or "slow"

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    out: list[Block] = []
    for m in _FENCE.finditer(text):
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1].strip()
        mark = _MARK.fullmatch(before)
        out.append(
            Block(
                page=page,
                line=text.count("\n", 0, m.start()) + 1,
                lang=m.group("lang"),
                code=textwrap.dedent(m.group("body")),
                mark=mark.group("kind") if mark else "",
            )
        )
    return out


ALL = [b for page in PAGES for b in blocks(page)]


def code_lines(code: str) -> list[str]:
    """The block's lines without comments, trailing blanks dropped."""
    lines = code.splitlines()
    for tok in tokenize.generate_tokens(iter(code.splitlines(keepends=True)).__next__):
        if tok.type == tokenize.COMMENT:
            row, col = tok.start
            lines[row - 1] = lines[row - 1][:col]
    out = [line.rstrip() for line in lines]
    while out and not out[-1]:
        out.pop()
    return out


def covered_by(block: Block, others: list[Block]) -> Block | None:
    """Another slow block that runs all of `block`'s lines first, in order, then more."""
    mine = code_lines(block.code)
    for other in others:
        theirs = code_lines(other.code)
        if other is not block and len(theirs) > len(mine) and theirs[: len(mine)] == mine:
            return other
    return None


RUNNABLE = [b for b in ALL if b.lang == "python" and b.mark != "skip"]
_SLOW = [b for b in RUNNABLE if b.mark == "slow"]
PYTHON = [b for b in RUNNABLE if b.mark != "slow" or covered_by(b, _SLOW) is None]
BASH_PAGES = sorted({b.page for b in ALL if b.lang == "bash" and b.mark != "skip"})


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "MEMAGENT_HOME"}
    env.update(
        MEMAGENT_LLM_BASE_URL="http://127.0.0.1:9/v1",  # nothing listens: no network
        PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
    )
    return env


def test_the_docs_have_runnable_examples_and_every_marker_says_why() -> None:
    assert len(PYTHON) >= 6 and len(BASH_PAGES) >= 5
    assert any(b.mark == "slow" for b in PYTHON)
    for page in PAGES:
        for m in _MARK.finditer(page.read_text(encoding="utf-8")):
            assert m.group("kind") in {"skip", "slow"}, f"{page}: unknown marker {m.group(0)}"
            assert m.group("why").strip(" ():"), f"{page}: a marked example must say why"
    for b in ALL:
        assert b.lang in {"python", "bash", "json", "toml", "text", ""}, (
            f"{b.where}: fence `{b.lang}` (run: python, bash; data: json, toml, text)"
        )


def test_a_slow_example_is_left_out_only_when_another_runs_all_its_lines_first() -> None:
    covered = [b for b in RUNNABLE if b not in PYTHON]
    assert all(b.mark == "slow" for b in covered)
    for b in covered:
        other = covered_by(b, _SLOW)
        assert other is not None and other in PYTHON
        assert code_lines(other.code)[: len(code_lines(b.code))] == code_lines(b.code)
    page = Path("p.md")
    first = Block(page, 1, "python", "import a  # one\nwith a.B() as b:\n    b.run(1)\n", "slow")
    more = Block(page, 9, "python", "import a\nwith a.B() as b:  # two\n    b.run(1)\n    b.x()\n",
                 "slow")  # fmt: skip
    other = Block(page, 20, "python", "import a\nwith a.B() as b:\n    b.run(2)\n    b.x()\n",
                  "slow")  # fmt: skip
    assert covered_by(first, [first, more]) is more
    assert covered_by(more, [first, more]) is None
    assert covered_by(first, [first, other]) is None
    assert code_lines("x = '# not a comment'  # a comment\n\n") == ["x = '# not a comment'"]


def test_every_fence_is_recognised_in_a_synthetic_page(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text(
        "<!-- docs-test: skip (needs a server) -->\n```bash\nmemagent serve\n```\n\n"
        "- item:\n\n  ```python\n  print(1)\n  ```\n\n```text\nmemagent chunks show ID\n```\n",
        encoding="utf-8",
    )
    got = [(b.lang, b.mark, b.code) for b in blocks(page)]
    assert got == [
        ("bash", "skip", "memagent serve\n"),
        ("python", "", "print(1)\n"),
        ("text", "", "memagent chunks show ID\n"),
    ]


@pytest.mark.parametrize(
    "block",
    [
        # The embedded model's first load and answers take minutes on a loaded 2-core
        # machine: its hang guard is the subprocess's own timeout, not the suite's default.
        pytest.param(b, marks=[pytest.mark.slow, pytest.mark.timeout(TIMEOUT + 60)])
        if b.mark == "slow"
        else b
        for b in PYTHON
    ],
    ids=[b.where for b in PYTHON],
)
def test_python_example_runs(block: Block, tmp_path: Path) -> None:
    (tmp_path / "replies.json").write_text(json.dumps(["hello"]), encoding="utf-8")
    env = {**_env(tmp_path), "MEMAGENT_HOME": str(tmp_path / "home")}
    for attempt in (1,) if block.mark == "slow" else (1, 2):
        proc = subprocess.run(
            [sys.executable, "-c", block.code],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        assert proc.returncode == 0, f"{block.where}, run {attempt}:\n{proc.stderr[-2000:]}"


@pytest.mark.parametrize("page", BASH_PAGES, ids=[str(p.relative_to(ROOT)) for p in BASH_PAGES])
def test_shell_examples_of_a_page_run_in_order(page: Path, tmp_path: Path) -> None:
    home, bin_dir = tmp_path / "home", tmp_path / "bin"
    home.mkdir()
    bin_dir.mkdir()
    shim = bin_dir / "memagent"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m memagent "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    env = {
        **_env(tmp_path),
        "HOME": str(home),
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
    }
    homes = [["init"]]
    if "~/mem" in page.read_text(encoding="utf-8"):
        homes.append(["init", "--home", str(home / "mem")])
    for args in homes:
        subprocess.run(
            [str(shim), *args], env=env, check=True, capture_output=True, timeout=TIMEOUT
        )
    bash = shutil.which("bash")
    assert bash is not None
    for block in (b for b in blocks(page) if b.lang == "bash" and b.mark != "skip"):
        proc = subprocess.run(
            [bash, "-euo", "pipefail", "-c", block.code],
            cwd=home,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        assert proc.returncode == 0, (
            f"{block.where} exited {proc.returncode}:\n{proc.stdout[-1000:]}\n{proc.stderr[-2000:]}"
        )


def test_a_failing_shell_example_fails_the_page(tmp_path: Path) -> None:
    page = tmp_path / "bad.md"
    page.write_text("```bash\nfalse | cat\necho never\n```\n", encoding="utf-8")
    (b,) = blocks(page)
    bash = shutil.which("bash")
    assert bash is not None
    proc = subprocess.run([bash, "-euo", "pipefail", "-c", b.code], capture_output=True, text=True)
    assert proc.returncode != 0 and "never" not in proc.stdout
