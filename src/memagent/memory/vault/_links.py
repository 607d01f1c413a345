"""Obsidian-style wikilinks: parsing `[[target#heading|alias]]` and resolving it.

Resolution follows Obsidian: a target with folders (`entities/jane_doe`) is a
path (with or without `.md`), matched from the vault root or as a path suffix;
a bare name (`Jane Doe`) matches a note's file name, then its `# Title` or its
front-matter `aliases`. Matching is case-insensitive and treats spaces,
underscores and hyphens alike. Among several matches the shortest path wins.
`#heading` selects that section (down to the next heading of the same or a
higher level; `#a#b` is a nested heading path); `#^id` selects a block.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import yaml

from memagent.core.errors import InvalidInput

_LINK = re.compile(r"^!?\[\[(?P<body>[^\[\]]*)\]\]$")
_HEADING = re.compile(r"^(?P<hashes>#{1,6})[ \t]+(?P<text>.*?)[ \t#]*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_SEP = re.compile(r"[\s_\-]+")


@dataclass(frozen=True)
class WikiLink:
    target: str
    headings: tuple[str, ...]
    block: str | None
    alias: str | None


def parse_link(raw: str) -> WikiLink:
    """`[[target#heading|alias]]` (brackets optional) into its parts."""
    text = raw.strip()
    m = _LINK.match(text)
    if m:
        body = m.group("body")
    elif "[[" in text or "]]" in text:
        raise InvalidInput(
            f"link {text[:80]!r} is not a wikilink; write it like [[entities/jane_doe]] "
            "or [[Jane Doe#Work|Jane]]"
        )
    else:
        body = text
    alias: str | None = None
    if "|" in body:
        body, alias = body.split("|", 1)
        alias = alias.strip() or None
    target, _, anchor = body.partition("#")
    target = target.strip()
    if not target:
        raise InvalidInput(f"link {text[:80]!r} names no note; e.g. [[Jane Doe]]")
    block: str | None = None
    headings: tuple[str, ...] = ()
    if anchor:
        if anchor.startswith("^"):
            block = anchor[1:].strip() or None
        else:
            headings = tuple(h.strip() for h in anchor.split("#") if h.strip())
    return WikiLink(target=target, headings=headings, block=block, alias=alias)


def key(text: str) -> str:
    """Comparison key: case-folded, spaces/underscores/hyphens collapsed."""
    return _SEP.sub(" ", text.strip()).casefold()


def title_and_aliases(text: str) -> tuple[str | None, list[str]]:
    """A note's first `# Title` and its front-matter `aliases` (Obsidian)."""
    aliases: list[str] = []
    body = text
    if text.startswith("---\n"):
        end = text.find("\n---", 4)
        if end != -1:
            try:
                meta = yaml.safe_load(text[4:end])
            except yaml.YAMLError:
                meta = None
            if isinstance(meta, dict):
                raw = meta.get("aliases", meta.get("alias"))
                if isinstance(raw, str):
                    aliases = [raw]
                elif isinstance(raw, list):
                    aliases = [str(a) for a in raw if isinstance(a, str | int | float)]
            body = text[end + 4 :]
    for line in _lines_outside_fences(body.splitlines()):
        m = _HEADING.match(line[1])
        if m and len(m.group("hashes")) == 1:
            return m.group("text"), aliases
    return None, aliases


def _lines_outside_fences(lines: Iterable[str]) -> Iterable[tuple[int, str]]:
    in_fence = False
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if not in_fence:
            yield i, line


def section(text: str, headings: tuple[str, ...]) -> str | None:
    """The section under a heading path, heading line included; None if absent."""
    lines = text.splitlines(keepends=True)
    plain = [ln.rstrip("\r\n") for ln in lines]
    start = 0
    level = 0
    found = -1
    for wanted in headings:
        found = -1
        for i, line in _lines_outside_fences(plain[start:]):
            m = _HEADING.match(line)
            if not m:
                continue
            lvl = len(m.group("hashes"))
            if found == -1 and lvl > level and key(m.group("text")) == key(wanted):
                found = start + i
                level = lvl
                break
        if found == -1:
            return None
        start = found + 1
    end = len(lines)
    for i, line in _lines_outside_fences(plain[start:]):
        m = _HEADING.match(line)
        if m and len(m.group("hashes")) <= level:
            end = start + i
            break
    return "".join(lines[found:end])


def block(text: str, block_id: str) -> str | None:
    """The paragraph (or list item line) that ends with `^block_id`."""
    marker = re.compile(r"(^|\s)\^" + re.escape(block_id) + r"\s*$")
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if not marker.search(line):
            continue
        stripped = line.lstrip()
        if stripped.startswith(("- ", "* ", "+ ")) or re.match(r"\d+[.)] ", stripped):
            return line
        first = i
        while first > 0 and lines[first - 1].strip() and not _HEADING.match(lines[first - 1]):
            first -= 1
        return "\n".join(lines[first : i + 1])
    return None


def rank_candidates(target: str, notes: Iterable[tuple[str, str | None, list[str]]]) -> list[str]:
    """Paths (best first) that `target` names; `notes` gives (path, title, aliases).

    Path-like targets match by path (whole, or as a suffix); bare names by file
    name first, then by title or alias.
    """
    want = key(target.removesuffix(".md"))
    by_path: list[str] = []
    by_name: list[str] = []
    by_title: list[str] = []
    has_folder = "/" in target.strip("/")
    for path, title, aliases in notes:
        stem_path = path.removesuffix(".md") if path.endswith(".md") else path
        full = key(stem_path)
        if has_folder:
            if full == want or full.endswith("/" + want):
                by_path.append(path)
            continue
        name = stem_path.rsplit("/", 1)[-1]
        if key(name) == want or key(path.rsplit("/", 1)[-1]) == key(target):
            by_name.append(path)
        elif (title is not None and key(title) == want) or any(key(a) == want for a in aliases):
            by_title.append(path)

    def order(paths: list[str]) -> list[str]:
        return sorted(paths, key=lambda p: (p.count("/"), len(p), p))

    return order(by_path) + order(by_name) + order(by_title)
