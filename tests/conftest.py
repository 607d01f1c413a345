"""Shared fixtures: a fresh, initialised memory home per test."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from memagent.core import MemoryHome
from memagent.setup import init_home

# Hypothesis's 200 ms per-example deadline is a time budget, and on a loaded 2-core
# machine any example can miss it (test_agent_excerpt did): a timeout here is a hang
# guard, never a budget, so no deadline and no "too slow" health check.
settings.register_profile("memagent", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("memagent")


@pytest.fixture(autouse=True, scope="session")
def _no_fsync() -> Iterator[None]:
    """In this process `os.fsync` only checks its descriptor (`os.fstat`), as
    `eatmydata` would: an initialised home alone is 65 fsyncs, over a second on a
    busy disk, and what the tests check of a write is what it leaves, which a real
    fsync does not change. Durability is tested where it shows: a crash test kills
    a subprocess (real fsync); a test that wants fsync to fail patches it itself.
    `MEMAGENT_TEST_FSYNC=1` keeps the real one."""
    if os.environ.get("MEMAGENT_TEST_FSYNC") == "1":
        yield
        return

    def fsync(fd: object) -> None:
        os.fstat(fd if isinstance(fd, int) else fd.fileno())  # type: ignore[attr-defined]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(os, "fsync", fsync)
        yield


@pytest.fixture(autouse=True, scope="session")
def _run_dir(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Under xdist, `MEMAGENT_TEST_RUN_DIR` is the folder every worker of this run
    shares (pytest's own run folder, so old runs' files go with it): what one
    worker computes for all, such as the llama.cpp log of `llama_support`, is left there."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        os.environ["MEMAGENT_TEST_RUN_DIR"] = str(tmp_path_factory.getbasetemp().parent)


@pytest.fixture
def home(tmp_path: Path) -> MemoryHome:
    mh = MemoryHome.open(tmp_path / "home")
    init_home(mh)
    return mh


@pytest.fixture(autouse=True)
def _no_ambient_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A test never touches the developer's real ~/.memagent."""
    monkeypatch.setenv("MEMAGENT_HOME", str(tmp_path / "ambient-home"))


def pg_data_dir() -> Path:
    """A folder for a test PostgreSQL cluster outside pytest's temp tree.

    As root, pgserver runs PostgreSQL as another user and opens up the folder's
    parents for it; every pytest session resets ``/tmp/pytest-of-root`` to 0700,
    so a cluster under it breaks whenever a second session starts meanwhile.
    The caller removes the folder (``shutil.rmtree``) when done."""
    return Path(tempfile.mkdtemp(prefix="memagent-test-pg-"))


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """A PostgreSQL + pgvector server for the whole run, started by the suite
    itself (pgserver). If it cannot start, the tests that need it fail."""
    import warnings

    data = pg_data_dir()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs: no XDG_RUNTIME_DIR in CI
        import pgserver

        srv = pgserver.get_server(data / "pg", cleanup_mode="stop")
    srv.psql("CREATE EXTENSION IF NOT EXISTS vector;")
    yield srv.get_uri()
    srv.cleanup()
    shutil.rmtree(data, ignore_errors=True)
