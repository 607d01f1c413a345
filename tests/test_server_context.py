"""The server's per-user store cache: bounded (least recently used out), an
evicted user's stores closed and reopened on their next request, open files flat."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memagent.core import InvalidInput
from memagent.server._context import ServerRoot


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_store_cache_is_bounded_and_closes_on_eviction(tmp_path: Path) -> None:
    server = ServerRoot.open(tmp_path / "root", rate=1e6, burst=9999, embeddings=False, max_users=3)
    try:
        first = server.memory_for("user-0")
        [chunk] = first.remember("user 0 keeps this")
        for i in range(1, 5):
            server.memory_for(f"user-{i}").recall("anything")
        assert server.cached_users == 3
        assert first.stores._chunks is None  # evicted: its index was closed
        # the next request of an evicted user reopens its stores, memory intact
        again = server.memory_for("user-0")
        assert again is not first and again.get(chunk.id).content == "user 0 keeps this"
        before = _open_fds()
        for i in range(5, 12):
            server.memory_for(f"user-{i}").recall("anything")
        assert server.cached_users == 3
        assert _open_fds() <= before + 8
    finally:
        server.close()
    assert server.cached_users == 0


def test_recently_used_users_stay_cached(tmp_path: Path) -> None:
    server = ServerRoot.open(tmp_path / "root", rate=1e6, burst=9999, embeddings=False, max_users=2)
    try:
        a = server.memory_for("alice")
        server.memory_for("bob")
        assert server.memory_for("alice") is a  # alice is now the most recent
        server.memory_for("carol")  # bob goes
        assert server.memory_for("alice") is a
    finally:
        server.close()


@pytest.mark.parametrize("user", ["", "../escape", "a/b", "x" * 65, "名前"])
def test_bad_user_names_open_nothing(tmp_path: Path, user: str) -> None:
    server = ServerRoot.open(tmp_path / "root", rate=1.0, burst=1, max_users=2)
    try:
        with pytest.raises(InvalidInput):
            server.memory_for(user)
        assert server.cached_users == 0 and not (tmp_path / "root" / "users").exists()
    finally:
        server.close()
