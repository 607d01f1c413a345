"""Shared fixtures: a fresh, initialised memory home per test."""

from __future__ import annotations

from pathlib import Path

import pytest

from memagent.core import MemoryHome
from memagent.setup import init_home


@pytest.fixture
def home(tmp_path: Path) -> MemoryHome:
    mh = MemoryHome.open(tmp_path / "home")
    init_home(mh)
    return mh


@pytest.fixture(autouse=True)
def _no_ambient_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A test never touches the developer's real ~/.memagent."""
    monkeypatch.setenv("MEMAGENT_HOME", str(tmp_path / "ambient-home"))
