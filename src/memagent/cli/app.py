"""The `memagent` command. Each module in `memagent.cli.commands` contributes its
commands through a `register(app)` function, so adding a command never means
editing a central list."""

from __future__ import annotations

import importlib
import pkgutil

import typer

from memagent.cli import commands
from memagent.cli._common import ErrorBoundaryGroup, VersionOption

app = typer.Typer(
    name="memagent",
    cls=ErrorBoundaryGroup,
    help="Local-first memory for LLMs: markdown notes, profile facts and episodic chunks.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    # Help texts are plain: Rich markup would eat "[[wikilinks]]" and "[store]".
    rich_markup_mode=None,
)


@app.callback()
def _main(version: VersionOption = False) -> None:
    """Local-first memory for LLMs: markdown notes, profile facts and episodic chunks."""
    del version


for _info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
    if not _info.name.startswith("_"):
        importlib.import_module(f"{commands.__name__}.{_info.name}").register(app)
