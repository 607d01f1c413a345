"""`memagent keys create|ls|revoke`: API keys of a server root, or of a shared
`--store` database (where every server on that database sees them)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from memagent.cli._common import HomeOption, StoreOption, print_json

if TYPE_CHECKING:
    from memagent.api_keys import ApiKey, Keys

RootOption = Annotated[
    Path | None,
    typer.Option(
        "--root",
        help="Server root (default: <memory home>/server, the home from --home, "
        "$MEMAGENT_HOME or ~/.memagent).",
        show_default=False,
    ),
]

keys_app = typer.Typer(
    help="API keys for `memagent serve` (stored hashed: in <root>/keys.json, or in the "
    "--store database)."
)


@contextmanager
def _keys(root: Path | None, home: Path | None, store: str | None) -> Iterator[Keys]:
    from memagent.core import MemoryHome
    from memagent.server import default_server_root
    from memagent.stores import open_keys

    keys, close = open_keys(
        default_server_root(root, home), store=store, home=MemoryHome.open(home)
    )
    try:
        yield keys
    finally:
        close()


def _where(keys: Keys) -> str:
    root = getattr(keys, "root", None)
    return str(root) if root is not None else "the database"


def _line(k: ApiKey) -> str:
    """One key on one line, its id first."""
    parts = [k.id, f"user={k.user or '-'}"]
    if k.admin:
        parts.append("admin")
    parts.append(f"created={k.created[:19]}")
    if k.last_used:
        parts.append(f"last_used={k.last_used[:19]}")
    if k.revoked:
        parts.append(f"revoked={k.revoked[:19]}")
    if k.label:
        parts.append(f"label={k.label!r}")
    return "  ".join(parts)


@keys_app.command("create")
def create(
    user: Annotated[
        str | None, typer.Option("--user", "-u", help="The user this key acts as.")
    ] = None,
    admin: Annotated[
        bool, typer.Option("--admin", help="The key may also manage keys over HTTP.")
    ] = False,
    label: Annotated[str | None, typer.Option("--label", help="A note to tell keys apart.")] = None,
    root: RootOption = None,
    home: HomeOption = None,
    store: StoreOption = None,
) -> None:
    """Create a key. The key itself is printed once, alone on the last line."""
    with _keys(root, home, store) as keys:
        key, record = keys.create(user=user, admin=admin, label=label)
        who = f"user {record.user}" if record.user else "no user"
        kind = "admin key" if record.admin else "key"
        typer.echo(f"created {kind} {record.id} for {who} in {_where(keys)}", err=True)
    typer.echo(key)


@keys_app.command("ls")
def ls(
    root: RootOption = None,
    home: HomeOption = None,
    store: StoreOption = None,
    all_keys: Annotated[bool, typer.Option("--all", help="Include revoked keys.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON document.")] = False,
) -> None:
    """List keys, one a line starting with its id (never the keys themselves)."""
    with _keys(root, home, store) as keys:
        listed = keys.list(include_revoked=all_keys)
    if as_json:
        print_json({"keys": [k.model_dump(exclude={"hash"}) for k in listed]})
        return
    for k in listed:
        typer.echo(_line(k))


@keys_app.command("revoke")
def revoke(
    key_id: Annotated[str, typer.Argument(help="The key's id (from `keys ls`).")],
    root: RootOption = None,
    home: HomeOption = None,
    store: StoreOption = None,
) -> None:
    """Revoke a key: it stops working at once, also in running servers."""
    with _keys(root, home, store) as keys:
        record = keys.revoke(key_id)
    typer.echo(f"revoked {record.id} (user {record.user or '-'})")


def register(app: typer.Typer) -> None:
    app.add_typer(keys_app, name="keys")
