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
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            help="The model profile_learn uses: embedded | openai:NAME | scripted:PATH.json "
            "(default: config llm.model; loaded on first use).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Serve the memory home to an MCP client over stdio: tools (remember, recall,
    notes, memories, profile, build_context, recent_activity, …), prompts, and
    notes and memories as memory://notes/… and memory://memories/… resources.
    The home is created if missing."""
    import functools
    import threading

    import anyio

    from memagent.api import Memory
    from memagent.llm import LLM, load_llm
    from memagent.server.mcp_tools import build_mcp_server

    memory = Memory.open(home, embeddings=False if keyword_only else None)
    loading = threading.Lock()

    @functools.cache
    def llm() -> LLM:
        cfg = memory.home.config.llm
        return load_llm(model or cfg.model, cfg)

    def llm_of(_ctx: object, _memory: Memory) -> LLM:
        with loading:  # one model, loaded once, however many calls arrive together
            return llm()

    server = build_mcp_server(lambda _ctx: memory, llm_of=llm_of)
    try:
        anyio.run(server.run_stdio_async)
    finally:
        memory.close()


def register(app: typer.Typer) -> None:
    app.command(name="mcp")(mcp)
