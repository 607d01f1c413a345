"""Long work reports progress on stderr ("what: N of M unit"), never on stdout."""

from __future__ import annotations

import pytest

from memagent.cli._progress import progress


def test_plain_progress_lines_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    with progress("indexing", "files", every_s=0.0) as update:
        update(1, 3)
        update(3, 3)
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [
        "indexing: 1 of 3 files",
        "indexing: 3 of 3 files",
        "indexing: 3 of 3 files, done",
    ]


def test_quick_work_shows_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    with progress("indexing", "files", every_s=60.0) as update:
        update(1, 1)
    assert capsys.readouterr() == ("", "")
