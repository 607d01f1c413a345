"""`memagent keys create|ls|revoke`: API keys of a server root."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from memagent.cli._common import HomeOption, console, print_json

if TYPE_CHECKING:
    from memagent.server import KeyStore

RootOption = Annotated[
    Path | None,
    typer.Option(
        "--root",
        help="Server root (default: <memory home>/server, the home from --home, "
        "$MEMAGENT_HOME or ~/.memagent).",
        show_default=False,
    ),
]

keys_app = typer.Typer(help="API keys for `memagent serve` (stored hashed in <root>/keys.json).")


def _store(root: Path | None, home: Path | None) -> KeyStore:
    from memagent.server import KeyStore, default_server_root

    return KeyStore(default_server_root(root, home))


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
) -> None:
    """Create a key. The key itself is printed once, alone on the last line."""
    store = _store(root, home)
    key, record = store.create(user=user, admin=admin, label=label)
    who = f"user {record.user}" if record.user else "no user"
    kind = "admin key" if record.admin else "key"
    typer.echo(f"created {kind} {record.id} for {who} in {store.root}", err=True)
    typer.echo(key)


@keys_app.command("ls")
def ls(
    root: RootOption = None,
    home: HomeOption = None,
    all_keys: Annotated[bool, typer.Option("--all", help="Include revoked keys.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON document.")] = False,
) -> None:
    """List keys (ids, users, flags; never the keys themselves)."""
    keys = _store(root, home).list(include_revoked=all_keys)
    if as_json:
        print_json({"keys": [k.model_dump(exclude={"hash"}) for k in keys]})
        return
    table = Table("id", "user", "admin", "label", "created", "revoked")
    for k in keys:
        table.add_row(
            k.id,
            k.user or "-",
            "yes" if k.admin else "",
            k.label or "",
            k.created[:19],
            (k.revoked or "")[:19],
        )
    console.print(table)


@keys_app.command("revoke")
def revoke(
    key_id: Annotated[str, typer.Argument(help="The key's id (from `keys ls`).")],
    root: RootOption = None,
    home: HomeOption = None,
) -> None:
    """Revoke a key: it stops working at once, also in a running server."""
    record = _store(root, home).revoke(key_id)
    console.print(f"revoked {record.id} (user {record.user or '-'})", highlight=False)


def register(app: typer.Typer) -> None:
    app.add_typer(keys_app, name="keys")
