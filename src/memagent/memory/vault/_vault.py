"""The markdown vault: safe, size-capped file operations inside `home/vault`.

Every path is untrusted (it usually comes from an LLM) and goes through
`_paths.locate`; every write goes through `home.storage` (atomic, locked,
logged with actor "vault" unless told otherwise). Methods return plain values
or the typed results of `_results` (each with its JSON form), or raise
`memagent.core` errors whose messages are meant for the LLM.

Every change goes through four storage hooks (`_write`, `_remove`, `_make_dir`,
`_remove_dir`): a backend (`memagent.postgres.PgVault`) overrides them, and the
journal that rolls a failed batch back (`JournaledVault`) wraps them, so an
operation added here is stored and journaled on every backend with no more code.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import stat
import threading
import time
from collections.abc import Hashable, Iterator, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import regex

from memagent.core import Conflict, InvalidInput, MemoryHome, NotFound, PathRejected
from memagent.core.deadline import bounded, check_deadline
from memagent.core.storage import TMP_PREFIX
from memagent.memory.vault import _links
from memagent.memory.vault._paths import Located, locate, normalize
from memagent.memory.vault._results import (
    DirMade,
    FileAppended,
    FileCreated,
    FileDeleted,
    FileUpdated,
    LinkedNote,
    Listing,
    SearchMatch,
    SearchResults,
)

REGEX_TIMEOUT_S = 1.0
"""The budget of one whole search (all files, all lines)."""
_REGEX_RUNNING: dict[Hashable, threading.Lock] = {}
_REGEX_GUARD = threading.Lock()


def _too_slow(rel: str, lineno: int, regex_mode: bool) -> str:
    where = f"the search took longer than {REGEX_TIMEOUT_S:g}s (stopped at '{rel}' line {lineno})"
    if regex_mode:
        return f"{where}; simplify the regex (avoid nested repetition like (a+)+)"
    return f"{where}; narrow the path"


@contextlib.contextmanager
def _one_regex_search(root: Hashable, *, active: bool) -> Iterator[None]:
    """One regex search at a time per memory home: a regex can burn a whole core
    for its budget, so one user's searches never take more than one."""
    if not active:
        yield
        return
    with _REGEX_GUARD:
        lock = _REGEX_RUNNING.setdefault(root, threading.Lock())
    if not lock.acquire(timeout=bounded(REGEX_TIMEOUT_S)):
        raise InvalidInput("another regex search of this memory is still running; retry after it")
    try:
        yield
    finally:
        lock.release()


MAX_QUERY_CHARS = 1000
MAX_LINK_CHARS = 2000
_SNIPPET_CHARS = 300


def _text_of(data: bytes, rel: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInput(f"'{rel}' is not a UTF-8 text file") from None


class Vault:
    """File operations on one memory home's vault, confined to it."""

    def __init__(self, home: MemoryHome, *, actor: str = "vault") -> None:
        self.home = home
        self.dir = home.layout.vault
        self.actor = actor
        self.storage = home.storage
        self.max_bytes = home.config.limits.max_file_bytes
        self.max_results = home.config.limits.max_search_results
        self.max_entries = home.config.limits.max_list_entries
        self._real_root: Path | None = None

    # -- paths -------------------------------------------------------------------
    @property
    def real_root(self) -> Path:
        if self._real_root is None:
            if not self.dir.is_dir():
                raise NotFound(f"no vault at {self.dir} (run `memagent init`)")
            self._real_root = Path(os.path.realpath(self.dir))
        return self._real_root

    def locate(self, path: object) -> Located:
        """Where an untrusted path lives; `PathRejected` if it may not be touched."""
        return locate(self.dir, self.real_root, path)

    @staticmethod
    def normalize(path: object) -> str:
        return normalize(path)

    def _file(self, path: object) -> Located:
        loc = self.locate(path)
        if loc.kind is None:
            raise NotFound(f"'{loc.rel}' does not exist{self._suggest(loc.rel)}")
        if loc.kind != "file":
            raise InvalidInput(f"'{loc.rel or '/'}' is a folder, not a file")
        return loc

    def _suggest(self, rel: str) -> str:
        names = [p for p, _ in self._walk("", limit=2000)]
        close = difflib.get_close_matches(rel, names, n=3, cutoff=0.6)
        return f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""

    def _read_bytes(self, loc: Located) -> bytes:
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK
        try:
            fd = os.open(loc.path, flags)
        except FileNotFoundError:
            raise NotFound(f"'{loc.rel}' does not exist") from None
        except OSError as exc:
            raise PathRejected(f"'{loc.rel}' cannot be opened ({exc.strerror})") from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise PathRejected(f"'{loc.rel}' is not a regular file")
            if st.st_size > self.max_bytes:
                raise InvalidInput(
                    f"'{loc.rel}' is {st.st_size} bytes; the limit is {self.max_bytes}"
                )
            chunks: list[bytes] = []
            remaining = self.max_bytes + 1
            while remaining > 0:
                chunk = os.read(fd, min(remaining, 1 << 20))
                if not chunk:
                    break
                chunks.append(chunk)
                remaining -= len(chunk)
            data = b"".join(chunks)
        finally:
            os.close(fd)
        if len(data) > self.max_bytes:
            raise InvalidInput(f"'{loc.rel}' is over the limit of {self.max_bytes} bytes")
        return data

    def _check_content(self, content: object, what: str = "content") -> bytes:
        if not isinstance(content, str):
            raise InvalidInput(f"{what} must be a string, got {type(content).__name__}")
        try:
            data = content.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidInput(f"{what} is not valid Unicode text") from None
        if len(data) > self.max_bytes:
            raise InvalidInput(f"{what} is {len(data)} bytes; the limit is {self.max_bytes}")
        return data

    # -- storage hooks (files here; `memagent.postgres.PgVault` overrides them) ----
    def _lock(self) -> AbstractContextManager[Any]:
        """Held around a read-modify-write of the vault."""
        return self.storage.lock()

    def _regex_scope(self) -> Hashable:
        """Whose regex searches run one at a time: this memory home's."""
        return self.storage.root

    def holds_lock(self) -> bool:
        """Whether this thread holds the vault's lock (so its work must stay here)."""
        return self.storage.holds_lock()

    def owner_key(self) -> str:
        """Whose share of shared workers this vault's batches use: one key per
        memory home (files) or per user of a database; stable across instances."""
        return f"files:{self.storage.root}"

    def _write(self, loc: Located, data: bytes, op: str, meta: Mapping[str, str] | None) -> None:
        self.storage.write_bytes(loc.path, data, actor=self.actor, op=op, meta=meta)

    def _remove(self, loc: Located, op: str, meta: Mapping[str, str] | None) -> None:
        try:
            self.storage.delete(loc.path, actor=self.actor, op=op, meta=meta)
        except FileNotFoundError:
            raise NotFound(f"'{loc.rel}' does not exist") from None

    def _make_dir(self, loc: Located) -> None:
        self.storage.mkdir(loc.path, actor=self.actor, op="mkdir")

    def _remove_dir(self, loc: Located, op: str) -> None:
        """Remove an empty folder (`OSError` when it is not empty)."""
        self.storage.rmdir(loc.path, actor=self.actor, op=op)

    def _size(self, loc: Located) -> int:
        return os.stat(loc.path).st_size

    # -- reading -----------------------------------------------------------------
    def read(self, path: str) -> str:
        """The file's text (UTF-8, at most `limits.max_file_bytes`)."""
        loc = self._file(path)
        return _text_of(self._read_bytes(loc), loc.rel)

    def exists(self, path: str) -> bool:
        return self.locate(path).kind == "file"

    def dir_exists(self, path: str) -> bool:
        return self.locate(path).kind == "dir"

    def size(self, path: str) -> int:
        return self._size(self._file(path))

    def list_dir(self, path: str = "", *, recursive: bool = False) -> Listing:
        """Entries under a folder, vault-relative, folders ending in '/'."""
        loc = self.locate(path)
        if loc.kind is None:
            raise NotFound(f"folder '{loc.rel}' does not exist")
        if loc.kind != "dir":
            raise InvalidInput(f"'{loc.rel}' is a file, not a folder")
        entries: list[str] = []
        truncated = False
        for rel, kind in self._walk(loc.rel, recursive=recursive, limit=self.max_entries + 1):
            entries.append(rel + "/" if kind == "dir" else rel)
        if len(entries) > self.max_entries:
            entries = entries[: self.max_entries]
            truncated = True
        return Listing(loc.rel + "/" if loc.rel else "/", entries, truncated)

    def _walk(
        self, start: str, *, recursive: bool = True, limit: int | None = None
    ) -> Iterator[tuple[str, str]]:
        """(vault-relative path, "file"|"dir") under `start` in sorted pre-order,
        never leaving the vault: links are followed only when they stay inside,
        special and temp files are skipped, each real folder is visited once."""
        count = 0
        real_root = self.real_root
        first = Path(os.path.realpath(self.locate(start).path))
        seen: set[Path] = {first}
        stack: list[Iterator[tuple[str, Path]]] = [self._children(start, first)]
        while stack:
            item = next(stack[-1], None)
            if item is None:
                stack.pop()
                continue
            rel, full = item
            try:
                st = os.lstat(full)
                if stat.S_ISLNK(st.st_mode):
                    full = Path(os.path.realpath(full))
                    if not full.is_relative_to(real_root):
                        continue
                    st = os.stat(full)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                yield rel, "dir"
                if recursive and full not in seen:
                    seen.add(full)
                    stack.append(self._children(rel, full))
            elif stat.S_ISREG(st.st_mode):
                yield rel, "file"
            else:
                continue
            count += 1
            if limit is not None and count >= limit:
                return

    @staticmethod
    def _children(rel_dir: str, real_dir: Path) -> Iterator[tuple[str, Path]]:
        try:
            names = sorted(os.listdir(real_dir))
        except OSError:
            return
        for name in names:
            if not name.startswith(TMP_PREFIX):
                yield (f"{rel_dir}/{name}" if rel_dir else name), real_dir / name

    def search(
        self,
        query: str,
        *,
        path: str = "",
        regex_mode: bool = False,
        case_sensitive: bool = False,
        max_results: int | None = None,
    ) -> SearchResults:
        """Lines matching a substring (or a regex, with a time limit) in text files."""
        if not isinstance(query, str) or not query:
            raise InvalidInput("query must be a non-empty string")
        if len(query) > MAX_QUERY_CHARS:
            raise InvalidInput(f"query is {len(query)} characters; at most {MAX_QUERY_CHARS}")
        cap = min(max_results or self.max_results, self.max_results)
        flags = 0 if case_sensitive else regex.IGNORECASE
        try:
            pattern = regex.compile(query if regex_mode else regex.escape(query), flags)
        except regex.error as exc:
            raise InvalidInput(f"query is not a valid regex: {exc}") from None
        loc = self.locate(path)
        if loc.kind is None:
            raise NotFound(f"'{loc.rel}' does not exist")
        if loc.kind == "file":
            files = [loc.rel]
        else:
            files = [rel for rel, kind in self._walk(loc.rel) if kind == "file"]
        with _one_regex_search(self._regex_scope(), active=regex_mode):
            matches: list[SearchMatch] = []
            truncated = False
            # One budget for the whole search (never per line), shortened by the
            # request's own deadline when there is one.
            end = time.monotonic() + bounded(REGEX_TIMEOUT_S)
            for rel in files:
                check_deadline("the search")
                try:
                    text = self.read(rel)
                except (InvalidInput, NotFound):
                    continue
                for lineno, line in enumerate(text.splitlines(), 1):
                    left = end - time.monotonic()
                    try:
                        if left <= 0:
                            raise TimeoutError
                        hit = pattern.search(line, timeout=left, concurrent=True)  # frees the GIL
                    except TimeoutError:
                        raise InvalidInput(_too_slow(rel, lineno, regex_mode)) from None
                    if hit:
                        if len(matches) >= cap:
                            truncated = True
                            break
                        matches.append(SearchMatch(rel, lineno, line[:_SNIPPET_CHARS]))
                if truncated:
                    break
        return SearchResults(matches, truncated)

    def go_to_link(self, link: str) -> LinkedNote:
        """Resolve a wikilink; the note (or the linked section/block) and its path."""
        if not isinstance(link, str):
            raise InvalidInput("link must be a string like [[Jane Doe]]")
        if len(link) > MAX_LINK_CHARS:
            raise InvalidInput(f"link is {len(link)} characters; at most {MAX_LINK_CHARS}")
        wl = _links.parse_link(link)
        target = wl.target
        paths = self._link_candidates(target)
        if not paths:
            names = [p.removesuffix(".md") for p, k in self._walk("") if k == "file"]
            close = difflib.get_close_matches(target, names, n=3, cutoff=0.5)
            hint = f"; did you mean {', '.join('[[' + c + ']]' for c in close)}?" if close else ""
            raise NotFound(f"no note matches [[{target}]]{hint}")
        rel = paths[0]
        text = self.read(rel)
        title, _ = _links.title_and_aliases(text)
        content = text
        if wl.headings:
            part = _links.section(text, wl.headings)
            if part is None:
                shown = "#".join(wl.headings)
                raise NotFound(f"note '{rel}' has no heading '{shown}'")
            content = part
        elif wl.block:
            part = _links.block(text, wl.block)
            if part is None:
                raise NotFound(f"note '{rel}' has no block '^{wl.block}'")
            content = part
        heading = "#".join(wl.headings) or None
        return LinkedNote(rel, title, heading, wl.block, wl.alias, content, paths[1:6])

    def _link_candidates(self, target: str) -> list[str]:
        # A direct path first (Obsidian: a link with folders is a path from the root).
        for cand in (target, target + ".md"):
            with contextlib.suppress(PathRejected):
                loc = self.locate(cand)
                if loc.kind == "file":
                    return [loc.rel]
        files = [rel for rel, kind in self._walk("") if kind == "file"]
        notes: list[tuple[str, str | None, list[str]]] = [(p, None, []) for p in files]
        ranked = _links.rank_candidates(target, notes)
        if ranked or "/" in target:
            return ranked
        with_titles: list[tuple[str, str | None, list[str]]] = []
        for rel in files:
            if not rel.endswith(".md"):
                continue
            try:
                title, aliases = _links.title_and_aliases(self.read(rel))
            except (InvalidInput, NotFound):
                continue
            with_titles.append((rel, title, aliases))
        return _links.rank_candidates(target, with_titles)

    # -- writing -----------------------------------------------------------------
    def create(self, path: str, content: str) -> FileCreated:
        """Create a new file (and its folders). `Conflict` if it exists."""
        data = self._check_content(content)
        with self._lock():
            loc = self.locate(path)
            if not loc.rel:
                raise InvalidInput("path is the vault root; name a file, e.g. 'notes/idea.md'")
            if loc.kind is not None:
                what = "file" if loc.kind == "file" else "folder"
                raise Conflict(
                    f"'{loc.rel}' already exists as a {what}; use update_file or append_file"
                )
            self._write(loc, data, "create", None)
        return FileCreated(loc.rel, len(data))

    def update(self, path: str, old_content: str, new_content: str) -> FileUpdated:
        """Replace the first occurrence of `old_content` with `new_content`."""
        if not isinstance(old_content, str) or not old_content:
            raise InvalidInput("old_content must be a non-empty string copied from the file")
        self._check_content(old_content, "old_content")
        self._check_content(new_content, "new_content")
        with self._lock():
            loc = self._file(path)
            text = _text_of(self._read_bytes(loc), loc.rel)
            count = text.count(old_content)
            if count == 0:
                raise NotFound(
                    f"old_content was not found in '{loc.rel}'; read_file it first and "
                    "copy the exact text (whitespace and line breaks included)"
                )
            new_text = text.replace(old_content, new_content, 1)
            data = self._check_content(new_text, f"'{loc.rel}' after the update")
            if new_text != text:
                meta = {"old_content": old_content, "new_content": new_content}
                self._write(loc, data, "update", meta)
        return FileUpdated(loc.rel, len(data), count)

    def append(self, path: str, content: str) -> FileAppended:
        """Append to a file (created if missing), starting on a new line."""
        self._check_content(content)
        with self._lock():
            loc = self.locate(path)
            if not loc.rel:
                raise InvalidInput("path is the vault root; name a file")
            if loc.kind == "dir":
                raise InvalidInput(f"'{loc.rel}' is a folder, not a file")
            text = _text_of(self._read_bytes(loc), loc.rel) if loc.kind == "file" else ""
            sep = "\n" if text and not text.endswith("\n") and content else ""
            new_text = text + sep + content
            data = self._check_content(new_text, f"'{loc.rel}' after appending")
            self._write(loc, data, "append" if loc.kind else "create", {"appended": content})
        return FileAppended(loc.rel, len(data), loc.kind is None)

    def delete(self, path: str) -> FileDeleted:
        with self._lock():
            loc = self._file(path)
            text_meta: dict[str, str] | None = None
            with contextlib.suppress(InvalidInput):
                text_meta = {"content": _text_of(self._read_bytes(loc), loc.rel)}
            self._remove(loc, "delete", text_meta)
        return FileDeleted(loc.rel)

    def mkdir(self, path: str) -> DirMade:
        """Create a folder (and parents). Existing folders are fine."""
        with self._lock():
            loc = self.locate(path)
            if loc.kind == "dir":
                return DirMade(loc.rel + "/", False)
            if loc.kind == "file":
                raise Conflict(f"'{loc.rel}' is a file; cannot make a folder there")
            self._make_dir(loc)
        return DirMade(loc.rel + "/", True)

    # -- for callers outside the vault: its lock, and whole-vault copies -------------
    def lock(self) -> AbstractContextManager[Any]:
        """The lock the vault's own writes take (the home's, or the database's), for a
        caller's read-modify-write over several operations (an editor's save, a move)."""
        return self._lock()

    def walk(self, start: str = "") -> Iterator[tuple[str, str]]:
        """(vault path, "file" or "dir") of everything under `start`, in sorted
        pre-order, never leaving the vault."""
        return self._walk(start)

    def read_bytes(self, path: str) -> bytes:
        """A file's bytes as stored (at most `limits.max_file_bytes`), text or not."""
        return self._read_bytes(self._file(path))

    def write_bytes(self, path: str, data: bytes, *, op: str) -> str:
        """Write a file's bytes as they are, logged as `op`: a copy from another
        memory home (`memagent.postgres.transfer`). Returns its vault path."""
        if len(data) > self.max_bytes:
            raise InvalidInput(f"'{path}' is {len(data)} bytes; the limit is {self.max_bytes}")
        with self._lock():
            loc = self.locate(path)
            if not loc.rel or loc.kind == "dir":
                raise InvalidInput(f"'{loc.rel or '/'}' is a folder, not a file")
            self._write(loc, data, op, None)
        return loc.rel
