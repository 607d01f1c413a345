"""`memagent vault …`: run JSON actions on the vault, print the schema, list, show."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from memagent.cli._common import HomeOption, console, home_from_option, print_json

MAX_STDIN_BYTES = 8 * 1024 * 1024

vault_app = typer.Typer(
    help="The markdown vault: run JSON actions on it, list and show notes.",
    no_args_is_help=True,
)


def _json_fail(message: str, code: int = 2) -> None:
    print_json({"ok": False, "error": message, "results": []})
    raise typer.Exit(code)


@vault_app.command("run")
def run(
    home: HomeOption = None,
    python: Annotated[
        bool,
        typer.Option(
            "--python",
            help="Stdin is Python run in the sandbox, with the vault actions as functions "
            "(read_file(path), update_file(path, old_content, new_content), …).",
        ),
    ] = False,
    session: Annotated[
        str | None,
        typer.Option(
            "--session",
            "-s",
            help="With --python: keep variables, functions and imports under this name.",
        ),
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option("--timeout", min=0.001, help="With --python: wall-time limit in seconds."),
    ] = None,
    max_ops: Annotated[
        int | None, typer.Option("--max-ops", min=1, help="With --python: operation limit.")
    ] = None,
) -> None:
    """Run actions from stdin (a JSON array, or text with <actions>…</actions>).

    Prints one JSON object of results and exits 0, even when some actions fail;
    unparseable or invalid input prints {"ok": false, "error": …} and exits 2,
    and nothing is written.

    With --python, stdin is Python code instead, run in the sandbox where each
    action is a function; prints {"output", "result", "error"} like
    `memagent sandbox run`, and exits 0 (ran), 1 (the code raised or hit a
    limit) or 2 (the input was refused).
    """
    if python:
        _run_python(home, session, timeout, max_ops)
        return
    if session is not None or timeout is not None or max_ops is not None:
        _json_fail("--session, --timeout and --max-ops go with --python")
    from memagent.actions import parse_response, run_actions
    from memagent.core import MemagentError
    from memagent.memory.vault import Vault

    raw = sys.stdin.buffer.read(MAX_STDIN_BYTES + 1)
    if len(raw) > MAX_STDIN_BYTES:
        _json_fail(f"input is larger than {MAX_STDIN_BYTES} bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        _json_fail(f"input is not UTF-8 text (byte {exc.start})")
    parsed = parse_response(text)
    if parsed.error is not None:
        _json_fail(parsed.error)
    if not parsed.actions_found:
        _json_fail(
            'no actions found: give a JSON array like [{"action": "read_file", '
            '"path": "user.md"}] or text containing <actions>…</actions>'
        )
    try:
        vault = Vault(home_from_option(home))
        result = run_actions(vault, parsed.actions)
    except MemagentError as exc:
        _json_fail(str(exc), code=1)
    print_json(result.to_json())


def _python_fail(message: str, code: int = 2) -> NoReturn:
    print_json({"output": "", "result": None, "error": message})
    raise typer.Exit(code)


def _run_python(
    home: Path | None, session: str | None, timeout: float | None, max_ops: int | None
) -> None:
    from memagent.actions import vault_tools
    from memagent.cli._code_input import limits_from, read_code
    from memagent.core import MemagentError
    from memagent.memory.vault import Vault
    from memagent.sandbox import IsolatedSession, run_persisted

    try:
        limits = limits_from(timeout, max_ops)
        code = read_code(sys.stdin.buffer, limits.max_source_bytes)
        mh = home_from_option(home)
        vault = Vault(mh, actor="vault-python")
        vault.real_root  # noqa: B018 -- a missing vault is an input error, not a tool error
        sess = IsolatedSession(tools=vault_tools(vault), limits=limits)
        try:
            if session is None:
                doc = sess.run(code).to_json()
            else:
                doc = run_persisted(mh, session, sess, code)
        finally:
            sess.close()
    except MemagentError as exc:
        _python_fail(f"{type(exc).__name__}: {exc}")
    print_json(doc)
    if doc["error"] is not None:
        raise typer.Exit(1)


@vault_app.command("schema")
def schema(home: HomeOption = None) -> None:
    """Print the JSON Schema of an actions batch (the same for every home)."""
    del home
    from memagent.actions import action_json_schema

    print_json(action_json_schema())


@vault_app.command("ls")
def ls(
    path: Annotated[str, typer.Argument(help="Folder inside the vault.")] = "",
    home: HomeOption = None,
    recursive: Annotated[bool, typer.Option("--recursive", "-r", help="Whole tree.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="JSON on stdout.")] = False,
) -> None:
    """List a vault folder (folders end in '/')."""
    from memagent.memory.vault import Vault

    listing = Vault(home_from_option(home)).list_dir(path, recursive=recursive)
    if as_json:
        print_json(listing.to_json())
        return
    for entry in listing.entries:
        style = "bold blue" if entry.endswith("/") else ""
        console.print(entry, style=style, highlight=False, markup=False)
    if listing.truncated:
        console.print(f"… (only the first {len(listing.entries)} shown)", style="dim")


@vault_app.command("show")
def show(
    path: Annotated[str, typer.Argument(help="A note's path, or a [[wikilink]].")],
    home: HomeOption = None,
) -> None:
    """Print a note as it is on disk; a [[wikilink]] is resolved first."""
    from memagent.memory.vault import Vault

    vault = Vault(home_from_option(home))
    text = vault.go_to_link(path).content if path.strip().startswith("[[") else vault.read(path)
    sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")
    sys.stdout.flush()


def register(app: typer.Typer) -> None:
    app.add_typer(vault_app, name="vault")
