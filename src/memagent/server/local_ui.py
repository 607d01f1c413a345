"""`memagent ui`: the web page over one memory home, as a loopback app of its own.

It sits above both the HTTP server (`server.app`) and the page (`server.ui`),
so neither has to import the other back.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from fastapi import FastAPI

from memagent.core import MemoryHome
from memagent.llm import LLM
from memagent.server.app import ServerSettings, create_app
from memagent.server.ui import LOCAL_USER, UiState, mount_ui


def local_app(
    home: MemoryHome,
    *,
    llm: LLM | None = None,
    llm_spec: str | None = None,
    embeddings: bool | None = None,
    root: Path | None = None,
) -> tuple[FastAPI, UiState]:
    """`memagent ui`: the page for one memory home, no API key (one-time tokens).

    The server's own folder (`root`, default a new temporary folder) holds nothing
    of the user's: the home is served in place.
    """
    server_root = root or Path(tempfile.mkdtemp(prefix="memagent-ui-"))
    settings = ServerSettings(mcp=False, ui=False, embeddings=embeddings, llm=llm_spec)
    app = create_app(server_root, settings, llm=llm)
    app.state.server.pin_home(LOCAL_USER, home)
    return app, mount_ui(app, local_user=LOCAL_USER)
