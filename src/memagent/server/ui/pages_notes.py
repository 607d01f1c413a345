"""Notes: the vault as a tree, a note rendered with working wikilinks and its
backlinks, and editing with conflict refusal (the form carries the hash of the
text it started from; a save over a note that changed since is refused and the
person's text is given back, nothing is overwritten)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from memagent.core import InvalidInput, NotFound, sha256_hex
from memagent.memory.vault import Vault, link_key, parse_link, title_and_aliases
from memagent.server._admission import RouteClass, admits
from memagent.server.ui._base import UiRoute, go, one, page
from memagent.server.ui._session import Viewer, ViewerDep, checked_form

router = APIRouter(prefix="/ui/notes", route_class=UiRoute, include_in_schema=False)

NotePath = Annotated[str, Query(min_length=1, max_length=1000)]
MAX_BACKLINK_SCAN = 2000
_WIKILINK = re.compile(r"\[\[([^\[\]\n]{1,500})\]\]")


def _hash(text: str) -> str:
    return sha256_hex(text.encode("utf-8"))


@dataclass(frozen=True)
class TreeRow:
    """One entry of the vault's tree: how deep, its name, its path, a folder or not."""

    depth: int
    name: str
    path: str
    dir: bool


def _tree(entries: list[str]) -> list[TreeRow]:
    """Flat sorted entries (folders ending in '/') as rows of a nested list."""
    rows: list[TreeRow] = []
    for entry in entries:
        path = entry.rstrip("/")
        rows.append(TreeRow(path.count("/"), path.rsplit("/", 1)[-1], path, entry.endswith("/")))
    return rows


def _names_of(rel: str, text: str) -> set[str]:
    """Every key a wikilink to this note may use: path, file name, title, aliases."""
    stem = rel.removesuffix(".md")
    title, aliases = title_and_aliases(text)
    names = {stem, stem.rsplit("/", 1)[-1], *aliases}
    if title:
        names.add(title)
    return {link_key(n) for n in names if n}


def backlinks(vault: Vault, rel: str, text: str) -> list[str]:
    """Notes whose wikilinks point at `rel` (the first 2000 notes are scanned)."""
    wanted = _names_of(rel, text)
    found: list[str] = []
    scanned = 0
    for other in vault.list_dir("", recursive=True).entries:
        if not other.endswith(".md") or other == rel:
            continue
        scanned += 1
        if scanned > MAX_BACKLINK_SCAN:
            break
        try:
            body = vault.read(other)
        except (InvalidInput, NotFound):
            continue
        for m in _WIKILINK.finditer(body):
            target = parse_link("[[" + m.group(1) + "]]").target
            if link_key(target) in wanted or link_key(target.removesuffix(".md")) in wanted:
                found.append(other)
                break
    return found


def _notes_page(
    request: Request, who: Viewer, *, status: int = 200, error: str | None = None, path: str = ""
) -> Response:
    listing = who.caller.memory.vault.list_dir("", recursive=True)
    return page(
        request,
        "notes.html",
        who,
        status=status,
        title="Notes",
        active="notes",
        rows=_tree(listing.entries),
        truncated=listing.truncated,
        error=error,
        newpath=path,
    )


@router.get("")
@admits(RouteClass.READ)
def notes(request: Request, who: ViewerDep) -> Response:
    return _notes_page(request, who)


@router.get("/view")
@admits(RouteClass.READ)
def view(request: Request, who: ViewerDep, path: NotePath) -> Response:
    vault = who.caller.memory.vault
    rel = vault.locate(path).rel
    text = vault.read(rel)
    return page(
        request,
        "note.html",
        who,
        title=rel,
        active="notes",
        path=rel,
        text=text,
        backlinks=backlinks(vault, rel, text),
    )


@router.get("/link")
@admits(RouteClass.READ)
def follow(
    request: Request, who: ViewerDep, to: Annotated[str, Query(min_length=1, max_length=500)]
) -> Response:
    """Resolve a wikilink target as the vault does (`go_to_link`) and open the note."""
    found = who.caller.memory.vault.go_to_link(f"[[{to}]]")
    return go(f"/ui/notes/view?path={_quote(found.path)}")


def _quote(value: str) -> str:
    from urllib.parse import quote

    return quote(value, safe="/")


@router.get("/edit")
@admits(RouteClass.READ)
def edit(request: Request, who: ViewerDep, path: NotePath) -> Response:
    vault = who.caller.memory.vault
    try:
        loc = vault.locate(path)
        if loc.kind == "dir":
            raise InvalidInput(
                f"{loc.rel} is a folder; name a note inside it, like {loc.rel}/new.md"
            )
    except InvalidInput as exc:
        # A refused path (outside the vault, not markdown…) is said on the Notes page.
        return _notes_page(
            request, who, status=400, error=f"Cannot use that path: {exc}", path=path
        )
    text = vault.read(loc.rel) if loc.kind == "file" else ""
    return page(
        request,
        "note_edit.html",
        who,
        title=f"Edit {loc.rel}",
        active="notes",
        path=loc.rel,
        text=text,
        base=_hash(text) if loc.kind == "file" else "new",
        conflict=None,
    )


@router.post("/save")
@admits(RouteClass.WRITE)
async def save(request: Request, who: ViewerDep) -> Response:
    form = await checked_form(request, who)
    memory = who.caller.memory
    path = one(form, "path", limit=1000)
    content = one(form, "content", limit=memory.home.config.limits.max_file_bytes)
    base = one(form, "base", limit=100)
    vault = memory.vault
    loc = vault.locate(path)
    with vault.lock():  # the vault's write lock (the home's, or the database's)
        exists = loc.kind == "file" or vault.exists(loc.rel)
        current = vault.read(loc.rel) if exists else None
        now = _hash(current) if current is not None else "new"
        if now != base:
            message = (
                "This note changed since you opened it (someone or something else saved "
                "it). Nothing was overwritten: your text is below; compare it with the "
                "current note and save again."
            )
            return page(
                request,
                "note_edit.html",
                who,
                status=409,
                title=f"Edit {loc.rel}",
                active="notes",
                path=loc.rel,
                text=content,
                base=now,
                conflict=message,
                current=current,
            )
        memory.write_note(loc.rel, content)
    return go(f"/ui/notes/view?path={_quote(loc.rel)}", "Saved.")
