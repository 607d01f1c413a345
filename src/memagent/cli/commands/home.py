"""`memagent init` and `memagent log`: the memory home itself."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from memagent.cli._common import HomeOption, console, home_from_option, print_json


def init(home: HomeOption = None) -> None:
    """Create the memory home (idempotent: existing files are kept)."""
    from memagent.setup import init_home

    mh = home_from_option(home, must_exist=False)
    created = init_home(mh)
    console.print(f"memory home: {mh.root}")
    for rel in created:
        console.print(f"  created {rel}", highlight=False)
    if not created:
        console.print("  already initialised; nothing changed")


def log(
    home: HomeOption = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="How many entries.")] = 50,
    path: Annotated[str | None, typer.Option("--path", help="Only paths with this prefix.")] = None,
    actor: Annotated[str | None, typer.Option("--actor", help="Only this actor.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="JSON lines on stdout.")] = False,
    prune: Annotated[
        int | None,
        typer.Option(
            "--prune",
            min=0,
            help="Delete all but the newest N rotated segments (and contents only they "
            "stored); their history and undo go with them.",
        ),
    ] = None,
) -> None:
    """Show the ops log: every write to the memory home, newest last."""
    mh = home_from_option(home)
    if prune is not None:
        segs, blobs, freed = mh.storage.prune_log(prune)
        console.print(
            f"removed {segs} old log segments and {blobs} stored contents ({freed} bytes)",
            highlight=False,
        )
        return
    records = mh.ops(limit=limit, path_prefix=path, actor=actor)
    if as_json:
        for rec in records:
            print_json(rec.model_dump(exclude_none=True))
        return
    table = Table("time", "actor", "op", "path", "before → after")
    for rec in records:
        before = (rec.before or "∅").removeprefix("sha256:")[:8]
        after = (rec.after or "∅").removeprefix("sha256:")[:8]
        table.add_row(rec.ts[:19], rec.actor, rec.op, rec.path, f"{before} → {after}")
    console.print(table)


def register(app: typer.Typer) -> None:
    app.command()(init)
    app.command()(log)
