"""`memagent chunks ls|show|edit|history|undo|rm|restore|link` and `memagent links ID`."""

from __future__ import annotations

from typing import Annotated

import typer

from memagent.cli._common import HomeOption, console, home_from_option, print_json, search_filters

chunks_app = typer.Typer(
    help="List, show, edit, undo, delete and restore episodic chunks.", no_args_is_help=True
)
AsJson = Annotated[bool, typer.Option("--json", help="JSON output.")]


@chunks_app.command("ls")
def ls(
    home: HomeOption = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", "-t", help="Has this tag.")] = None,
    type_: Annotated[str | None, typer.Option("--type", help="Only this type.")] = None,
    since: Annotated[str | None, typer.Option("--since", help="Created at or after.")] = None,
    until: Annotated[str | None, typer.Option("--until", help="Created before.")] = None,
    conversation: Annotated[str | None, typer.Option("--conversation")] = None,
    user: Annotated[str | None, typer.Option("--user")] = None,
    deleted: Annotated[bool, typer.Option("--deleted", help="Include soft-deleted.")] = False,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=100000)] = 50,
    as_json: AsJson = False,
) -> None:
    """List chunks, newest first."""
    from rich.markup import escape
    from rich.table import Column, Table

    from memagent.memory.chunks import ChunkStore

    f = search_filters(tag, type_, None, since, until, conversation, user)
    f.include_deleted = deleted
    store = ChunkStore(home_from_option(home), embeddings=False)
    items = store.list(f, limit=limit)
    if as_json:
        print_json(items)
        return
    table = Table(Column("id", overflow="fold", min_width=27), "created", "type", "tags", "content")
    for it in items:
        text = it["content"].replace("\n", " ")
        text = text if len(text) < 80 else text[:77] + "…"
        mark = " (deleted)" if it["deleted"] else ""
        table.add_row(
            it["id"] + mark, (it["created_at"] or "")[:19], it["type"] or "",
            ",".join(it["tags"]), escape(text),
        )  # fmt: skip
    console.print(table)


@chunks_app.command("show")
def show(chunk_id: str, home: HomeOption = None) -> None:
    """Print one chunk as JSON (records the access)."""
    from memagent.memory.chunks import ChunkStore

    print_json(ChunkStore(home_from_option(home)).get(chunk_id).model_dump(mode="json"))


@chunks_app.command("rm")
def rm(
    chunk_id: str,
    home: HomeOption = None,
    hard: Annotated[bool, typer.Option("--hard", help="Delete the file for good.")] = False,
) -> None:
    """Soft-delete a chunk (hidden from search; `restore` undoes it), or --hard."""
    from memagent.memory.chunks import ChunkStore

    store = ChunkStore(home_from_option(home))
    if hard:
        store.hard_delete(chunk_id)
        console.print(f"deleted {chunk_id} (hard)", highlight=False)
    else:
        store.soft_delete(chunk_id)
        console.print(
            f"deleted {chunk_id} (restore with `memagent chunks restore`)", highlight=False
        )


@chunks_app.command("restore")
def restore(chunk_id: str, home: HomeOption = None) -> None:
    """Undo a soft delete."""
    from memagent.memory.chunks import ChunkStore

    ChunkStore(home_from_option(home)).restore(chunk_id)
    console.print(f"restored {chunk_id}", highlight=False)


@chunks_app.command("edit")
def edit(
    chunk_id: str,
    home: HomeOption = None,
    text: Annotated[str | None, typer.Option("--text", help="The new text.")] = None,
    tag: Annotated[
        list[str] | None, typer.Option("--tag", "-t", help="The new tags (repeat; replaces all).")
    ] = None,
    no_tags: Annotated[bool, typer.Option("--no-tags", help="Remove every tag.")] = False,
    type_: Annotated[str | None, typer.Option("--type", help="The new type.")] = None,
    as_json: AsJson = False,
) -> None:
    """Change a chunk's text, tags or type (re-indexed, logged; `chunks undo` reverts)."""
    from memagent.core import InvalidInput
    from memagent.memory.chunks import ChunkStore

    if tag and no_tags:
        raise InvalidInput("--tag and --no-tags contradict each other")
    tags = [] if no_tags else tag
    if text is None and tags is None and type_ is None:
        raise InvalidInput("nothing to change: give --text, --tag, --no-tags or --type")
    store = ChunkStore(home_from_option(home))
    chunk = store.update(chunk_id, content=text, tags=tags, type=type_)
    if as_json:
        print_json(chunk.model_dump(mode="json"))
        return
    console.print(
        f"edited {chunk_id} (undo with `memagent chunks undo {chunk_id}`)", highlight=False
    )


@chunks_app.command("history")
def history(chunk_id: str, home: HomeOption = None, as_json: AsJson = False) -> None:
    """A chunk's edits, oldest first, with the fields before and after."""
    from rich.markup import escape

    from memagent.memory.chunks import ChunkStore

    edits = ChunkStore(home_from_option(home), embeddings=False).history(chunk_id)
    if as_json:
        print_json([e.to_json() for e in edits])
        return
    if not edits:
        console.print("no edits")
    for e in edits:
        mark = " (undone)" if e.undone else ""
        console.print(f"{e.ts[:19]} {e.edit} {e.op}{mark}", highlight=False)
        for field in e.after:
            old, new = e.before.get(field), e.after[field]
            if old != new:
                console.print(
                    f"  {field}: {escape(repr(old))} → {escape(repr(new))}", highlight=False
                )


@chunks_app.command("undo")
def undo(
    chunk_id: Annotated[str | None, typer.Argument(help="The chunk (its newest edit).")] = None,
    home: HomeOption = None,
    edit_id: Annotated[str | None, typer.Option("--edit", help="Undo this edit.")] = None,
    as_json: AsJson = False,
) -> None:
    """Revert a chunk's newest edit (or --edit ID); refused if it changed since."""
    from memagent.memory.chunks import ChunkStore

    done = ChunkStore(home_from_option(home)).undo(chunk_id, edit=edit_id)
    if as_json:
        print_json(done.to_json())
        return
    console.print(f"undid {done.undoes} on {done.chunk_id} ({done.edit})", highlight=False)


@chunks_app.command("link")
def link(
    source: str,
    kind: Annotated[str, typer.Argument(help="supports, contradicts or related_to")],
    target: str,
    home: HomeOption = None,
    remove: Annotated[bool, typer.Option("--remove", help="Remove the link instead.")] = False,
) -> None:
    """Add a manual link SOURCE --KIND--> TARGET."""
    from memagent.memory.chunks import ChunkStore

    ChunkStore(home_from_option(home)).link(source, kind, target, remove=remove)
    console.print(f"{'unlinked' if remove else 'linked'} {source} {kind} {target}", highlight=False)


def links(chunk_id: str, home: HomeOption = None, as_json: AsJson = False) -> None:
    """Show a chunk's links, both directions."""
    from memagent.memory.chunks import ChunkStore

    got = ChunkStore(home_from_option(home), embeddings=False).links(chunk_id)
    if as_json:
        print_json(got)
        return
    for item in got["outgoing"]:
        console.print(f"→ {item['type']:<12} {item['target']}", highlight=False)
    for item in got["incoming"]:
        console.print(f"← {item['type']:<12} {item['source']}", highlight=False)
    if not got["outgoing"] and not got["incoming"]:
        console.print("no links")


def register(app: typer.Typer) -> None:
    app.add_typer(chunks_app, name="chunks")
    app.command()(links)
