"""`memagent sandbox run`: Python from stdin, run in the restricted interpreter."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from memagent.cli._common import HomeOption, home_from_option, print_json

sandbox_app = typer.Typer(help="The restricted, stateful Python interpreter.", no_args_is_help=True)


@sandbox_app.command("run")
def run(
    home: HomeOption = None,
    session: Annotated[
        str | None,
        typer.Option(
            "--session",
            "-s",
            help="Keep variables, functions and imports in the memory home under this name.",
        ),
    ] = None,
    file: Annotated[
        Path | None,
        typer.Option("--file", "-f", help="Read the code from this file instead of stdin."),
    ] = None,
    timeout: Annotated[
        float | None, typer.Option("--timeout", min=0.001, help="Wall-time limit in seconds.")
    ] = None,
    max_ops: Annotated[
        int | None, typer.Option("--max-ops", min=1, help="Operation limit.")
    ] = None,
) -> None:
    """Run Python read from stdin; print {"output", "result", "error"} as JSON.

    Exits 0 when the code ran without error, 1 when it raised or hit a limit
    (the JSON says why), 2 when the input itself was refused.
    """
    from memagent.cli._code_input import limits_from, read_code
    from memagent.core import InvalidInput, MemagentError
    from memagent.sandbox import IsolatedSession, run_persisted

    try:
        limits = limits_from(timeout, max_ops)
        try:
            if file is not None:
                with file.open("rb") as fh:
                    code = read_code(fh, limits.max_source_bytes)
            else:
                code = read_code(sys.stdin.buffer, limits.max_source_bytes)
        except OSError as exc:
            raise InvalidInput(f"cannot read the code: {exc}") from exc
        sess = IsolatedSession(limits=limits)
        try:
            if session is None:
                doc = sess.run(code).to_json()
            else:
                doc = run_persisted(home_from_option(home), session, sess, code)
        finally:
            sess.close()
    except MemagentError as exc:
        print_json({"output": "", "result": None, "error": f"{type(exc).__name__}: {exc}"})
        raise typer.Exit(2) from exc
    print_json(doc)
    if doc["error"] is not None:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.add_typer(sandbox_app, name="sandbox")
