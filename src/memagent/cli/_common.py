"""Pieces every command module shares: the `--home` option, output helpers and
the error boundary that turns a `MemagentError` into a clean message + exit 1."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from typer.core import TyperGroup

from memagent.core import MemagentError, MemoryHome

console = Console()
err_console = Console(stderr=True, soft_wrap=True)

HomeOption = Annotated[
    Path | None,
    typer.Option(
        "--home",
        help="Memory home folder (default: $MEMAGENT_HOME, else ~/.memagent).",
        show_default=False,
    ),
]


StoreOption = Annotated[
    str | None,
    typer.Option(
        "--store",
        help="Storage backend: local (the home's files) or postgresql://… (a shared "
        "database; default: [store] of config.toml).",
        show_default=False,
    ),
]
UserOption = Annotated[
    str | None,
    typer.Option("--user", help="Whose memory, in a shared --store database (default: default)."),
]


def open_home(home: Path | None, *, must_exist: bool = True) -> MemoryHome:
    mh = MemoryHome.open(home)
    return mh.require() if must_exist else mh


def print_json(obj: Any) -> None:
    """Machine-readable output: one JSON document on stdout, nothing else."""
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()


def fail(message: str, code: int = 1) -> NoReturn:
    err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False)
    raise typer.Exit(code)


class ErrorBoundaryGroup(TyperGroup):
    """Top-level group: a `MemagentError` from any command prints `error: …` on
    stderr and exits 1, instead of a traceback."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except MemagentError as exc:
            err_console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
            raise typer.Exit(1) from exc
