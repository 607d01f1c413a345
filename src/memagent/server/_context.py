"""The server root and the per-request context every route receives.

A server root holds `keys.json` and one memory home per user under
`users/<user>/`, created (with every store's starter files) the first time that
user makes a request. A request's key decides its user; nothing in the request
can name another user's home, which is how one user's objects stay invisible
(404) to another. With a database (`--store postgresql://…`) keys, memory and
agent state are all rows; the root then holds only `shared/`, one home of
settings (`config.toml`) and persona definitions that every user is served
with, and nothing of any user.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import anyio
import anyio.to_thread
from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from memagent.api import Memory
from memagent.api_keys import ApiKey, Keys, validate_user
from memagent.core import MemagentError, MemoryHome, Overloaded
from memagent.core.config import QuotasConfig
from memagent.llm import LLM
from memagent.server._limits import TokenBucket
from memagent.server._problems import ProblemError
from memagent.setup import init_home
from memagent.stores import Stores, open_stores

if TYPE_CHECKING:
    from memagent.agent import MemoryAccess
    from memagent.postgres import Database


class _UserStores:
    """A user's home, stores and the views on them, as cached by the server."""

    def __init__(self, home: MemoryHome, stores: Stores) -> None:
        self.home = home
        self.stores = stores
        self.memory = Memory(stores=stores)
        self.memory_access: MemoryAccess | None = None

    def close(self) -> None:
        self.stores.close()


DEFAULT_MAX_USERS = 256
MAX_IDENTS = 4096
AUTH_THREADS = 4
"""Checks of keys seen valid before run against a database in at most this many
threads at once, off the event loop and apart from the threads of admitted work."""
AUTH_QUEUE = 64
"""At most this many of those checks wait for a thread; more answer 503."""
NEW_KEY_THREADS = 2
"""Checks of tokens not seen valid yet (new keys, junk) get threads of their own, so
a flood of made-up tokens never delays the users whose keys are known."""
NEW_KEY_QUEUE = 16


UI_COOKIE = "memagent_ui"
"""The web page's session cookie (`memagent.server.ui._session.COOKIE`; the UI
imports this module, so the name is repeated here, and a test keeps them equal)."""


@dataclass
class ServerRoot:
    """Everything a running server shares: the key store, user stores, limits.

    Users' stores are cached, least recently used first out, at most
    `max_users` of them: an evicted user's stores are closed (their index
    connections and files), and reopened on that user's next request.
    """

    root: Path
    keys: Keys
    bucket: TokenBucket
    embeddings: bool | None = None
    llm_spec: str | None = None
    db: Database | None = None
    max_users: int = DEFAULT_MAX_USERS
    max_tokens: int = 1024
    quotas: QuotasConfig | None = None
    """Every user's quotas (`ServerSettings.quota_*`); None: each home's config."""
    """The most tokens a request may ask the model for (`ServerSettings.max_tokens`)."""
    _llm: LLM | None = None
    _users: OrderedDict[str, _UserStores] = field(default_factory=OrderedDict)
    _idents: OrderedDict[str, str] = field(default_factory=OrderedDict)
    _pinned: dict[str, MemoryHome] = field(default_factory=dict)
    _shared_home: MemoryHome | None = None
    _guard: threading.Lock = field(default_factory=threading.Lock)
    _pending: dict[str, list[Future[None]]] = field(default_factory=dict)
    _after_reply: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(2, thread_name_prefix="memagent-after-reply")
    )
    auth_threads: int = AUTH_THREADS
    auth_queue: int = AUTH_QUEUE
    new_key_threads: int = NEW_KEY_THREADS
    new_key_queue: int = NEW_KEY_QUEUE
    _auth_limiters: dict[bool, anyio.CapacityLimiter] = field(default_factory=dict)

    @classmethod
    def open(
        cls,
        root: Path,
        *,
        rate: float,
        burst: int,
        embeddings: bool | None = None,
        llm_spec: str | None = None,
        store: str | None = None,
        max_users: int = DEFAULT_MAX_USERS,
    ) -> ServerRoot:
        """`store` (`postgresql://…`) puts every user's memory and the API keys in
        that database, opened (and migrated) here; else all lives under `root`."""
        root = root.expanduser().absolute()
        db = None
        keys: Keys
        if store is not None and store != "local":
            from memagent.postgres import Database, PgKeyStore

            db = Database.open(store, max_size=16)
            keys = PgKeyStore(db)
        else:
            from memagent.api_keys import KeyStore

            keys = KeyStore(root)
        return cls(
            root=root,
            keys=keys,
            bucket=TokenBucket(rate=rate, burst=burst),
            embeddings=embeddings,
            llm_spec=llm_spec,
            db=db,
            max_users=max(1, max_users),
        )

    def _user(self, user: str) -> _UserStores:
        """The user's cached stores (home initialised on first use), most recent now."""
        validate_user(user)
        evicted: list[_UserStores] = []
        with self._guard:
            entry = self._users.get(user)
            if entry is not None:
                self._users.move_to_end(user)
                return entry
            home = self._pinned.get(user) or self._local_home(user)
            if self.quotas is not None:
                quotas = self.quotas
                home.storage.quota_source = lambda: quotas
            entry = _UserStores(
                home, open_stores(home, user=user, embeddings=self.embeddings, db=self.db)
            )
            self._users[user] = entry
            while len(self._users) > self.max_users:
                evicted.append(self._users.popitem(last=False)[1])
        for old in evicted:  # outside the guard: closing waits for the user's requests
            old.close()
        return entry

    def _local_home(self, user: str) -> MemoryHome:
        """`users/<user>/` (made on first use); with a database, where every store
        and all agent state are rows, the one `shared/` home of settings and persona
        definitions instead, so no folder is made per user. Under `_guard`."""
        if self.db is None:
            home = MemoryHome.open(self.root / "users" / user)
            init_home(home)
            return home
        if self._shared_home is None:
            home = MemoryHome.open(self.root / "shared")
            init_home(home)
            self._shared_home = home
        return self._shared_home

    def home_for(self, user: str) -> MemoryHome:
        """The user's memory home, initialised on first use."""
        return self._user(user).home

    def stores_for(self, user: str) -> Stores:
        """The user's stores (one per user per process while cached)."""
        return self._user(user).stores

    def pin_home(self, user: str, home: MemoryHome) -> None:
        """Serve `user` from an existing memory `home` instead of `users/<user>/`
        (how `memagent ui` shows one local home)."""
        validate_user(user)
        with self._guard:
            self._pinned[user] = home.require()

    def memory_for(self, user: str) -> Memory:
        """The user's `Memory` (shared by requests)."""
        return self._user(user).memory

    def memory_access_for(self, user: str) -> MemoryAccess:
        """The agent's view of the user's memory (context building, exchange storing)."""
        from memagent.agent import MemoryAccess

        entry = self._user(user)
        with self._guard:
            if entry.memory_access is None:
                entry.memory_access = MemoryAccess(
                    entry.home, embeddings=self.embeddings, actor="server", stores=entry.stores
                )
            return entry.memory_access

    @property
    def cached_users(self) -> int:
        with self._guard:
            return len(self._users)

    def use_llm(self, llm: LLM) -> None:
        """Make `llm` the model of every user's profile learning."""
        with self._guard:
            self._llm = llm

    def llm(self, home: MemoryHome) -> LLM:
        """The server's LLM (`--model`, loaded once), else the home's configured one."""
        from memagent.llm import load_llm

        with self._guard:
            if self._llm is not None:
                return self._llm
            if self.llm_spec is None:
                return load_llm(home.config.llm.model, home.config.llm)
            self._llm = load_llm(self.llm_spec, home.config.llm)
            return self._llm

    def identify(self, scope: Mapping[str, Any], *, verify: bool = True) -> str:
        """Whose share of the server an HTTP request uses (admission control): the
        user of its bearer key (an admin key by id) or of its web session, else
        `addr:<client address>` (no valid key or session: the keyless share).
        `verify=False` looks keys up only among those already seen valid (no key
        store read: for routes answered on the event loop, such as `/health`)."""
        for name, value in scope.get("headers", []):
            if name == b"authorization":
                scheme, _, token = value.decode("latin-1").partition(" ")
                if scheme.lower() == "bearer":
                    who = self._who(token.strip(), verify=verify)
                    if who is not None:
                        return who
            elif name == b"cookie" and UI_COOKIE.encode() + b"=" in value:
                who = self._session_who(value)
                if who is not None:
                    return who
        client = scope.get("client")
        return f"addr:{client[0] if client else '?'}"

    def note_session(self, cookie: str, user: str) -> None:
        """Remember that the web-page session `cookie` was found valid for `user`, so
        its next requests share that user's admission share (the page checks the
        session again on every request; this only shares out capacity)."""
        self._remember("ui:" + _digest(cookie), f"user:{user}")

    def _session_who(self, header: bytes) -> str | None:
        for part in header.decode("latin-1").split(";"):
            name, _, cookie = part.strip().partition("=")
            if name in (UI_COOKIE, "__Host-" + UI_COOKIE):  # plain, or behind TLS
                digest = "ui:" + _digest(cookie)
                with self._guard:
                    return self._idents.get(digest)
        return None

    async def verify_key(self, token: str) -> ApiKey | None:
        """The active key `token` presents, else None. Keys in a database are checked
        in worker threads of their own (keys seen valid before: at most
        `auth_threads` at once and `auth_queue` waiting; other tokens:
        `new_key_threads` and `new_key_queue`; one more is `Overloaded`, a 503), so
        a slow database never stalls the event loop, key checks neither wait behind
        nor take the threads of admitted work, and made-up tokens never delay known
        users. Every check reads the key's row: a key revoked through any server
        stops at its next request. The file store checks in memory (a hash and a
        cached key list), on the loop."""
        if self.db is None:
            return self.keys.verify(token)
        digest = _digest(token)
        with self._guard:
            known = digest in self._idents
        threads, queue = (
            (self.auth_threads, self.auth_queue)
            if known
            else (self.new_key_threads, self.new_key_queue)
        )
        limiter = self._auth_limiters.get(known)
        if limiter is None:
            limiter = self._auth_limiters[known] = anyio.CapacityLimiter(max(1, threads))
        stats = limiter.statistics()
        if stats.borrowed_tokens >= stats.total_tokens and stats.tasks_waiting >= queue:
            raise Overloaded("the server is busy checking API keys; retry shortly", per_user=False)
        key = await anyio.to_thread.run_sync(self.keys.verify, token, limiter=limiter)
        if key is None and known:
            with self._guard:  # revoked: its checks go back to the pool of unknown tokens
                self._idents.pop(digest, None)
        return key

    def note_key(self, token: str, key: ApiKey) -> None:
        """Remember that `token` was found valid for `key` (by `authenticate`)."""
        self._remember(_digest(token), _identity(key))

    def _remember(self, digest: str, who: str) -> None:
        with self._guard:
            self._idents[digest] = who
            self._idents.move_to_end(digest)
            while len(self._idents) > MAX_IDENTS:
                self._idents.popitem(last=False)

    def _who(self, token: str, *, verify: bool = True) -> str | None:
        """The admission identity of a key, remembered per process: it only shares
        out capacity (the route checks the key, revocation included, on every
        request), so it needs no database round trip on the event loop after the
        first. A key that cannot be checked now (database down) counts as its
        address; its request then gets the 503 from the route. With a database, a
        key not seen yet also counts as its address (no query on the event loop),
        until `authenticate` has checked it off the loop and noted it."""
        digest = _digest(token)
        with self._guard:
            who = self._idents.get(digest)
        if who is not None or not verify or self.db is not None:
            return who
        try:
            key = self.keys.verify(token)
        except MemagentError:
            return None
        if key is None:
            return None
        who = _identity(key)
        self._remember(digest, who)
        return who

    def after_reply(self, user: str, work: Callable[[], None]) -> None:
        """Run `work` once the response is on its way (e.g. an agent's memory writes);
        `close()` waits for it, so nothing acknowledged is lost at shutdown."""
        future = self._after_reply.submit(work)
        with self._guard:
            pending = [f for f in self._pending.get(user, []) if not f.done()]
            pending.append(future)
            self._pending[user] = pending

    def settle(self, user: str) -> None:
        """Wait for `user`'s after-reply work (a turn continuing a conversation needs the
        previous turn saved)."""
        with self._guard:
            pending = list(self._pending.get(user, []))
        for future in pending:
            future.result()

    def close(self) -> None:
        self._after_reply.shutdown(wait=True)
        with self._guard:
            entries = list(self._users.values())
            self._users.clear()
        for entry in entries:
            entry.close()
        with self._guard:
            if self.db is not None:
                self.db.close()
                self.db = None


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "replace")).hexdigest()


def _identity(key: ApiKey) -> str:
    return f"user:{key.user}" if key.user else f"key:{key.id}"


@dataclass(frozen=True)
class Caller:
    """Who is asking: the key, its user (None for a user-less admin key), its home."""

    key: ApiKey
    server: ServerRoot

    @property
    def user(self) -> str:
        if self.key.user is None:
            raise ProblemError(
                403, "this admin key has no user; it can only manage keys", slug="no-user"
            )
        return self.key.user

    @property
    def home(self) -> MemoryHome:
        return self.server.home_for(self.user)

    @property
    def memory(self) -> Memory:
        return self.server.memory_for(self.user)


bearer = HTTPBearer(auto_error=False, description="An API key from `memagent keys create`.")


def get_server(request: Request) -> ServerRoot:
    server: ServerRoot = request.app.state.server
    return server


async def authenticate(
    server: Annotated[ServerRoot, Depends(get_server)],
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> Caller:
    """Check the bearer key, then spend one token of its rate limit. Async, so it
    never waits for a worker thread of admitted work (`ServerRoot.verify_key`)."""
    challenge = {"WWW-Authenticate": "Bearer"}
    if credentials is None:
        raise ProblemError(
            401,
            "missing API key: send 'Authorization: Bearer KEY'",
            slug="unauthenticated",
            headers=challenge,
        )
    key = await server.verify_key(credentials.credentials)
    if key is None:
        raise ProblemError(
            401, "invalid or revoked API key", slug="unauthenticated", headers=challenge
        )
    server.note_key(credentials.credentials, key)  # admission knows it from now on
    wait = server.bucket.take(key.id)
    if wait > 0:
        raise ProblemError(
            429,
            f"rate limit exceeded; retry in {wait:.2f}s",
            slug="rate-limited",
            headers={"Retry-After": str(max(1, round(wait + 0.5)))},
        )
    return Caller(key=key, server=server)


async def require_admin(caller: Annotated[Caller, Depends(authenticate)]) -> Caller:
    if not caller.key.admin:
        raise ProblemError(403, "this route needs an admin key", slug="forbidden")
    return caller


CallerDep = Annotated[Caller, Depends(authenticate)]
AdminDep = Annotated[Caller, Depends(require_admin)]
