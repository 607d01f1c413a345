"""`memagent mcp`: one memory home as an MCP server over stdio."""

from __future__ import annotations

from typing import Annotated

import typer

from memagent.cli._common import HomeOption


def mcp(
    home: HomeOption = None,
    keyword_only: Annotated[
        bool, typer.Option("--keyword-only", help="Search without embeddings.")
    ] = False,
) -> None:
    """Serve the memory home to an MCP client over stdio (tools: remember, recall,
    read_note, write_note, run_actions, profile_show, profile_apply; vault notes
    as memagent://vault/… resources). The home is created if missing."""
    import anyio

    from memagent.api import Memory
    from memagent.server.mcp_tools import build_mcp_server

    memory = Memory.open(home, embeddings=False if keyword_only else None)
    server = build_mcp_server(lambda _ctx: memory)
    try:
        anyio.run(server.run_stdio_async)
    finally:
        memory.close()


def register(app: typer.Typer) -> None:
    app.command(name="mcp")(mcp)
