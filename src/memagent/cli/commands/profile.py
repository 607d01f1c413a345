"""`memagent profile …`: structured profile facts (show, apply, learn, history,
undo, prune, create, schema)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.markup import escape

from memagent.cli._common import HomeOption, console, fail, home_from_option, print_json
from memagent.core.jsontext import JsonObject, too_deep

if TYPE_CHECKING:
    from memagent.memory.profile import ProfileStore

profile_app = typer.Typer(
    help="Structured profile facts: JSON resource files changed by operations.",
    no_args_is_help=True,
)

SCHEMAS = ("resource", "operation", "batch", "switchboard")


def _store(home: Path | None) -> ProfileStore:
    from memagent.memory.profile import ProfileStore

    return ProfileStore(home_from_option(home))


@profile_app.command()
def show(
    resource: Annotated[
        str | None, typer.Argument(help="One resource (e.g. user_food_prefs); default: all.")
    ] = None,
    home: HomeOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Current content as JSON.")] = False,
    tags: Annotated[
        bool, typer.Option("--tags", help="Also each resource's file, lists and routing tags.")
    ] = False,
) -> None:
    """Your profile, one short line per fact (expired items are left out)."""
    from memagent.memory.profile.summary import TITLES, item_line

    store = _store(home)
    names = [store.name_for(resource)] if resource else store.names()
    today = store.today()
    loaded = {name: store.load(name) for name in names}
    if as_json:
        print_json({name: r.to_json(today=today) for name, r in loaded.items()})
        return
    if not loaded:
        console.print("no profile resources (run `memagent init`)")
        return
    shown = 0
    for name, res in loaded.items():
        meta = res.metadata
        lists = [(p, [i for i in items if not i.expired(today)]) for p, items in res.iter_lists()]
        count = sum(len(items) for _, items in lists)
        if not count and not (tags or resource):
            continue
        title = TITLES.get(meta.resource_id) or meta.resource_id.replace("_", " ").capitalize()
        console.print(f"[bold]{escape(title)}[/]", highlight=False)
        if tags:
            routes = escape(", ".join(meta.tags)) or "none"
            console.print(f"  [dim]{name} v{meta.version}; routed by: {routes}[/]", highlight=False)
        for path, items in lists:
            if tags:
                console.print(f"  [dim]{path} ({len(items)})[/]", highlight=False)
            for item in items:
                until = item.expiry.isoformat() if item.expiry else None
                console.print(f"  {escape(item_line(path, item.display, until))}", highlight=False)
                shown += 1
    if not shown and not tags:
        console.print("Your profile is empty: nothing learned or added yet.")


def _read_ops_text(file: str, limit: int) -> str:
    if file == "-":
        data = sys.stdin.buffer.read(limit + 1)
    else:
        path = Path(file)
        try:
            data = b"x" * (limit + 1) if path.stat().st_size > limit else path.read_bytes()
        except OSError as exc:
            _reject(f"cannot read {file}: {exc.strerror or exc}")
    if len(data) > limit:
        _reject(f"{file} is over {limit} bytes (limits.max_file_bytes)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        _reject(f"{file} is not UTF-8 text")


def _reject(error: str, outcomes: list[JsonObject] | None = None) -> NoReturn:
    print_json({"ok": False, "batch": None, "error": error, "outcomes": outcomes or []})
    fail(error)


@profile_app.command()
def apply(
    file: Annotated[
        str, typer.Option("--file", "-f", help="JSON list of operations ('-' for stdin).")
    ],
    home: HomeOption = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Check only; write nothing.")] = False,
) -> None:
    """Apply a batch of operations (no LLM), all or nothing; prints outcomes as JSON."""
    from pydantic import ValidationError

    from memagent.memory.profile import apply_operations, parse_operation
    from memagent.memory.profile.operations import MAX_BATCH_OPERATIONS

    store = _store(home)
    text = _read_ops_text(file, store.max_bytes)
    deep = too_deep(text)
    if deep is not None:
        _reject(f"{file}, line {deep}: nested too deeply")
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        _reject(f"{file}: not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})")
    except (ValueError, RecursionError) as exc:
        _reject(f"{file}: not usable JSON: {exc}")
    if isinstance(raw, dict) and isinstance(raw.get("operations"), list):
        raw = raw["operations"]
    if not isinstance(raw, list):
        _reject(f"{file}: expected a JSON list of operations")
    if len(raw) > MAX_BATCH_OPERATIONS:
        _reject(f"{len(raw)} operations in one batch; the limit is {MAX_BATCH_OPERATIONS}")
    ops = []
    problems: list[JsonObject] = []
    for i, entry in enumerate(raw):
        try:
            ops.append(parse_operation(entry))
        except ValidationError as exc:
            from memagent.memory.profile.pipeline import describe_error

            kind = entry.get("operation") if isinstance(entry, dict) else None
            problems.append(
                {
                    "index": i,
                    "operation": kind if isinstance(kind, str) else None,
                    "status": "rejected",
                    "note": describe_error(exc),
                }
            )
    if problems:
        first = problems[0]
        _reject(f"operation {first['index']}: {first['note']}", problems)
    result = apply_operations(store, ops, dry_run=dry_run)
    print_json(result.to_json())
    if not result.ok:
        fail(f"batch rejected, nothing changed: {result.error}")


@profile_app.command()
def learn(
    text: Annotated[str, typer.Argument(help="What the user said.")],
    home: HomeOption = None,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            help="LLM spec: embedded, openai:NAME, scripted:PATH.json "
            "(default: llm.model in config.toml).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="The whole run as JSON.")] = False,
) -> None:
    """Learn profile facts from a message: screen → gate → extraction → planning → handler."""
    from memagent.llm import load_llm
    from memagent.memory.profile import learn as run_learn

    store = _store(home)
    llm = load_llm(model or store.home.config.llm.model, store.home.config.llm)
    result = run_learn(store, llm, text)
    if as_json:
        print_json(result.to_json())
    else:
        if not result.facts and not result.operations:
            why = f" ({result.skipped})" if result.skipped else ""
            console.print(f"nothing to remember in that message{why}", highlight=False)
        for fact in result.facts:
            named = f" named {fact.name}" if fact.name and fact.kind in ("pet", "family") else ""
            console.print(f"fact: {fact.kind}: {escape(fact.value + named)}", highlight=False)
        for outcome in result.result.outcomes:
            where = f"{outcome.file or ''} {outcome.path or ''}".strip()
            note = f" — {outcome.note}" if outcome.note else ""
            line = f"  {outcome.status}: {outcome.operation} {outcome.item or ''} {where}{note}"
            console.print(escape(line), highlight=False)
        for before, now in result.rewrites:
            console.print(escape(f"  changed: {before} → {now}"), highlight=False)
        for said, why in result.dropped:
            if why.startswith("the check"):  # read, then not written: say so, and why
                console.print(escape(f"  not written: {said} — {why}"), highlight=False)
    if not result.ok:
        fail(f"nothing changed: {result.result.error}")


@profile_app.command()
def history(
    item: Annotated[str, typer.Argument(help="Item key or name, e.g. 'kung pao chicken'.")],
    home: HomeOption = None,
    file: Annotated[str | None, typer.Option("--file", help="Only this resource.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="JSON lines.")] = False,
) -> None:
    """Every recorded change to one item, oldest first."""
    from rich.table import Table

    from memagent.memory.profile import history as item_history

    store = _store(home)
    entries = item_history(store, item, file=store.name_for(file) if file else None)
    if as_json:
        for entry in entries:
            print_json(entry.to_json())
        return
    if not entries:
        console.print(escape(f"no recorded changes to {item!r}"), highlight=False)
        return
    table = Table("time", "batch", "change", "file", "path", "before → after")
    for e in entries:
        before = e.before.display if e.before is not None else "∅"
        after = e.after.display if e.after is not None else "∅"
        change = e.change + (f" ({e.note})" if e.note else "")
        cells = (e.ts[:19], e.batch, change, e.file, e.path, f"{before} → {after}")
        table.add_row(*(escape(c) for c in cells))
    console.print(table)


@profile_app.command()
def undo(
    home: HomeOption = None,
    batch: Annotated[
        str | None, typer.Option("--batch", help="Batch id (default: newest).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="JSON output.")] = False,
) -> None:
    """Revert a batch of operations (the newest one not yet undone, or --batch)."""
    from memagent.memory.profile import undo as undo_batch

    result = undo_batch(_store(home), batch)
    if as_json:
        print_json(result.to_json())
        return
    console.print(f"undid {result.undoes} (as {result.batch})", highlight=False)
    for name, changes in result.changes.items():
        for c in changes:
            console.print(escape(f"  {name} {c.path}: {c.op} {c.item}"), highlight=False)


@profile_app.command()
def prune(
    home: HomeOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="JSON output.")] = False,
) -> None:
    """Remove expired items from every resource."""
    from memagent.memory.profile import prune as prune_all

    pruned = prune_all(_store(home))
    if as_json:
        print_json({"pruned": pruned})
        return
    total = sum(len(v) for v in pruned.values())
    console.print(f"pruned {total} expired item(s)")
    for name, keys in pruned.items():
        console.print(escape(f"  {name}: {', '.join(keys)}"), highlight=False)


@profile_app.command()
def create(
    name: Annotated[str, typer.Argument(help="Resource id, e.g. user_travel.")],
    home: HomeOption = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", help="Routing tag (repeat).")] = None,
    description: Annotated[str, typer.Option("--description", help="What it holds.")] = "",
    section: Annotated[
        list[str] | None, typer.Option("--section", help="List path, e.g. trips.planned (repeat).")
    ] = None,
    exclusive: Annotated[
        list[str] | None,
        typer.Option("--exclusive", help="Comma-separated paths an item may be in only one of."),
    ] = None,
) -> None:
    """Create a new, empty resource file with the given sections and tags."""
    store = _store(home)
    groups = [[p.strip() for p in g.split(",") if p.strip()] for g in exclusive or []]
    res = store.create(
        name, tags=tag or [], description=description, sections=section or [], exclusive=groups
    )
    console.print(f"created profile/{res.name}", highlight=False)


@profile_app.command()
def schema(
    which: Annotated[str, typer.Argument(help=f"One of: {', '.join(SCHEMAS)}.")] = "resource",
    home: HomeOption = None,
) -> None:
    """Print a JSON Schema: a resource file, one operation, a batch, or the switchboard reply
    (the same for every home; `--home` is accepted like on every command)."""
    del home
    from memagent.memory.profile import OperationBatch, ResourceFile, SwitchboardOutput
    from memagent.memory.profile.operations import operation_schema

    if which == "resource":
        print_json(ResourceFile.model_json_schema(by_alias=True))
    elif which == "operation":
        print_json(operation_schema())
    elif which == "batch":
        print_json(OperationBatch.model_json_schema())
    elif which == "switchboard":
        print_json(SwitchboardOutput.model_json_schema())
    else:
        fail(f"unknown schema {which!r}; choose one of: {', '.join(SCHEMAS)}")


def register(app: typer.Typer) -> None:
    app.add_typer(profile_app, name="profile")
