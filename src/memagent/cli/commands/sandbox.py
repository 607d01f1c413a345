"""`memagent sandbox run`: Python from stdin, run in the restricted interpreter."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from memagent.cli._common import HomeOption, open_home, print_json

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
    from memagent.core import MemagentError
    from memagent.sandbox import Limits, Session, load_session, save_session, state_digest

    limits_kw: dict[str, float | int] = {}
    if timeout is not None:
        limits_kw["timeout_s"] = timeout
    if max_ops is not None:
        limits_kw["max_operations"] = max_ops
    limits = Limits(**limits_kw)
    max_bytes = limits.max_source_bytes
    try:
        if file is not None:
            raw = file.read_bytes()[: max_bytes + 1]
        else:
            raw = sys.stdin.buffer.read(max_bytes + 1)
    except OSError as exc:
        print_json({"output": "", "result": None, "error": f"InvalidInput: {exc}"})
        raise typer.Exit(2) from exc
    if len(raw) > max_bytes:
        print_json(
            {"output": "", "result": None, "error": f"InvalidInput: code over {max_bytes} bytes"}
        )
        raise typer.Exit(2)
    try:
        code = raw.decode("utf-8")
    except UnicodeDecodeError:
        print_json({"output": "", "result": None, "error": "InvalidInput: code is not UTF-8"})
        raise typer.Exit(2) from None
    sess = Session(limits=limits)
    try:
        if session is None:
            result = sess.run(code)
            doc = result.to_json()
        else:
            mh = open_home(home)
            with mh.storage.lock():
                digest = state_digest(mh, session)
                notes = load_session(mh, session, sess)
            result = sess.run(code)  # not under the lock: a run may take seconds
            skipped = save_session(mh, session, sess, expected=digest)
            doc = result.to_json()
            doc["session"] = session
            if notes:
                doc["notes"] = notes
            if skipped:
                doc["not_persisted"] = skipped
    except MemagentError as exc:
        print_json({"output": "", "result": None, "error": f"{type(exc).__name__}: {exc}"})
        raise typer.Exit(2) from exc
    print_json(doc)
    if doc["error"] is not None:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.add_typer(sandbox_app, name="sandbox")
