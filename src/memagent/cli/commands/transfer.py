"""`memagent export` and `memagent import-home`: a user's memory between a shared
PostgreSQL database and the local file layout."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from memagent.cli._common import HomeOption, err_console, print_json

StoreUrl = Annotated[
    str, typer.Option("--store", help="The database: postgresql://…", show_default=False)
]
User = Annotated[str, typer.Option("--user", help="Whose memory.", show_default=False)]
KeywordOnly = Annotated[
    bool, typer.Option("--keyword-only", help="Import without computing embeddings.")
]


def _config(home: Path | None) -> object:
    from memagent.core import MemoryHome

    mh = MemoryHome.open(home)
    return mh.config if mh.exists else None


def export(
    store: StoreUrl,
    user: User,
    out: Annotated[Path, typer.Option("--out", help="A new folder: the exported home.")],
    home: HomeOption = None,
) -> None:
    """Write a user's memory from the database as a memory home (chunk files,
    profile resources, ops log) at --out."""
    from memagent.postgres import Database
    from memagent.postgres.transfer import export_home

    with Database.open(store) as db:
        counts = export_home(db, user, out, config=_config(home))  # type: ignore[arg-type]
    err_console.print(f"exported {user} to {out}", highlight=False)
    print_json({"user": user, "out": str(out), **counts})


def import_home(
    store: StoreUrl,
    user: User,
    source: Annotated[
        Path | None,
        typer.Argument(help="The memory home folder to load (default: --home's rule)."),
    ] = None,
    home: HomeOption = None,
    keyword_only: KeywordOnly = False,
) -> None:
    """Load a memory home (chunks, profile, ops log) into the database as a
    user's memory, all or nothing. A user with memory already there is refused.
    The home is SOURCE, else `--home`, else $MEMAGENT_HOME, else ~/.memagent."""
    from memagent.core import resolve_home
    from memagent.postgres import Database
    from memagent.postgres.transfer import import_home as load

    source = source if source is not None else resolve_home(home)

    with Database.open(store) as db:
        counts = load(db, user, source, embeddings=False if keyword_only else None)
    err_console.print(f"imported {source} as {user}", highlight=False)
    print_json({"user": user, "source": str(source), **counts})


def register(app: typer.Typer) -> None:
    app.command()(export)
    app.command("import-home")(import_home)
