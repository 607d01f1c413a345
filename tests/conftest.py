"""Shared fixtures: a fresh, initialised memory home per test."""

from __future__ import annotations

from collections.abc import Iterator
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


@pytest.fixture(scope="session")
def pg_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A PostgreSQL + pgvector server for the whole run, started by the suite
    itself (pgserver). If it cannot start, the tests that need it fail."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs: no XDG_RUNTIME_DIR in CI
        import pgserver

        srv = pgserver.get_server(tmp_path_factory.mktemp("pg"), cleanup_mode="stop")
    srv.psql("CREATE EXTENSION IF NOT EXISTS vector;")
    yield srv.get_uri()
    srv.cleanup()
