"""`open_stores`: one way to open a user's stores on files or on PostgreSQL, and
the refusals of bad input before anything is opened or written."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from memagent.api import Memory
from memagent.core import InvalidInput, MemoryHome, NotFound
from memagent.memory.chunks import ChunkStore
from memagent.memory.profile import ProfileStore
from memagent.postgres import DatabaseUnavailable, PgChunkStore, PgKeyStore, PgProfileStore, PgVault
from memagent.stores import Stores, open_stores


def _user() -> str:
    return f"s-{uuid.uuid4().hex[:12]}"


def test_local_home_opens_file_stores_lazily_and_reopens_after_close(tmp_path: Path) -> None:
    with open_stores(tmp_path / "mem", embeddings=False) as stores:
        assert stores.backend == "local" and stores.db is None
        assert stores._chunks is None  # nothing opened until asked for
        assert type(stores.chunks) is ChunkStore and type(stores.profile) is ProfileStore
        [chunk] = stores.chunks.remember("The boat is moored at pier 9.")
        stores.close()
        assert stores.chunks.get(chunk.id).content.startswith("The boat")
        assert stores.vault.exists("user.md")
        key, _ = stores.keys.create(user="alice")
        assert stores.keys.verify(key) is not None
    assert (tmp_path / "mem" / "vault" / "user.md").is_file()
    assert (tmp_path / "mem" / "server" / "keys.json").is_file()


def test_postgres_url_alone_opens_database_stores(pg_url: str) -> None:
    user = _user()
    with open_stores(pg_url, user=user, embeddings=False) as stores:
        assert stores.backend == "postgres" and stores.home is None and stores.user == user
        assert isinstance(stores.chunks, PgChunkStore)
        assert isinstance(stores.profile, PgProfileStore)
        assert isinstance(stores.keys, PgKeyStore)
        assert isinstance(stores.vault, PgVault) and stores.vault.read("user.md").startswith(
            "# User"
        )
        stores.chunks.remember("The invoice is due on Friday.")
        assert stores.profile.names()  # the starter resources, in the database
    with Memory.open(pg_url, user=user, embeddings=False) as mem:
        assert [h.content for h in mem.recall("invoice")] == ["The invoice is due on Friday."]
    with open_stores(pg_url, user=_user(), embeddings=False) as other:
        assert other.chunks.recall("invoice") == []


def test_home_with_store_url_and_shared_database(pg_url: str, home: MemoryHome) -> None:
    user = _user()
    with open_stores(home, store=pg_url, user=user, embeddings=False) as stores:
        assert stores.backend == "postgres" and stores.home is not None
        stores.chunks.remember("Shared across servers.")
        db = stores.db
        assert db is not None
        shared = open_stores(home, db=db, user=user, embeddings=False)
        assert [c["content"] for c in shared.chunks.list()] == ["Shared across servers."]
        shared.close()  # a shared database stays open
        assert stores.chunks.list()
    with open_stores(home, store="local", embeddings=False) as local:
        assert local.backend == "local" and local.chunks.list() == []


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((), {"store": "mysql://db/x"}, "expected local or postgresql"),
        (("postgresql://h/db",), {"store": "postgresql://other/db"}, "once"),
        (("postgresql://h/db",), {"user": "bad\x00user"}, "control characters"),
        (("postgresql://h/db",), {"user": "x" * 201}, "1..200 characters"),
    ],
)
def test_bad_input_is_refused_before_connecting(
    home: MemoryHome, args: tuple[str, ...], kwargs: dict[str, str], message: str
) -> None:
    with pytest.raises(InvalidInput, match=message):
        open_stores(*(args or (home,)), **kwargs)


def test_home_that_is_a_file_or_missing_is_refused(tmp_path: Path) -> None:
    afile = tmp_path / "file"
    afile.write_text("not a home")
    with pytest.raises(InvalidInput, match="not a folder"):
        open_stores(afile)
    with pytest.raises(NotFound, match="no memory home"):
        open_stores(tmp_path / "missing", create=False)
    assert not (tmp_path / "missing").exists()
    with pytest.raises(InvalidInput, match="need a memory home or a database"):
        Stores(None)


def test_unreachable_database_is_unavailable() -> None:
    with pytest.raises(DatabaseUnavailable, match="cannot reach the database"):
        open_stores("postgresql://nobody@127.0.0.1:9/none?connect_timeout=1", user="u")


def test_memory_and_agent_share_one_stores(home: MemoryHome) -> None:
    from memagent.agent import MemoryAccess

    stores = open_stores(home, embeddings=False)
    mem = Memory(stores=stores)
    agent = MemoryAccess(home, stores=stores)
    [chunk] = mem.remember("Tea, not coffee.")
    assert agent.chunks is stores.chunks
    assert [h["id"] for h in agent.recall("tea")] == [chunk.id]
    agent.close()  # shared stores stay open
    assert mem.get(chunk.id).content == "Tea, not coffee."
    mem.close()


def test_need_home_names_what_needs_one(home: MemoryHome) -> None:
    """On a database alone (no home), what lives only in a home's files is refused
    with a sentence naming it; with a home, the home is given."""
    from typing import Any, cast

    on_url_only = Stores(None, db=cast(Any, object()))
    with pytest.raises(InvalidInput, match=r"^agent state need a memory home"):
        on_url_only.need_home("agent state")
    with pytest.raises(InvalidInput, match="this operation need a memory home"):
        _ = Memory(stores=on_url_only).home
    assert Stores(home).need_home("notes") is not None
