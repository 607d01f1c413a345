"""`open_stores` and the `Stores` it returns (see the package doc)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Literal

from memagent.core import Config, InvalidInput, MemoryHome

if TYPE_CHECKING:
    from memagent.api_keys import Keys
    from memagent.core.state import State
    from memagent.memory.chunks import ChunkStore
    from memagent.memory.profile import ProfileStore
    from memagent.memory.vault import Vault
    from memagent.postgres import Database

Backend = Literal["local", "postgres"]
DEFAULT_USER = "default"


def store_url(home: MemoryHome | None, store: str | None = None) -> str | None:
    """The PostgreSQL URL to use: `store` when given (`local` means files), else
    the home's `[store]` config; None means the home's files."""
    from memagent.postgres.db import is_postgres_url

    if store is not None:
        if store == "local":
            return None
        if not is_postgres_url(store):
            raise InvalidInput(f"--store: expected local or postgresql://…, got {store[:80]!r}")
        return store
    if home is None or not home.exists:
        return None
    cfg = home.config.store
    if cfg.backend == "postgres":
        if not cfg.url:
            raise InvalidInput("config.toml: [store] backend = 'postgres' needs a url")
        return cfg.url
    return None


class Stores:
    """One user's stores on one backend, each opened on first use.

    Thread-safe: `lock` (re-entrant) is held while a store is opened, and callers
    that share one `Stores` (the API, the agent, the server's routes) hold it
    around operations on a store that is not itself thread-safe (the local
    chunk store's SQLite index). `close()` closes what was opened here, and the
    database too when `open_stores` connected it.
    """

    def __init__(
        self,
        home: MemoryHome | None,
        *,
        user: str | None = None,
        embeddings: bool | None = None,
        db: Database | None = None,
        owns_db: bool = False,
    ) -> None:
        if home is None and db is None:
            raise InvalidInput("stores need a memory home or a database")
        self.home = home.require() if home is not None else None
        self.user = user or DEFAULT_USER
        self.embeddings = embeddings
        self.db = db
        self._owns_db = owns_db
        self.lock = threading.RLock()
        self._chunks: ChunkStore | None = None
        self._profile: ProfileStore | None = None
        self._vault: Vault | None = None
        self._keys: Keys | None = None
        self._closed = False

    @property
    def backend(self) -> Backend:
        return "local" if self.db is None else "postgres"

    @property
    def config(self) -> Config:
        """The home's config (limits, search, embeddings); defaults without a home."""
        return self.home.config if self.home is not None else Config()

    def need_home(self, what: str) -> MemoryHome:
        """The memory home, for `what` (words for the refusal) that lives only in a
        home's files; `InvalidInput` when these stores were opened on a URL alone."""
        if self.home is None:
            raise InvalidInput(f"{what} need a memory home on this backend (open with home=…)")
        return self.home

    # -- the stores -------------------------------------------------------------------
    @property
    def chunks(self) -> ChunkStore:
        """Episodic memories (`ChunkStore`; `PgChunkStore` on PostgreSQL)."""
        with self.lock:
            if self._chunks is None:
                if self.db is not None:
                    from memagent.postgres import PgChunkStore

                    self._chunks = PgChunkStore(
                        self.db, self.user, config=self.config, embeddings=self.embeddings
                    )
                else:
                    from memagent.memory.chunks import ChunkStore

                    self._chunks = ChunkStore(self.need_home("chunks"), embeddings=self.embeddings)
            return self._chunks

    @property
    def profile(self) -> ProfileStore:
        """Profile facts (`ProfileStore`; `PgProfileStore` on PostgreSQL)."""
        with self.lock:
            if self._profile is None:
                if self.db is not None:
                    from memagent.postgres import PgProfileStore

                    store = PgProfileStore(
                        self.db, self.user, config=self.config, embedder=self.chunks.embedder
                    )
                    store.ensure_starters()
                    self._profile = store
                else:
                    from memagent.memory.profile import ProfileStore

                    self._profile = ProfileStore(self.need_home("profile facts"))
            return self._profile

    @property
    def vault(self) -> Vault:
        """Markdown notes (`Vault`), written with actor "api"."""
        with self.lock:
            if self._vault is None:
                vault = self.open_vault("api")
                if self.db is not None:
                    from memagent.postgres import PgVault

                    assert isinstance(vault, PgVault)
                    vault.ensure_starters()
                self._vault = vault
            return self._vault

    @property
    def keys(self) -> Keys:
        """API keys: the database's on PostgreSQL, else `<home>/server/keys.json`."""
        with self.lock:
            if self._keys is None:
                if self.db is not None:
                    from memagent.postgres import PgKeyStore

                    self._keys = PgKeyStore(self.db)
                else:
                    from memagent.api_keys import KeyStore

                    self._keys = KeyStore(self.need_home("API keys").root / "server")
            return self._keys

    @property
    def state(self) -> State:
        """Agent state documents (conversations, traces): `state/` files of the
        home, or rows of the database."""
        if self.db is not None:
            from memagent.postgres import PgState

            return PgState(self.db, self.user)
        from memagent.core.state import FileState

        return FileState(self.need_home("agent state"))

    def open_vault(self, actor: str) -> Vault:
        """A vault whose writes are logged as `actor` (a new object each call)."""
        if self.db is not None:
            from memagent.postgres import PgVault

            return PgVault(
                self.db, self.user, config=self.config, actor=actor, embedder=self.chunks.embedder
            )
        from memagent.memory.vault import Vault

        return Vault(self.need_home("notes"), actor=actor)

    # -- life cycle ---------------------------------------------------------------------
    def close(self) -> None:
        """Close what was opened (a later use opens it again)."""
        with self.lock:
            if self._chunks is not None:
                self._chunks.close()
                self._chunks = None
            self._profile = None
            self._vault = None
            self._keys = None
            if self.db is not None and self._owns_db and not self._closed:
                self.db.close()
                self._closed = True

    def __enter__(self) -> Stores:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def open_stores(
    home_or_url: str | os.PathLike[str] | MemoryHome | None = None,
    *,
    user: str | None = None,
    embeddings: bool | None = None,
    home: str | os.PathLike[str] | MemoryHome | None = None,
    store: str | None = None,
    db: Database | None = None,
    create: bool = True,
    max_connections: int = 8,
) -> Stores:
    """A user's stores.

    `home_or_url`: a memory home (path or `MemoryHome`; None follows the CLI rule:
    `$MEMAGENT_HOME`, else `~/.memagent`), or a `postgresql://` URL. With a home,
    `store` (`local` or a URL) overrides the home's `[store]` config. With a URL,
    `home` (optional) gives the config. `db`: an open `Database` to share (the
    server's pool; not closed by `Stores.close`). `create` initialises a missing
    home. `user` names whose memory in a database (default: `default`).
    """
    from memagent.postgres.db import is_postgres_url

    url: str | None = None
    mh: MemoryHome | None
    if isinstance(home_or_url, str) and is_postgres_url(home_or_url):
        if store is not None and store != home_or_url:
            raise InvalidInput("give the database URL once (home_or_url or store, not both)")
        url = home_or_url
        mh = _home(home, create) if home is not None else None
    else:
        if home is not None:
            raise InvalidInput("give the home once (home_or_url or home, not both)")
        mh = _home(home_or_url, create)
        url = store_url(mh, store) if db is None else None
    if db is not None:
        return Stores(mh, user=user, embeddings=embeddings, db=db)
    if url is None:
        return Stores(mh, user=user, embeddings=embeddings)
    from memagent.postgres import Database
    from memagent.postgres.db import check_user

    check_user(user or DEFAULT_USER)
    database = Database.open(url, max_size=max_connections)
    return Stores(mh, user=user, embeddings=embeddings, db=database, owns_db=True)


def _home(home: str | os.PathLike[str] | MemoryHome | None, create: bool) -> MemoryHome:
    mh = home if isinstance(home, MemoryHome) else MemoryHome.open(_as_path(home))
    if mh.root.exists() and not mh.root.is_dir():
        raise InvalidInput(f"{mh.root} is not a folder; a memory home is a folder")
    if create and not mh.exists:
        from memagent.setup import init_home

        init_home(mh)
    return mh.require()


def _as_path(home: str | os.PathLike[str] | None) -> Path | None:
    return None if home is None else Path(home)


def open_keys(
    root: Path, *, store: str | None = None, home: MemoryHome | None = None
) -> tuple[Keys, Callable[[], None]]:
    """The API keys of a server: in the `store` database (or the one of `home`'s
    `[store]` config), else `<root>/keys.json`. Returns the store and how to close
    what was opened for it."""
    url = store_url(home, store)
    if url is None:
        from memagent.api_keys import KeyStore

        return KeyStore(root), lambda: None
    from memagent.postgres import Database, PgKeyStore

    db = Database.open(url, max_size=2)
    return PgKeyStore(db), db.close
