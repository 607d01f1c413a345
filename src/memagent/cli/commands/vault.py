"""`memagent vault …`: run JSON actions on the vault, print the schema, list, show."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from memagent.cli._common import HomeOption, console, open_home, print_json

MAX_STDIN_BYTES = 8 * 1024 * 1024

vault_app = typer.Typer(
    help="The markdown vault: run JSON actions on it, list and show notes.",
    no_args_is_help=True,
)


def _json_fail(message: str, code: int = 2) -> None:
    print_json({"ok": False, "error": message, "results": []})
    raise typer.Exit(code)


@vault_app.command("run")
def run(home: HomeOption = None) -> None:
    """Run actions from stdin (a JSON array, or text with <actions>…</actions>).

    Prints one JSON object of results and exits 0, even when some actions fail;
    unparseable or invalid input prints {"ok": false, "error": …} and exits 2,
    and nothing is written.
    """
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
        vault = Vault(open_home(home))
        result = run_actions(vault, parsed.actions)
    except MemagentError as exc:
        _json_fail(str(exc), code=1)
    print_json(result)


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

    listing = Vault(open_home(home)).list_dir(path, recursive=recursive)
    if as_json:
        print_json(listing)
        return
    for entry in listing["entries"]:
        style = "bold blue" if entry.endswith("/") else ""
        console.print(entry, style=style, highlight=False, markup=False)
    if listing["truncated"]:
        console.print(f"… (only the first {len(listing['entries'])} shown)", style="dim")


@vault_app.command("show")
def show(
    path: Annotated[str, typer.Argument(help="A note's path, or a [[wikilink]].")],
    home: HomeOption = None,
) -> None:
    """Print a note as it is on disk; a [[wikilink]] is resolved first."""
    from memagent.memory.vault import Vault

    vault = Vault(open_home(home))
    text = vault.go_to_link(path)["content"] if path.strip().startswith("[[") else vault.read(path)
    sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")
    sys.stdout.flush()


def register(app: typer.Typer) -> None:
    app.add_typer(vault_app, name="vault")
