"""`memagent remember`, `memagent import` and `memagent recall`: episodic memory
in and out, no LLM needed (`recall --deep` asks one for search terms first)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from memagent.cli._common import (
    HomeOption,
    StoreOption,
    console,
    err_console,
    home_from_option,
    print_json,
    read_stdin_text,
    search_filters,
)
from memagent.core.jsontext import JsonObject

if TYPE_CHECKING:
    from memagent.index import Hit
    from memagent.memory.chunks import ChunkDraft, ChunkStore

TagOption = Annotated[list[str] | None, typer.Option("--tag", "-t", help="A tag (repeatable).")]
StoreUserOption = Annotated[
    str | None,
    typer.Option("--store-user", help="Whose memory in a shared --store database."),
]
KeywordOnly = Annotated[
    bool, typer.Option("--keyword-only", help="Skip embeddings: keyword search only.")
]


def _store(
    home: Path | None,
    keyword_only: bool = False,
    store: str | None = None,
    user: str | None = None,
) -> ChunkStore:
    """The chunk store of the home, or of `user` in the `--store` database."""
    from memagent.stores import open_stores

    stores = open_stores(
        home_from_option(home), create=False, embeddings=False if keyword_only else None,
        store=store, user=user,
    )  # fmt: skip
    return stores.chunks


def remember(
    text: Annotated[
        str | None, typer.Argument(help="What to remember ('-' or none: stdin).")
    ] = None,
    home: HomeOption = None,
    store_url: StoreOption = None,
    store_user: StoreUserOption = None,
    tag: TagOption = None,
    type_: Annotated[
        str | None,
        typer.Option(
            "--type", help="decision, pattern, preference, fact or note (default: detected)."
        ),
    ] = None,
    conversation: Annotated[
        str | None, typer.Option("--conversation", help="Conversation id.")
    ] = None,
    user: Annotated[str | None, typer.Option("--user", help="User id (scope).")] = None,
    agent: Annotated[str | None, typer.Option("--agent", help="Agent id (scope).")] = None,
    session: Annotated[str | None, typer.Option("--session", help="Session id (scope).")] = None,
    keyword_only: KeywordOnly = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the chunks as JSON.")] = False,
) -> None:
    """Store text as episodic memory (split into chunks, typed, auto-linked)."""
    from memagent.core import InvalidInput

    if text is None or text == "-":
        if sys.stdin.isatty():
            raise InvalidInput("give TEXT, or pipe it on stdin")
        text = read_stdin_text()
    if type_ is not None and type_ not in ("decision", "pattern", "preference", "fact", "note"):
        raise InvalidInput(f"--type {type_!r}: use decision, pattern, preference, fact or note")
    from memagent.cli._progress import progress

    store = _store(home, keyword_only, store_url, store_user)
    with progress("remembering", "chunks") as update:
        chunks = store.remember(
            text,
            progress=update,
            tags=tag or [],
            type=type_,
            conversation_id=conversation,
            user_id=user,
            agent_id=agent,
            session_id=session,
            source={"kind": "cli"},
        )
    if as_json:
        print_json([c.model_dump(mode="json") for c in chunks])
        return
    for c in chunks:
        links = f", {len(c.links)} links" if c.links else ""
        console.print(f"remembered {c.id} ({c.type}, {c.tokens} tokens{links})", highlight=False)


def import_(
    file: Annotated[
        Path,
        typer.Argument(
            help="JSON lines or a messages array, a ChatGPT or Claude conversations.json, "
            "or a 'Name: text' transcript ('-': stdin)."
        ),
    ],
    home: HomeOption = None,
    store_url: StoreOption = None,
    store_user: StoreUserOption = None,
    tag: TagOption = None,
    merge: Annotated[
        bool, typer.Option("--merge", help="Merge consecutive messages of a conversation.")
    ] = False,
    keyword_only: KeywordOnly = False,
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            help="auto (detect), messages, chatgpt, claude or transcript.",
        ),
    ] = "auto",
) -> None:
    """Import messages as chunks (one per message unless --merge).

    Speakers missing from the file are read from lines that open with `Name:`,
    and a conversation without per-session ids is split into sessions at
    pauses of 30 minutes or more.

    Idempotent: a message imported before (same `id`, or without one the same
    content, timestamp and conversation) is skipped, so a rerun, or a run after
    an interrupted one, completes without duplicates."""
    from memagent.core import InvalidInput
    from memagent.memory.chunks.exports import FORMATS
    from memagent.memory.chunks.importer import (
        drafts_from_messages,
        load_messages,
        read_messages_stream,
    )
    from memagent.memory.chunks.model import check_tags

    from_stdin = str(file) == "-"  # like `remember -`
    if fmt not in FORMATS:
        raise InvalidInput(f"unknown --format {fmt!r} (one of {', '.join(FORMATS)})")
    messages = (
        read_messages_stream(sys.stdin.buffer, fmt=fmt) if from_stdin else load_messages(file, fmt)
    )
    drafts = drafts_from_messages(
        messages, origin="stdin" if from_stdin else file.name, tags=check_tags(tag or []),
        merge=merge,
    )  # fmt: skip
    store = _store(home, keyword_only, store_url, store_user)
    todo = _not_imported(drafts, store)
    skipped = len(drafts) - len(todo)
    done = _create_in_batches(store, todo, drafts)
    note = f" ({skipped} already imported, skipped)" if skipped else ""
    console.print(f"imported {len(messages)} messages as {done} chunks{note}", highlight=False)
    named = sum("speaker" in m.inferred for m in messages)
    split = {(m.conversation_id, m.session_id) for m in messages if "session" in m.inferred}
    if named or len(split) > 1:
        console.print(
            f"inferred: speakers of {named} messages from their 'Name:' prefix; "
            f"{len(split)} sessions from pauses of 30 minutes or more",
            highlight=False,
        )


_IMPORT_BATCH = 256


def _not_imported(drafts: list[ChunkDraft], store: ChunkStore) -> list[ChunkDraft]:
    """The drafts not imported before (by their import key), each once."""
    seen = _import_keys(store)
    todo = []
    for d in drafts:
        key = str((d.source or {}).get("import_key"))
        if key not in seen:
            seen.add(key)
            todo.append(d)
    return todo


def _create_in_batches(store: ChunkStore, todo: list[ChunkDraft], drafts: list[ChunkDraft]) -> int:
    """Store `todo` a batch at a time with progress; how many were stored. Ctrl-C
    says how many of `drafts` are in the store and exits 130 (a rerun adds the rest)."""
    from memagent.cli._progress import progress

    done = 0
    try:
        with progress("importing", "chunks") as update:
            for start in range(0, len(todo), _IMPORT_BATCH):
                part = todo[start : start + _IMPORT_BATCH]
                offset = done

                def step(n: int, _total: int, offset: int = offset) -> None:
                    update(offset + n, len(todo))

                store.create_many(part, progress=step)
                done += len(part)
    except KeyboardInterrupt:
        mine = {str((d.source or {}).get("import_key")) for d in drafts}
        now = len(mine & _import_keys(store))  # what is really stored, even mid-batch
        err_console.print(
            f"interrupted: imported {now} of {len(drafts)} chunks; run the same import "
            "again to add the rest (nothing is imported twice)",
            highlight=False,
        )
        raise typer.Exit(130) from None
    return done


def _import_keys(store: Any) -> set[str]:
    """`import_key`s of every chunk in the store (deleted ones too: once imported,
    a message deleted later is not brought back by importing the file again)."""
    from memagent.index import Filters

    rows = store.list(Filters(include_deleted=True), limit=10_000_000)
    return {str(k) for r in rows if (k := (r.get("source") or {}).get("import_key"))}


def _batch_queries(path: Path) -> list[tuple[Any, str, float | None]]:
    """`(id, query, asked_at as epoch seconds or None)` of each line; `InvalidInput`
    naming the first bad line."""
    from memagent.core import InvalidInput
    from memagent.index.temporal import parse_as_of

    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"cannot read {path}: {exc}") from exc
    out: list[tuple[Any, str, float | None]] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"{path.name}, line {n}: not valid JSON ({exc.msg})") from exc
        if not isinstance(obj, dict) or not isinstance(obj.get("query"), str):
            raise InvalidInput(f'{path.name}, line {n}: expected {{"id": …, "query": "…"}}')
        asked = obj.get("asked_at")
        try:
            now = None if asked is None else parse_as_of(asked).timestamp()
        except InvalidInput as exc:
            raise InvalidInput(f"{path.name}, line {n}: asked_at: {exc}") from exc
        out.append((obj.get("id"), obj["query"], now))
    return out


def _expander(store: ChunkStore, model: str | None) -> Callable[[str], tuple[list[str], str]]:
    """`--deep`: a function from a query to (the model's terms, the query to run).
    A model that fails leaves the query as it is, with a warning on stderr."""
    from memagent.agent.expand import expand_query
    from memagent.llm import LLMError, load_llm

    cfg = store.config.llm
    llm = load_llm(model or cfg.model, cfg)

    def expand(query: str) -> tuple[list[str], str]:
        try:
            got = expand_query(llm, query)
        except LLMError as exc:
            err_console.print(f"[yellow]--deep: the model failed ({exc}); plain recall[/]")
            return [], query
        return got.terms, got.expanded

    return expand


def recall(
    query: Annotated[str | None, typer.Argument(help="What to look for.")] = None,
    home: HomeOption = None,
    store_url: StoreOption = None,
    store_user: StoreUserOption = None,
    k: Annotated[int, typer.Option("-k", min=1, help="How many hits.")] = 10,
    batch: Annotated[
        Path | None,
        typer.Option(
            "--batch",
            help='JSON lines of {"id", "query", "asked_at"?}; one output line each.',
        ),
    ] = None,
    as_of: Annotated[
        str | None,
        typer.Option(
            "--as-of",
            help="When the query is asked (YYYY-MM-DD or ISO 8601): 'now' for relative "
            "times ('last week') and recency. Default: now.",
            show_default=False,
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="JSON output.")] = False,
    tag: TagOption = None,
    type_: Annotated[str | None, typer.Option("--type", help="Only this chunk type.")] = None,
    kind: Annotated[
        list[str] | None, typer.Option("--kind", help="chunk, note or fact (repeatable).")
    ] = None,
    since: Annotated[
        str | None, typer.Option("--since", help="Created at or after (ISO 8601).")
    ] = None,
    until: Annotated[str | None, typer.Option("--until", help="Created before (ISO 8601).")] = None,
    conversation: Annotated[
        str | None, typer.Option("--conversation", help="Conversation id.")
    ] = None,
    user: Annotated[str | None, typer.Option("--user", help="User id (scope).")] = None,
    keyword_only: KeywordOnly = False,
    deep: Annotated[
        bool,
        typer.Option(
            "--deep",
            help="Let the LLM add search terms to the query first (slower: one generation).",
        ),
    ] = False,
    model: Annotated[
        str | None,
        typer.Option("--model", help="LLM for --deep (default: llm.model of the home's config)."),
    ] = None,
) -> None:
    """Search all memory (chunks, notes, profile facts): hybrid keyword + embeddings."""
    from memagent.cli._progress import progress
    from memagent.core import InvalidInput
    from memagent.index.temporal import parse_as_of

    now = parse_as_of(as_of).timestamp() if as_of is not None else None
    if (query is None) == (batch is None):
        raise InvalidInput("give a QUERY or --batch FILE (one of them)")
    filters = search_filters(tag, type_, kind, since, until, conversation, user)
    queries = _batch_queries(batch) if batch is not None else []
    if model is not None and not deep:
        raise InvalidInput("--model is for --deep")
    store = _store(home, keyword_only, store_url, store_user)
    expand = _expander(store, model) if deep else None
    # The first search opens the index: changed files are re-read and documents a
    # keyword-only run left without vectors are embedded, with progress on stderr.
    with progress("updating the index", "documents") as update:
        store.progress = update
        if batch is not None:
            for qid, q, asked in queries:
                terms, q = expand(q) if expand else ([], q)
                hits = store.recall(q, k=k, filters=filters, now=asked if asked else now)
                print_json({"id": qid} | _hits_json(hits, terms if expand else None))
            return
        assert query is not None
        terms, searched = expand(query) if expand else ([], query)
        hits = store.recall(searched, k=k, filters=filters, now=now)
    if as_json:
        print_json(_hits_json(hits, terms if expand else None))  # HTTP /v1/search's shape
        return
    _print_hits(store, hits, terms if expand else None)


def _hits_json(hits: list[Hit], expansion: list[str] | None) -> JsonObject:
    doc: JsonObject = {"hits": [h.to_json() for h in hits]}
    if expansion is not None:
        doc["expansion"] = expansion
    return doc


def _print_hits(store: ChunkStore, hits: list[Hit], expansion: list[str] | None) -> None:
    from rich.markup import escape
    from rich.table import Column, Table

    if expansion is not None:
        err_console.print(f"[dim]expanded with: {escape(', '.join(expansion) or '(nothing)')}[/]")
    mode = "hybrid" if store.embedder is not None else f"keyword-only ({store.keyword_only_reason})"
    err_console.print(f"[dim]{len(hits)} hits · {mode}[/]")
    table = Table(
        "score", Column("id", overflow="fold", min_width=27), "kind", "created", "content"
    )
    for h in hits:
        text = h.row.content if len(h.row.content) < 200 else h.row.content[:197] + "…"
        table.add_row(
            f"{h.score:.4f}", h.row.doc_id, h.row.kind, (h.row.created_at or "")[:10], escape(text)
        )
    console.print(table)


def register(app: typer.Typer) -> None:
    app.command()(remember)
    app.command("import")(import_)
    app.command()(recall)
