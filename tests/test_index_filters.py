"""One filter builder, two dialects: the same `Filters` as SQLite and as
PostgreSQL, values always passed as parameters (never in the SQL text)."""

from __future__ import annotations

from memagent.index import Filters
from memagent.index.filters import SQLITE, PostgresFilterSQL
from memagent.postgres.chunks import filter_sql

HOSTILE = "x' OR 1=1; DROP TABLE chunks; --"


def test_sqlite_dialect() -> None:
    sql, params = Filters(kinds=["note"], tags=["a", "b"], type="fact", since=1.0).sql("d")
    assert sql == (
        "d.deleted = 0 AND d.kind IN (?) AND d.type = ? AND d.created >= ? AND "
        "d.rowid IN (SELECT rowid FROM tags WHERE tag = ?) AND "
        "d.rowid IN (SELECT rowid FROM tags WHERE tag = ?)"
    )
    assert params == ["note", "fact", 1.0, "a", "b"]
    assert Filters(include_deleted=True).sql() == ("1", [])
    assert Filters().sql("docs", SQLITE) == ("docs.deleted = 0", [])


def test_postgres_dialect_on_a_table_of_one_kind() -> None:
    sql, params = filter_sql(Filters(tags=["a", "b"], user_id="u", until=5.0))
    assert sql == "NOT c.deleted AND c.scope_user_id = %s AND c.created < %s AND c.tags @> %s"
    assert params == ["u", 5.0, ["a", "b"]]
    assert filter_sql(Filters(kinds=["note", "fact"]))[0] == "NOT c.deleted AND false"
    assert filter_sql(Filters(kinds=["chunk", "note"]))[0] == "NOT c.deleted AND true"
    notes = PostgresFilterSQL(table_kinds=("note",))
    assert Filters(kinds=["note"], include_deleted=True).sql("n", notes) == ("true", [])


def test_hostile_values_are_parameters_only() -> None:
    f = Filters(
        tags=[HOSTILE],
        type=HOSTILE,
        agent_id=HOSTILE,
        session_id=HOSTILE,
        conversation_id=HOSTILE,
        kinds=[HOSTILE],
    )
    for sql, params in (f.sql("d"), filter_sql(f)):
        assert "DROP" not in sql and "'" not in sql
        assert params.count(HOSTILE) + sum(p == [HOSTILE] for p in params) >= 4
