"""`memagent reindex`: rebuild the derived index from the files."""

from __future__ import annotations

from typing import Annotated

import typer

from memagent.cli._common import HomeOption, console, err_console, home_from_option


def reindex(
    home: HomeOption = None,
    keyword_only: Annotated[
        bool, typer.Option("--keyword-only", help="Build without embeddings.")
    ] = False,
) -> None:
    """Rebuild index.sqlite from chunk files, vault notes and profile facts."""
    from memagent.cli._progress import progress
    from memagent.memory.chunks import ChunkStore

    store = ChunkStore(home_from_option(home), embeddings=False if keyword_only else None)
    with progress("indexing", "files") as update:
        report = store.rebuild(update)
    idx = store.index
    console.print(
        f"indexed {len(report.indexed)} files ({idx.count('chunk')} chunks, "
        f"{idx.count('note')} notes, {idx.count('fact')} facts); "
        f"skipped {len(report.skipped)} unreadable",
        highlight=False,
    )
    for rel in report.skipped:
        err_console.print(f"  skipped {rel} (does not parse)", highlight=False)


def register(app: typer.Typer) -> None:
    app.command()(reindex)
