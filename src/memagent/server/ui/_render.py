"""Rendering: the Jinja environment, and markdown made safe to show.

Markdown goes through markdown-it (CommonMark, raw HTML off: a `<script>` in a
note is shown as text), `[[wikilinks]]` become links to `/ui/notes/link`, and
the HTML is then sanitized by nh3 with an allow-list (no scripts, no `on*`
attributes, links only to http, https, mailto or this site). Everything else a
template shows is autoescaped by Jinja.
"""

from __future__ import annotations

import functools
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import nh3
from jinja2 import Environment, FileSystemLoader, select_autoescape
from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markupsafe import Markup

HERE = Path(__file__).resolve().parent
MAX_RENDER_CHARS = 400_000

_TAGS = {
    "a", "abbr", "b", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4",
    "h5", "h6", "hr", "i", "img", "li", "ol", "p", "pre", "s", "strong", "sub", "sup",
    "table", "tbody", "td", "th", "thead", "tr", "ul",
}  # fmt: skip
_ATTRIBUTES = {"a": {"href", "title", "class"}, "img": {"src", "alt", "title"}, "th": {"style"}}


def _wikilink_rule(state: StateInline, silent: bool) -> bool:
    """`[[target|alias]]` (also `[[target#heading]]`) as a `wikilink` token."""
    src, pos = state.src, state.pos
    if not src.startswith("[[", pos):
        return False
    end = src.find("]]", pos + 2)
    if end < 0:
        return False
    inner = src[pos + 2 : end]
    if not inner.strip() or "\n" in inner or "[" in inner or len(inner) > 500:
        return False
    if not silent:
        target, _, alias = inner.partition("|")
        token = state.push("wikilink", "", 0)
        token.meta = {"target": target.strip(), "label": (alias or target).strip()}
    state.pos = end + 2
    return True


def _render_wikilink(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    meta = tokens[idx].meta
    href = "/ui/notes/link?to=" + quote(meta["target"], safe="")
    label = str(Markup.escape(meta["label"]))
    return f'<a class="wikilink" href="{href}">{label}</a>'


@functools.cache
def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False})
    md.enable("table").enable("strikethrough")
    md.inline.ruler.before("link", "wikilink", _wikilink_rule)
    md.add_render_rule("wikilink", _render_wikilink)
    return md


def sanitize(html: str) -> str:
    return nh3.clean(
        html,
        tags=_TAGS,
        attributes=_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
        strip_comments=True,
    )


def render_markdown(text: str) -> Markup:
    """Safe HTML for a note, a chunk or anything a person or a model wrote."""
    if len(text) > MAX_RENDER_CHARS:
        text = text[:MAX_RENDER_CHARS] + "\n\n… (cut: too long to show here)"
    return Markup(sanitize(_markdown().render(text)))


def short_time(value: str | None) -> str:
    if not value:
        return ""
    try:
        dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return value[:19]
    return dt.astimezone(UTC).strftime("%Y-%m-%d %H:%M")


def clock(value: str | None) -> str:
    """`20:55` (UTC, as `when`): the time of day, under a heading that names the day."""
    return short_time(value)[11:16]


def day_name(value: str | None, today: date | None = None) -> str:
    """`Today`, `Yesterday`, else `8 May 2023`, for a `YYYY-MM-DD` day."""
    try:
        day = date.fromisoformat((value or "")[:10])
    except ValueError:
        return "Undated"
    now = today or datetime.now(UTC).date()
    if day == now:
        return "Today"
    if (now - day).days == 1:
        return "Yesterday"
    return f"{day.day} {day:%B %Y}"


MEMORY_KINDS = {
    "decision": "Memory · decision",
    "pattern": "Memory · habit",
    "preference": "Memory · preference",
    "fact": "Memory · fact",
}


def memory_kind(type_: str | None) -> str:
    """A memory's type in the words a person uses (`note`, the default, is just Memory)."""
    return MEMORY_KINDS.get(type_ or "", "Memory")


def clip(value: Any, n: int = 160) -> str:
    text = "" if value is None else str(value)
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


@functools.cache
def environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
        auto_reload=False,  # templates ship with the package; no stat per page
    )
    env.filters["markdown"] = render_markdown
    env.filters["when"] = short_time
    env.filters["clip"] = clip
    env.filters["clock"] = clock
    env.filters["dayname"] = day_name
    env.filters["memorykind"] = memory_kind
    env.filters["q"] = lambda v: quote(str(v), safe="")
    env.filters["qpath"] = lambda v: quote(str(v), safe="/")
    return env
