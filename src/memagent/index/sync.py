"""Keeping the index in agreement with the files, cheaply.

Files are the source of truth. On open, `sync` compares what the index recorded
(path, mtime_ns, size) with the files and re-indexes only what differs — that is
how hand-edited notes, profile changes and chunk files written by another
process are picked up, without the stores ever calling the index.

Chunk files are only ever written by atomic rename, which changes their date
folder's mtime, so chunks are checked per folder (one `stat` per day) and a
folder's files are listed only when its mtime moved. Notes and profile
resources are few and may be edited in place, so each file is stat-ed.
A file re-indexed with the same text keeps its vectors (`kept_vectors`): a home
copied or restored without its file times is not embedded again.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from memagent.core import Layout
from memagent.core.storage import TMP_PREFIX
from memagent.index.documents import (
    CHUNK,
    FACT,
    NOTE,
    Doc,
    chunk_doc,
    fact_docs,
    load_json,
    note_doc,
)
from memagent.index.sqlite import Index
from memagent.index.vectors import Vector

Progress = Callable[[int, int], None]


@dataclass
class SyncReport:
    """What a sync changed (paths relative to the home)."""

    indexed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.indexed or self.removed)


def _visible(name: str) -> bool:
    return not name.startswith(".") and not name.startswith(TMP_PREFIX)


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def _note_files(vault: Path) -> Iterator[Path]:
    if not vault.is_dir():
        return
    for dirpath, dirnames, filenames in os.walk(vault, followlinks=False):
        dirnames[:] = [d for d in dirnames if _visible(d)]
        for name in filenames:
            if name.endswith(".md") and _visible(name):
                p = Path(dirpath) / name
                if not p.is_symlink():
                    yield p


def _profile_files(profile: Path) -> Iterator[Path]:
    if profile.is_dir():
        yield from (
            p for p in profile.glob("resource_*.json") if p.is_file() and not p.is_symlink()
        )


def docs_for(root: Path, rel: str, kind: str, mtime_ns: int) -> list[Doc] | None:
    """The documents of one file, or None when it cannot be read or parsed."""
    path = root / rel
    if kind == CHUNK:
        doc = chunk_doc(rel, load_json(path))
        return [doc] if doc is not None else None
    if kind == FACT:
        data = load_json(path)
        return fact_docs(rel, data, mtime_ns / 1e9) if isinstance(data, dict) else None
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return [note_doc(rel, text, mtime_ns / 1e9)]


def index_file(index: Index, root: Path, rel: str, kind: str) -> bool:
    """(Re-)index one file now; False if it is gone or does not parse."""
    st = _stat(root / rel)
    if st is None:
        index.remove_path(rel)
        return False
    docs = docs_for(root, rel, kind, st[0])
    index.remove_path(rel)
    if docs is None:
        index.record_file(rel, kind, *st)
        return False
    index.upsert(docs)
    index.record_file(rel, kind, *st)
    return True


def kind_of(rel: str) -> str | None:
    """Which kind of document a home-relative path holds, if the index covers it."""
    parts = rel.split("/")
    if not all(_visible(part) for part in parts):
        return None
    if parts[0] == "vault" and rel.endswith(".md") and len(parts) > 1:
        return NOTE
    if len(parts) == 2 and parts[0] == "profile" and parts[1].startswith("resource_"):
        return FACT if parts[1].endswith(".json") else None
    if len(parts) == 3 and parts[0] == "chunks" and parts[2].endswith(".json"):
        return CHUNK
    return None


def sync_paths(index: Index, root: Path, rels: Iterable[str]) -> SyncReport:
    """Bring just these paths in line (e.g. the ones the ops log says were written).

    A path whose (mtime, size) the index already recorded is left alone, so the
    store's own writes, indexed as they happened, cost one `stat` here.
    """
    report = SyncReport()
    for rel in dict.fromkeys(rels):
        kind = kind_of(rel)
        path = root / rel
        if kind is None or path.is_symlink():
            continue
        if index.files_under(rel).get(rel) == _stat(path):
            continue
        if index_file(index, root, rel, kind):
            report.indexed.append(rel)
        elif path.exists():
            report.skipped.append(rel)
        else:
            report.removed.append(rel)
    return report


def _changes(
    found: dict[str, tuple[int, int]], known: dict[str, tuple[int, int]]
) -> tuple[list[str], list[str]]:
    """(new or changed paths, vanished paths)."""
    changed = [p for p, st in found.items() if known.get(p) != st]
    gone = [p for p in known if p not in found]
    return changed, gone


def plan_sync(index: Index, root: Path) -> tuple[list[tuple[str, str]], list[str], dict[str, int]]:
    """What differs: ([(rel, kind) to index], [rel to forget], {chunk dir: mtime})."""
    layout = Layout(root)
    todo: list[tuple[str, str]] = []
    gone: list[str] = []
    for kind, files in ((NOTE, _note_files(layout.vault)), (FACT, _profile_files(layout.profile))):
        found = {}
        for p in files:
            st = _stat(p)
            if st is not None:
                found[p.relative_to(root).as_posix()] = st
        changed, removed = _changes(found, index.files(kind))
        todo += [(p, kind) for p in changed]
        gone += removed
    known_dirs = index.dirs()
    seen_dirs: dict[str, int] = {}
    chunks = layout.chunks
    if chunks.is_dir():
        for d in chunks.iterdir():
            if not d.is_dir() or d.is_symlink() or not _visible(d.name):
                continue
            rel_dir = d.relative_to(root).as_posix()
            st = _stat(d)
            if st is None:
                continue
            seen_dirs[rel_dir] = st[0]
            if known_dirs.get(rel_dir) == st[0]:
                continue
            found = {}
            for f in d.iterdir():
                if f.suffix == ".json" and _visible(f.name) and f.is_file() and not f.is_symlink():
                    fst = _stat(f)
                    if fst is not None:
                        found[f.relative_to(root).as_posix()] = fst
            changed, removed = _changes(found, index.files_under(rel_dir + "/"))
            todo += [(p, CHUNK) for p in changed]
            gone += removed
    for rel_dir in known_dirs:
        if rel_dir not in seen_dirs:
            gone += list(index.files_under(rel_dir + "/"))
    return todo, gone, seen_dirs


def kept_vectors(index: Index, rels: list[str]) -> dict[tuple[str, str], Vector]:
    """The stored vectors of these files' documents, by (doc_id, content), copied.

    A file whose date or size moved but whose text did not (a home copied,
    restored or checked out without its times) keeps its vectors instead of being
    embedded again: embedding is most of what a sync costs (~20 ms a chunk on two
    cores), and the vector of a document depends only on its content."""
    if index.embedder is None or not rels:
        return {}
    rows: list[tuple[int, str, str]] = []
    for start in range(0, len(rels), 500):
        part = rels[start : start + 500]
        marks = ",".join("?" * len(part))
        try:
            rows += index.conn.execute(
                f"SELECT rowid, doc_id, content FROM docs WHERE path IN ({marks})", part
            ).fetchall()
        except sqlite3.Error:
            return {}
    vecs = index.vectors.get([r[0] for r in rows])
    return {(d, c): np.array(vecs[r], dtype=np.float32) for r, d, c in rows if r in vecs}


def _vectors_for(
    index: Index, docs: list[Doc], kept: dict[tuple[str, str], Vector]
) -> Vector | None:
    """The vectors of `docs` for `upsert`: kept ones reused, the rest embedded;
    None (upsert embeds) when nothing is kept or the index has no model."""
    if index.embedder is None or not docs or not kept:
        return None
    new = [i for i, d in enumerate(docs) if (d.doc_id, d.content) not in kept]
    out = np.zeros((len(docs), index.vectors_dim), dtype=np.float32)
    if new:
        out[new] = index.embedder.embed([docs[i].content for i in new])
    for i, d in enumerate(docs):
        vec = kept.get((d.doc_id, d.content))
        if vec is not None:
            out[i] = vec
    return out


def sync(
    index: Index, root: Path, *, progress: Progress | None = None, batch: int = 64
) -> SyncReport:
    """Bring the index in line with the files under `root`; returns what changed."""
    report = SyncReport()
    todo, gone, dirs = plan_sync(index, root)
    for rel in gone:
        index.remove_path(rel)
        report.removed.append(rel)
    total = len(todo)
    for start in range(0, total, batch):
        part = todo[start : start + batch]
        kept = kept_vectors(index, [rel for rel, _ in part])
        docs: list[Doc] = []
        states: list[tuple[str, str, tuple[int, int]]] = []
        for rel, kind in part:
            st = _stat(root / rel)
            index.remove_path(rel)
            if st is None:
                report.removed.append(rel)
                continue
            got = docs_for(root, rel, kind, st[0])
            states.append((rel, kind, st))
            if got is None:
                report.skipped.append(rel)
            else:
                docs += got
                report.indexed.append(rel)
        index.upsert(docs, _vectors_for(index, docs, kept))
        for rel, kind, st in states:
            index.record_file(rel, kind, *st)
        if progress is not None:
            progress(min(start + batch, total), total)
    known = index.dirs()
    for rel_dir, mtime in dirs.items():
        if known.get(rel_dir) != mtime:
            index.record_dir(rel_dir, mtime)
    for rel_dir in known:
        if rel_dir not in dirs:
            index.forget_dir(rel_dir)
    if progress is not None and total == 0:
        progress(0, 0)
    return report
