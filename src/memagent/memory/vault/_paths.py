"""Turning an untrusted vault path into a real file-system path, or refusing it.

Two stages. `normalize` is lexical: it rejects NUL and control characters,
absolute paths, backslashes, `..` segments, the storage layer's `.tmp-*` temp
names and over-long names, and returns the canonical relative form
(`entities/jane_doe.md`; `""` is the vault root). `locate` then walks the file
system: every symlink on the way is resolved and must stay inside the vault
(compared with `Path.is_relative_to`, never string prefixes), and an existing
target must be a regular file or a folder (never a fifo, socket or device).
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from memagent.core.errors import PathRejected
from memagent.core.storage import TMP_PREFIX

MAX_NAME_BYTES = 255
MAX_PATH_BYTES = 1024
MAX_DEPTH = 32
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _show(raw: str) -> str:
    text = raw if len(raw) <= 80 else raw[:77] + "..."
    return repr(text)


def normalize(raw: object) -> str:
    """The canonical relative form of `raw`, or `PathRejected` saying why."""
    if not isinstance(raw, str):
        raise PathRejected(f"path must be a string, got {type(raw).__name__}")
    if "\x00" in raw:
        raise PathRejected(f"path {_show(raw)} contains a NUL byte")
    if _CONTROL.search(raw):
        raise PathRejected(f"path {_show(raw)} contains a control character")
    try:
        encoded = raw.encode("utf-8")
    except UnicodeEncodeError:
        raise PathRejected(f"path {_show(raw)} is not valid Unicode text") from None
    if len(encoded) > MAX_PATH_BYTES:
        raise PathRejected(f"path is too long ({len(encoded)} bytes; at most {MAX_PATH_BYTES})")
    if "\\" in raw:
        raise PathRejected(f"path {_show(raw)} contains a backslash; use '/' between folders")
    if raw.startswith("/") or (len(raw) >= 2 and raw[1] == ":" and raw[0].isalpha()):
        raise PathRejected(
            f"path {_show(raw)} is absolute; give it relative to the vault, e.g. 'user.md'"
        )
    if raw.startswith("~"):
        raise PathRejected(f"path {_show(raw)} starts with '~'; give it relative to the vault")
    parts: list[str] = []
    for part in raw.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            raise PathRejected(f"path {_show(raw)} contains '..'; paths stay inside the vault")
        if len(part.encode("utf-8")) > MAX_NAME_BYTES:
            raise PathRejected(f"a name in path {_show(raw)} is longer than {MAX_NAME_BYTES} bytes")
        if part.startswith(TMP_PREFIX):
            raise PathRejected(f"path {_show(raw)} names a temporary file ('{TMP_PREFIX}*')")
        parts.append(part)
    if len(parts) > MAX_DEPTH:
        raise PathRejected(f"path {_show(raw)} is nested deeper than {MAX_DEPTH} folders")
    return "/".join(parts)


@dataclass(frozen=True)
class Located:
    """Where a vault path really lives.

    `rel` is the canonical path as the caller named it; `real_rel` the same file
    after following symlinks inside the vault; `path` is `vault_dir / real_rel`,
    which contains no symlinks (so writes replace the file, never a link).
    `kind` is "file", "dir" or None when nothing exists there yet.
    """

    rel: str
    real_rel: str
    path: Path
    kind: str | None


def _kind(mode: int, rel: str) -> str:
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "dir"
    raise PathRejected(f"'{rel}' is a special file (fifo, socket or device); refusing to touch it")


def locate(vault_dir: Path, real_root: Path, raw: object) -> Located:
    """Normalize `raw` and resolve it inside the vault, following inside links only.

    `real_root` is `vault_dir` with its own symlinks resolved (the vault itself
    may live under a linked folder). Missing trailing components are fine
    (the target may be about to be created); an existing non-folder in the
    middle of the path is not.
    """
    rel = normalize(raw)
    root = str(real_root)
    current = root
    parts = rel.split("/") if rel else []
    kind: str | None = "dir"
    for i, part in enumerate(parts):
        candidate = os.path.join(current, part)
        try:
            st = os.lstat(candidate)
        except FileNotFoundError:
            return _located(rel, vault_dir, root, os.path.join(current, *parts[i:]), None)
        except OSError as exc:
            raise PathRejected(f"'{rel}': cannot inspect it ({exc.strerror})") from None
        if stat.S_ISLNK(st.st_mode):
            target = os.path.realpath(candidate)
            if target != root and not Path(target).is_relative_to(real_root):
                raise PathRejected(f"'{rel}' goes through a symlink that leads outside the vault")
            candidate = target
            try:
                st = os.stat(candidate)
            except OSError:
                if i == len(parts) - 1:
                    raise PathRejected(f"'{rel}' is a broken symlink") from None
                raise PathRejected(f"'{rel}' goes through a broken symlink") from None
        kind = _kind(st.st_mode, rel)
        if i < len(parts) - 1 and kind != "dir":
            shown = "/".join(parts[: i + 1])
            raise PathRejected(f"'{rel}': '{shown}' is a file, not a folder")
        current = candidate
    return _located(rel, vault_dir, root, current, kind)


def _located(rel: str, vault_dir: Path, root: str, real: str, kind: str | None) -> Located:
    real_rel = real[len(root) + 1 :] if real != root else ""
    path = vault_dir / real_rel if real_rel else vault_dir
    return Located(rel=rel, real_rel=real_rel, path=path, kind=kind)
