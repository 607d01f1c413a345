"""The conversation context on PostgreSQL ranks as the local index's does
(`memagent.postgres.context`, `memagent.index.context`): the same scenarios
run on both backends through `ChunkStore` (add, edit, delete of a neighbour;
one speaker's successive turns and the assistant's turns lend nothing; a word
said in many turns is matched in own words only), the searched vectors are
equal on both, and rows from before migration 0007 are filled."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import quote

import numpy as np
import pytest

from memagent.core import MemagentError, MemoryHome
from memagent.index import SearchParams
from memagent.memory.chunks.store import ChunkStore
from memagent.postgres import Database, PgChunkStore
from memagent.postgres.chunks import DIM
from memagent.postgres.context import fill
from memagent.postgres.db import migrations
from memagent.postgres.vectors import parse_vector

WORDS = ("concert", "amazing", "hiking", "beagle", "pottery", "stadium", "crowd", "wish")


class TopicEmbedder:
    """One dimension per known word (and a constant one, so no vector is zero)."""

    name = "topics"
    dim = DIM

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            out[i, -1] = 0.1
            for j, w in enumerate(WORDS):
                if w in t.lower():
                    out[i, j] = 1.0
            out[i] /= float(np.linalg.norm(out[i]))
        return out

    def count_tokens(self, text: str) -> int:
        return len(text.split())


TOPIC = TopicEmbedder()


@pytest.fixture(scope="module")
def db(pg_url: str) -> Iterator[Database]:
    database = Database.open(pg_url)
    yield database
    database.close()


Make = Callable[..., ChunkStore]


@pytest.fixture(params=["local", "postgres"])
def make(request: pytest.FixtureRequest, home: MemoryHome) -> Make:
    """A fresh store of the backend under test (`vectors`: the topic embedder)."""

    def go(vectors: bool = False) -> ChunkStore:
        store: ChunkStore
        if request.param == "local":
            store = ChunkStore(home, embeddings=False)
        else:
            database = request.getfixturevalue("db")
            store = PgChunkStore(database, f"u-{uuid.uuid4().hex[:12]}", embeddings=False)
        if vectors:
            store.embedder = TOPIC  # type: ignore[assignment]
        return store

    return go


class Chat:
    """Turns added to one store by label, in order of `created_at`."""

    def __init__(self, store: ChunkStore) -> None:
        self.store = store
        self.ids: dict[str, str] = {}
        self.labels: dict[str, str] = {}

    def say(self, label: str, i: int, text: str, conv: str = "c", **source: Any) -> None:
        chunk = self.store.create(
            text,
            conversation_id=conv,
            created_at=f"2024-05-01T10:{i:02d}:00Z",
            source=source,
        )
        self.ids[label] = chunk.id
        self.labels[chunk.id] = label

    def found(self, query: str, **params: Any) -> list[str]:
        p = SearchParams(**{"neighbour_weight": 0.0, **params})
        hits = self.store.recall(query, params=p)
        return [self.labels.get(h.row.doc_id, h.row.doc_id) for h in hits]

    def searched(self, label: str) -> np.ndarray:
        """The vector dense search compares for a turn."""
        store, chunk_id = self.store, self.ids[label]
        if isinstance(store, PgChunkStore):
            row = store.db.run(
                store.user,
                lambda c: c.execute(
                    "SELECT search_vec::text FROM chunks WHERE user_id = %s AND id = %s",
                    (store.user, chunk_id),
                ).fetchone(),
            )
            vec = parse_vector(row[0])
            assert vec is not None
            return vec
        row = store.index.get(chunk_id)
        assert row is not None
        return store.index.vectors.get([row.rowid])[row.rowid]


def _concert(chat: Chat, **source: Any) -> None:
    chat.say("t1", 1, "Caroline: How was the concert on Saturday?", **source)
    chat.say("t2", 2, "Melanie: It was amazing, the crowd sang every song.", **source)
    chat.say("t3", 3, "Caroline: I wish I had been there!", **source)
    chat.say("t9", 9, "Melanie: my sister loves opera", conv="other", **source)


def test_a_turn_is_found_by_its_neighbours_words(make: Make) -> None:
    chat = Chat(make())
    _concert(chat)
    assert chat.found("crowd amazing")[0] == "t2"  # says the words itself
    got = chat.found("concert")
    assert got[0] == "t1" and "t2" in got  # t2 only through its context
    assert "t2" not in chat.found("concert", context_weight=0.0)
    assert chat.found("opera") == ["t9"]  # another conversation lends nothing


def test_context_follows_new_changed_and_deleted_turns(make: Make) -> None:
    chat = Chat(make())
    _concert(chat)
    chat.say("t4", 4, "Melanie: next time come with me to the stadium")
    assert set(chat.found("stadium")) == {"t3", "t4"}
    chat.store.update(chat.ids["t2"], content="Melanie: The violinist was superb.")
    assert "t1" not in chat.found("crowd") and "t1" in chat.found("violinist")
    chat.store.soft_delete(chat.ids["t2"])
    assert chat.found("violinist") == [] and "t1" in chat.found("wish")
    chat.store.restore(chat.ids["t2"])
    assert set(chat.found("violinist")) == {"t1", "t2", "t3"}
    chat.store.hard_delete(chat.ids["t3"])
    assert set(chat.found("stadium")) == {"t2", "t4"}
    chat.store.hard_delete(chat.ids["t4"])
    assert chat.found("stadium") == []  # no stale context anywhere


def test_one_speakers_successive_turns_lend_nothing(make: Make) -> None:
    chat = Chat(make())
    chat.say("t1", 1, "I adopted a beagle", role="user", type="statement")
    chat.say("t2", 2, "I started pottery classes", role="user", type="statement")
    chat.say("t3", 3, "How was the concert?", conv="d", speaker="Caroline")
    chat.say("t4", 4, "It was amazing", conv="d", speaker="Melanie")
    chat.say("t5", 5, "The crowd sang", conv="d", speaker="Melanie")
    assert chat.found("pottery") == ["t2"] and chat.found("beagle") == ["t1"]
    assert set(chat.found("concert")) == {"t3", "t4"}  # not t5: Melanie again
    assert set(chat.found("crowd")) == {"t5"}


def test_the_assistants_words_neither_lend_nor_receive(make: Make) -> None:
    chat = Chat(make())
    chat.say("t1", 1, "I adopted a beagle last week", role="user")
    chat.say("t2", 2, "Beagles need long walks and puzzle feeders", role="assistant")
    chat.say("t3", 3, "I also started pottery classes", role="user")
    assert "t1" not in chat.found("puzzle feeders") and "t3" not in chat.found("puzzle")
    assert "t2" not in chat.found("pottery") and "t2" not in chat.found("adopted")


def test_a_word_said_in_many_turns_is_matched_in_own_words_only(make: Make) -> None:
    chat = Chat(make())
    chat.say("t1", 1, "the rehearsal ran late")
    chat.say("t2", 2, "so tired now")
    chat.say("t3", 3, "rehearsal again tomorrow", conv="d")
    chat.say("t4", 4, "another rehearsal", conv="e")
    assert "t2" in chat.found("rehearsal", context_max_docs=3)
    assert "t2" not in chat.found("rehearsal", context_max_docs=2)
    got = chat.found("rehearsal tired", context_max_docs=2)
    assert "t2" in got and "t1" in got  # the rare word reaches its neighbour


def test_a_turn_is_searched_by_its_vector_mixed_with_its_neighbours(make: Make) -> None:
    chat = Chat(make(vectors=True))
    chat.say("t1", 1, "How was the concert?")
    chat.say("t2", 2, "It was amazing")
    chat.say("t3", 3, "I went hiking alone", conv="other")
    concert, stadium = TOPIC.embed(["concert", "stadium"])
    assert float(chat.searched("t2") @ concert) > 0.4  # its exchange says it
    assert np.allclose(chat.searched("t3"), TOPIC.embed(["hiking"])[0], atol=1e-5)
    chat.say("t4", 4, "next time the stadium")
    assert float(chat.searched("t2") @ stadium) > 0.2
    chat.store.hard_delete(chat.ids["t4"])
    assert float(chat.searched("t2") @ stadium) < 0.05
    chat.store.soft_delete(chat.ids["t1"])
    assert np.allclose(chat.searched("t2"), TOPIC.embed(["It was amazing"])[0], atol=1e-5)
    # A deleted turn is no one's neighbour, so it is searched by its own vector
    # (a mix would go stale as the turns beside it change).
    assert np.allclose(chat.searched("t1"), concert, atol=1e-5)
    chat.say("t0", 0, "the stadium first")
    assert np.allclose(chat.searched("t1"), concert, atol=1e-5)


def test_both_backends_search_the_same_vectors_and_find_the_same_turns(
    home: MemoryHome, db: Database
) -> None:
    local = Chat(ChunkStore(home, embeddings=False))
    pg = Chat(PgChunkStore(db, f"u-{uuid.uuid4().hex[:12]}", embeddings=False))
    for chat in (local, pg):
        chat.store.embedder = TOPIC  # type: ignore[assignment]
        _concert(chat, speaker="x")  # one speaker: nothing lent
        chat.say("t5", 5, "Melanie: the stadium crowd was huge", speaker="Melanie")
        chat.say("t6", 6, "Caroline: any beagle there?", speaker="Caroline")
        chat.say("t7", 7, "Thanks! Beagles love crowds.", role="assistant")
    for label in ("t1", "t2", "t3", "t5", "t6", "t7", "t9"):
        assert np.allclose(local.searched(label), pg.searched(label), atol=1e-5), label
    for query in ("concert", "stadium", "beagle", "crowd", "wish"):
        for p in ({}, {"context_weight": 0.0}):
            # turns only: a new home also holds a vault note the database user has not
            got_local = [x for x in local.found(query, **p) if x in local.ids]
            got_pg = [x for x in pg.found(query, **p) if x in pg.ids]
            assert set(got_local) == set(got_pg), (query, p)
            assert got_local[:1] == got_pg[:1], (query, p)


def test_rows_from_before_the_context_are_filled(db: Database) -> None:
    chat = Chat(PgChunkStore(db, f"u-{uuid.uuid4().hex[:12]}", embeddings=False))
    chat.store.embedder = TOPIC  # type: ignore[assignment]
    chat.say("t1", 1, "How was the concert?")
    chat.say("t2", 2, "It was amazing")
    mixed = chat.searched("t2")
    store = chat.store
    assert isinstance(store, PgChunkStore)

    def wipe(conn: Any) -> None:  # as migration 0007's SQL leaves them
        conn.execute(
            "UPDATE chunks SET context = '', tsv = memagent_chunk_tsv(content, tags, ''), "
            "search_vec = embedding WHERE user_id = %s",
            (store.user,),
        )

    def keyword(query: str) -> list[str]:
        store.embedder = None
        try:
            return chat.found(query)
        finally:
            store.embedder = TOPIC  # type: ignore[assignment]

    db.run(store.user, wipe)
    assert "t2" not in keyword("concert") and chat.searched("t2") @ mixed < 0.99
    for _ in range(2):  # idempotent
        with db._connection() as conn:
            fill(conn)
            conn.commit()
        assert "t2" in keyword("concert")
        assert np.allclose(chat.searched("t2"), mixed, atol=1e-5)


@contextmanager
def _schema(pg_url: str) -> Iterator[Callable[[str], str]]:
    """A schema of its own (the full migrations run there), owned by a new role
    that is subject to row-level security (no superuser, no BYPASSRLS), as a
    managed database's application owner is. Yields `url(role)`: the URL of the
    owner (`"owner"`), of the superuser (`"admin"`), or of a new role that may
    only read and write the tables (`"app"`), each with that schema first."""
    import psycopg

    tag = uuid.uuid4().hex[:8]
    schema, owner, app = f"ctx_{tag}", f"mm_owner_{tag}", f"mm_app_{tag}"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {owner} LOGIN NOSUPERUSER NOBYPASSRLS")
        conn.execute(f"CREATE ROLE {app} LOGIN NOSUPERUSER NOBYPASSRLS")
        conn.execute(f"CREATE SCHEMA {schema} AUTHORIZATION {owner}")
        conn.execute(f"GRANT USAGE ON SCHEMA {schema} TO {app}")
        conn.execute(
            f"ALTER DEFAULT PRIVILEGES FOR ROLE {owner} IN SCHEMA {schema} "
            f"GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO {app}"
        )
    sep = "&" if "?" in pg_url else "?"
    options = f"{sep}options={quote(f'-csearch_path={schema},public')}"
    roles = {"owner": owner, "app": app, "admin": "postgres"}

    def url(role: str) -> str:
        return pg_url.replace("postgres:@", f"{roles[role]}:@") + options

    try:
        yield url
    finally:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")
            for role in (app, owner):
                conn.execute(f"DROP OWNED BY {role}")
                conn.execute(f"DROP ROLE {role}")


def _two_users_chatting(database: Database) -> dict[str, tuple[Chat, np.ndarray]]:
    """Each of two users' t2 ("It was amazing") and its mixed vector."""
    out = {}
    for user in ("u-old", "u-other"):
        chat = Chat(PgChunkStore(database, user, embeddings=False))
        chat.store.embedder = TOPIC  # type: ignore[assignment]
        chat.say("t1", 1, "How was the concert?")
        chat.say("t2", 2, "It was amazing")
        out[user] = (chat, chat.searched("t2"))
    return out


def _assert_filled(database: Database, chats: dict[str, tuple[Chat, np.ndarray]]) -> None:
    for user, (chat, mixed) in chats.items():
        chat.store = PgChunkStore(database, user, embeddings=False)
        assert "t2" in chat.found("concert"), user
        assert np.allclose(chat.searched("t2"), mixed, atol=1e-5), user


def _still_forced(url: str) -> None:
    """Row-level security binds the owner again after the migration."""
    import psycopg

    with psycopg.connect(url) as conn:
        forced = conn.execute(
            "SELECT relname FROM pg_class WHERE relforcerowsecurity AND relname IN "
            "('chunks', 'search_docs', 'ops', 'notes', 'state') AND relnamespace = "
            "(SELECT oid FROM pg_namespace WHERE nspname = current_schema())"
        ).fetchall()
        assert len(forced) == 5
        if "postgres:@" not in url:  # a role subject to RLS sees no row unbound
            assert conn.execute("SELECT count(*) FROM chunks").fetchone() == (0,)


@pytest.mark.parametrize("role", ["admin", "owner"])
def test_the_migration_fills_the_turns_stored_before_it(pg_url: str, role: str) -> None:
    """Migrating v6 -> v7 fills every user's turns, whether the migrating role
    bypasses row-level security (a superuser) or not (the tables' owner)."""
    import psycopg

    with _schema(pg_url) as url:
        with Database.open(url(role), max_size=2) as first:
            chats = _two_users_chatting(first)
        with psycopg.connect(url("admin"), autocommit=True) as conn:  # back to schema v6
            conn.execute(
                "DROP INDEX chunks_search_vec; "
                "ALTER TABLE chunks DROP COLUMN context, DROP COLUMN search_vec; "
                "UPDATE chunks SET tsv = setweight(to_tsvector('english', content), 'A') "
                "|| setweight(to_tsvector('english', array_to_string(tags, ' ')), 'B'); "
                "DROP FUNCTION memagent_chunk_tsv; "
                "CREATE INDEX chunks_embedding ON chunks USING hnsw (embedding vector_cosine_ops); "
                "DELETE FROM memagent_migrations WHERE version >= 7"
            )
        with Database.open(url(role), max_size=2) as again:
            assert again.schema_version() == max(v for v, _, _ in migrations())
            _assert_filled(again, chats)
            assert again.migrate() == []
        _still_forced(url(role))


def test_a_database_migrated_under_row_level_security_is_repaired(pg_url: str) -> None:
    """A database that reached v7 through a role subject to RLS (before the
    migrations lifted it) kept its rows unfilled: no context, no searched
    vector, BM25 lengths of 0. Migration 0008 fills them."""
    import psycopg

    with _schema(pg_url) as url:
        with Database.open(url("owner"), max_size=2) as first:
            chats = _two_users_chatting(first)
        with psycopg.connect(url("admin"), autocommit=True) as conn:  # as 0006/0007 left it
            conn.execute(
                "UPDATE chunks SET context = '', tsv = memagent_chunk_tsv(content, tags, ''), "
                "search_vec = NULL; UPDATE chunks SET dl = 0; UPDATE search_docs SET dl = 0; "
                "DELETE FROM memagent_migrations WHERE version = 8"
            )
        with Database.open(url("owner"), max_size=2) as again:
            assert again.schema_version() == 8
            _assert_filled(again, chats)
        with psycopg.connect(url("admin")) as conn:
            wrong = conn.execute(
                "SELECT count(*) FROM chunks WHERE dl <> memagent_tsv_len(tsv) "
                "OR (embedding IS NOT NULL AND search_vec IS NULL)"
            ).fetchone()
            assert wrong == (0,)
        _still_forced(url("owner"))


def test_a_role_that_cannot_migrate_every_users_rows_is_told_so(pg_url: str) -> None:
    """A role that may only read and write the tables cannot lift row-level
    security: a pending migration fails with one line naming what to do, and
    nothing of it is applied."""
    import psycopg

    with _schema(pg_url) as url:
        with Database.open(url("owner"), max_size=2) as first:
            chats = _two_users_chatting(first)
        with Database.open(url("app"), max_size=2) as app:  # nothing pending: it serves
            _assert_filled(app, chats)
        with psycopg.connect(url("admin"), autocommit=True) as conn:
            conn.execute(
                "UPDATE chunks SET search_vec = NULL; "
                "DELETE FROM memagent_migrations WHERE version = 8"
            )
        with pytest.raises(MemagentError) as err:
            Database.open(url("app"), max_size=2)
        message = str(err.value)
        assert "\n" not in message and "0008" in message and "owner" in message
        with psycopg.connect(url("admin")) as conn:
            assert conn.execute("SELECT max(version) FROM memagent_migrations").fetchone() == (7,)
        with Database.open(url("owner"), max_size=2) as owner:  # the owner can
            _assert_filled(owner, chats)
