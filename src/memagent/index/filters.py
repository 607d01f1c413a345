"""One builder of the SQL a `Filters` becomes, for every backend.

`FilterSQL.where(filters, alias)` walks the filters once; what differs between
SQLite (the local index) and PostgreSQL (the shared backend) are the hooks of a
dialect: the parameter placeholder, the literals for true/false, how "not
deleted" and "has these tags" are written, which column holds a filter's value,
and which document kinds a table holds (a table of one kind answers a `kinds`
filter with true or false instead of a column test).
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

_FIELDS = ("type", "user_id", "agent_id", "session_id", "conversation_id")


class FilterSQL:
    """The SQLite dialect (the local index's `docs` table); subclasses override hooks."""

    param: ClassVar[str] = "?"
    true: ClassVar[str] = "1"
    false: ClassVar[str] = "0"
    columns: ClassVar[dict[str, str]] = {f: f for f in _FIELDS}

    def __init__(self, table_kinds: tuple[str, ...] | None = None) -> None:
        """`table_kinds`: the kinds of document the filtered table holds when it
        has no `kind` column (None: it has one)."""
        self.table_kinds = table_kinds

    def not_deleted(self, a: str) -> str:
        return f"{a}.deleted = 0"

    def has_tags(self, a: str, tags: list[str]) -> tuple[list[str], list[Any]]:
        sub = f"{a}.rowid IN (SELECT rowid FROM tags WHERE tag = {self.param})"
        return [sub] * len(tags), list(tags)

    def kinds(self, a: str, kinds: list[str]) -> tuple[str, list[Any]]:
        if self.table_kinds is not None:
            return (self.true if set(kinds) & set(self.table_kinds) else self.false), []
        return f"{a}.kind IN ({','.join([self.param] * len(kinds))})", list(kinds)

    def where(self, f: Filters, alias: str) -> tuple[str, list[Any]]:
        """A WHERE fragment and its parameters (all given filters must hold)."""
        parts: list[str] = []
        params: list[Any] = []
        a = alias
        if not f.include_deleted:
            parts.append(self.not_deleted(a))
        if f.kinds:
            sql, values = self.kinds(a, f.kinds)
            parts.append(sql)
            params += values
        for name in _FIELDS:
            value = getattr(f, name)
            if value is not None:
                parts.append(f"{a}.{self.columns[name]} = {self.param}")
                params.append(value)
        if f.since is not None:
            parts.append(f"{a}.created >= {self.param}")
            params.append(f.since)
        if f.until is not None:
            parts.append(f"{a}.created < {self.param}")
            params.append(f.until)
        if f.tags:
            sqls, values = self.has_tags(a, list(f.tags))
            parts += sqls
            params += values
        return (" AND ".join(parts) or self.true), params


class PostgresFilterSQL(FilterSQL):
    """PostgreSQL tables (one kind each, `tags text[]`, boolean `deleted`)."""

    param: ClassVar[str] = "%s"
    true: ClassVar[str] = "true"
    false: ClassVar[str] = "false"
    columns: ClassVar[dict[str, str]] = {**FilterSQL.columns, "user_id": "scope_user_id"}

    def not_deleted(self, a: str) -> str:
        return f"NOT {a}.deleted"

    def has_tags(self, a: str, tags: list[str]) -> tuple[list[str], list[Any]]:
        return [f"{a}.tags @> {self.param}"], [tags]


SQLITE = FilterSQL()


class Filters(BaseModel):
    """The same filters as listing: all given ones must hold."""

    model_config = ConfigDict(extra="forbid")

    kinds: list[str] | None = None
    tags: list[str] = Field(default_factory=list)
    type: str | None = None
    since: float | None = None
    until: float | None = None
    user_id: str | None = None
    agent_id: str | None = None
    session_id: str | None = None
    conversation_id: str | None = None
    include_deleted: bool = False

    def sql(self, alias: str = "docs", dialect: FilterSQL | None = None) -> tuple[str, list[Any]]:
        """These filters as a WHERE fragment and its parameters (SQLite unless a
        `dialect` says otherwise; see `memagent.index.filters`)."""
        return (dialect or SQLITE).where(self, alias)

    @property
    def narrowing(self) -> bool:
        """True when more than deleted documents are excluded."""
        return (
            any(v for k, v in self.model_dump().items() if k != "include_deleted")
            or self.include_deleted
        )
