"""`memagent ui`: the web page for one local memory home."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Annotated

import typer

from memagent.cli._common import HomeOption, err_console, open_home

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
    (other local users cannot read the page without it)."""
    import uvicorn

    from memagent.core import InvalidInput
    from memagent.server.local_ui import local_app

    if host not in LOOPBACK:
        raise InvalidInput(f"--host {host}: the local page listens on loopback only; use serve")
    mh = open_home(home)
    root = Path(tempfile.mkdtemp(prefix="memagent-ui-"))
    try:
        app, state = local_app(
            mh, llm_spec=model, embeddings=False if keyword_only else None, root=root
        )
        shown = f"[{host}]" if ":" in host else host
        url = f"http://{shown}:{port}/ui/login?token={state.login_token()}"
        err_console.print(f"memagent ui for {mh.root}", highlight=False)
        err_console.print(f"open (signs you in once): {url}", highlight=False, soft_wrap=True)
        if open_browser:
            import webbrowser

            webbrowser.open(url)
        uvicorn.run(app, host=host, port=port, log_level="warning", timeout_graceful_shutdown=5)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def register(app: typer.Typer) -> None:
    app.command()(ui)
