"""`memagent ui`: the web page for one local memory home."""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from memagent.cli._common import HomeOption, err_console, home_from_option

LOOPBACK = ("127.0.0.1", "::1", "localhost")


def ui(
    home: HomeOption = None,
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="TCP port.")] = 8766,
    host: Annotated[
        str, typer.Option("--host", help="Loopback interface: 127.0.0.1, ::1 or localhost.")
    ] = "127.0.0.1",
    model: Annotated[
        str | None,
        typer.Option("--model", help="LLM for Chat (default: llm.model of the home's config)."),
    ] = None,
    keyword_only: Annotated[
        bool, typer.Option("--keyword-only", help="Search without embeddings.")
    ] = False,
    open_browser: Annotated[
        bool, typer.Option("--open/--no-open", help="Open the page in a browser.")
    ] = False,
) -> None:
    """Open the web page for a local memory home: search, memories, notes, profile,
    activity, status and chat. Loopback only; the printed address signs you in once
    (other local users cannot read the page without it). With --open the browser
    gets a private file (mode 0600, in a 0700 folder) that forwards to that
    address, so the token never appears in a command line."""
    from memagent.core import InvalidInput
    from memagent.server.local_ui import local_app
    from memagent.server.serving import configure_logging, run_server

    if host not in LOOPBACK:
        raise InvalidInput(f"--host {host}: the local page listens on loopback only; use serve")
    configure_logging()
    mh = home_from_option(home)
    root = Path(tempfile.mkdtemp(prefix="memagent-ui-"))
    previous = signal.signal(signal.SIGTERM, _stop_on_term)
    try:
        app, state = local_app(
            mh, llm_spec=model, embeddings=False if keyword_only else None, root=root
        )
        shown = f"[{host}]" if ":" in host else host
        url = f"http://{shown}:{port}/ui/login?token={state.login_token()}"
        err_console.print(f"memagent ui for {mh.root}", highlight=False)
        err_console.print(f"open (signs you in once): {url}", highlight=False, soft_wrap=True)
        if open_browser:
            open_privately(url, root)
        run_server(app, host=host, port=port)
    finally:
        signal.signal(signal.SIGTERM, previous)
        shutil.rmtree(root, ignore_errors=True)


def _stop_on_term(signum: int, _frame: object) -> None:
    """SIGTERM ends `ui` like Ctrl-C: through its cleanup (the server re-raises
    the signal once it has stopped; by default that would end the process
    before its temporary folder is removed)."""
    raise SystemExit(128 + signum)


def open_privately(url: str, folder: Path) -> Path:
    """Open `url` in the browser through a file only this user can read (the
    browser's command line names the file, not the token), without waiting for
    the browser: a generic `BROWSER` command may not return until it exits."""
    import html
    import threading
    import webbrowser

    page = folder / "open.html"
    fd = os.open(page, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    target = html.escape(url, quote=True)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(
            '<!doctype html><meta charset="utf-8">'
            f'<meta http-equiv="refresh" content="0;url={target}">'
            '<meta name="referrer" content="no-referrer">'
            f'<title>memagent</title><a href="{target}">Open memagent</a>\n'
        )
    threading.Thread(
        target=webbrowser.open, args=(page.as_uri(),), name="memagent-browser", daemon=True
    ).start()
    return page


def register(app: typer.Typer) -> None:
    app.command()(ui)
