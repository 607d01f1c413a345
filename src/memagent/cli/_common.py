"""Pieces every command module shares: the `--home` option, output helpers and
the error boundary that turns a `MemagentError` into a clean message + exit 1."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from typer.core import TyperGroup

from memagent.core import InvalidInput, MemagentError, MemoryHome

if TYPE_CHECKING:
    from memagent.index import Filters

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


def home_from_option(home: Path | None, *, must_exist: bool = True) -> MemoryHome:
    """The memory home `--home` names (None: `$MEMAGENT_HOME`, else `~/.memagent`);
    `must_exist` refuses a missing one (`init` is the command that makes it)."""
    mh = MemoryHome.open(home)
    return mh.require() if must_exist else mh


def print_json(obj: Any) -> None:
    """Machine-readable output: one JSON document on stdout, nothing else."""
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()


def fail(message: str, code: int = 1) -> NoReturn:
    err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False)
    raise typer.Exit(code)


def describe_error(exc: BaseException) -> str:
    """One line saying what went wrong, for an exception no command handled."""
    if isinstance(exc, MemagentError):
        text = str(exc)
    elif isinstance(exc, UnicodeError):
        text = f"input is not valid UTF-8 text ({exc})"
    elif isinstance(exc, RecursionError):
        text = "input is nested too deeply"
    elif isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        text = f"{where}{exc.strerror or exc}"
    elif isinstance(exc, MemoryError):
        text = "out of memory (input too large?)"
    elif isinstance(exc, sqlite3.Error):
        text = f"index database error: {exc} (run `memagent reindex`)"
    else:
        text = f"unexpected {type(exc).__name__}: {exc} (set {DEBUG_ENV}=1 to see the traceback)"
    return " ".join(text.split()) or type(exc).__name__


DEBUG_ENV = "MEMAGENT_DEBUG"


def _print_version(value: bool) -> None:
    if value:
        from memagent.core.version import __version__

        sys.stdout.write(f"memagent {__version__}\n")
        raise typer.Exit(0)


VersionOption = Annotated[
    bool,
    typer.Option(
        "--version",
        callback=_print_version,
        is_eager=True,
        help="Print the version and exit.",
    ),
]


def read_stdin_text(what: str = "stdin") -> str:
    """All of stdin as UTF-8 text; `InvalidInput` naming the first bad byte otherwise."""
    raw = sys.stdin.buffer.read()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(
            f"{what} is not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})"
        ) from exc


# Usage errors (a missing option, a bad value) are Typer's to print: its (vendored)
# Click's ClickException, found through a public subclass.
_USAGE_ERRORS: tuple[type[Exception], ...] = tuple(
    c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException"
)
_PASS_THROUGH: tuple[type[Exception], ...] = (typer.Exit, typer.Abort, *_USAGE_ERRORS)


class ErrorBoundaryGroup(TyperGroup):
    """Top-level group: any error a command did not handle prints one line,
    `error: …`, on stderr and exits 1 — a `MemagentError` with its message, other
    errors (a read-only disk, undecodable input, input nested too deeply) described
    in one line. `MEMAGENT_DEBUG=1` re-raises for the traceback."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except _PASS_THROUGH:
            raise
        except KeyboardInterrupt as exc:
            err_console.print("[bold red]error:[/] interrupted", highlight=False)
            raise typer.Exit(130) from exc
        except Exception as exc:
            if os.environ.get(DEBUG_ENV) and not isinstance(exc, MemagentError):
                raise
            err_console.print(f"[bold red]error:[/] {escape(describe_error(exc))}", highlight=False)
            raise typer.Exit(1) from exc


def search_filters(
    tag: list[str] | None,
    type_: str | None,
    kind: list[str] | None,
    since: str | None,
    until: str | None,
    conversation: str | None,
    user: str | None,
) -> Filters:
    """The search filters of the `recall` and `chunks ls` options (checked)."""
    from memagent.index import KINDS, Filters
    from memagent.memory.chunks.model import parse_timestamp

    for k in kind or []:
        if k not in KINDS:
            raise InvalidInput(f"--kind {k!r}: use one of {', '.join(KINDS)}")
    return Filters(
        kinds=kind or None,
        tags=[t.lower() for t in tag or []],
        type=type_,
        since=parse_timestamp(since).timestamp() if since else None,
        until=parse_timestamp(until).timestamp() if until else None,
        conversation_id=conversation,
        user_id=user,
    )
