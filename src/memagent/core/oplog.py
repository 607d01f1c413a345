"""Reading the append-only ops log that `Storage` writes.

The log is one stream split into segments: `log/ops.jsonl` is the live one;
when it passes `Storage.log_segment_bytes` it is renamed to
`log/ops-<START>.jsonl`, where START (20 digits) is the stream offset of its
first byte, and a new live file begins. Offsets (`read_ops_since`, `ops_end`)
are offsets in the whole stream, so they survive a rotation; every reader here
(`memagent log`, history, undo, the index catching up) reads all segments.

A string in a record's `meta` larger than `Storage.blob_min_bytes` (a note's old
and new content, a deleted chunk's text) is stored once, by its sha256, in
`log/blobs/`, and the record holds `{"$blob": "sha256:…"}`; readers here put the
text back, so callers see the record as it was written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from memagent.core.jsontext import JsonObject

SEGMENT_RE = re.compile(r"^ops-(\d{20})\.jsonl$")
BLOB_KEY = "$blob"


class OpRecord(BaseModel):
    """One line of the ops log: who wrote what, when, and the content hashes."""

    model_config = ConfigDict(frozen=True)

    ts: str
    actor: str
    op: str
    path: str
    before: str | None = None
    after: str | None = None
    meta: JsonObject | None = None


def segment_name(start: int) -> str:
    return f"ops-{start:020d}.jsonl"


_SEGMENTS_SEEN_MAX = 4096  # memory homes remembered (a server has one per user)
_SEGMENTS_SEEN: dict[Path, tuple[tuple[int, int, int], list[tuple[int, Path]]]] = {}


def _listing_key(log_path: Path) -> tuple[int, int, int] | None:
    """What changes whenever the set of segments can have changed: the folder's
    identity and mtime, and the live file's inode (a rotation renames it away,
    so the next live file is a new inode even within one mtime tick)."""
    try:
        folder = log_path.parent.stat()
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        live = log_path.stat().st_ino
    except FileNotFoundError:
        live = 0
    return (folder.st_ino, folder.st_mtime_ns, live)


def segments(log_path: Path) -> list[tuple[int, Path]]:
    """Rotated segments beside `log_path` as (stream offset, path), oldest first.

    Listed again only when the folder or the live file changed, so an idle
    reader catching up (the index, on every search) costs stats, not a listing."""
    key = _listing_key(log_path)
    if key is None:
        return []
    seen = _SEGMENTS_SEEN.get(log_path)
    if seen is not None and seen[0] == key:
        return list(seen[1])
    try:
        names = [p.name for p in log_path.parent.iterdir()]
    except (FileNotFoundError, NotADirectoryError):
        return []
    found = [(int(m.group(1)), log_path.parent / n) for n in names if (m := SEGMENT_RE.match(n))]
    found.sort()
    if len(_SEGMENTS_SEEN) >= _SEGMENTS_SEEN_MAX:
        _SEGMENTS_SEEN.clear()
    _SEGMENTS_SEEN[log_path] = (key, found)
    return list(found)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def live_start(log_path: Path) -> int:
    """The stream offset where the live file (`ops.jsonl`) begins."""
    segs = segments(log_path)
    if not segs:
        return 0
    start, last = segs[-1]
    return start + _size(last)


def ops_end(log_path: Path) -> int:
    """The stream offset just after the last byte written (pass to `read_ops_since`)."""
    return live_start(log_path) + _size(log_path)


def blob_dir(log_path: Path) -> Path:
    return log_path.parent / "blobs"


def blob_path(log_path: Path, digest: str) -> Path:
    return blob_dir(log_path) / digest.removeprefix("sha256:")


def _restore(value: Any, log_path: Path) -> Any:
    if isinstance(value, dict):
        if len(value) == 1 and isinstance(value.get(BLOB_KEY), str):
            digest = value[BLOB_KEY]
            if re.fullmatch(r"sha256:[0-9a-f]{64}", digest):
                try:
                    return blob_path(log_path, digest).read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError):
                    return value  # the blob is gone: the reference says what it was
            return value
        return {k: _restore(v, log_path) for k, v in value.items()}
    if isinstance(value, list):
        return [_restore(v, log_path) for v in value]
    return value


def _parse(line: str | bytes, log_path: Path) -> OpRecord | None:
    try:
        data = json.loads(line)
        if (
            isinstance(data, dict)
            and isinstance(data.get("meta"), dict)
            and BLOB_KEY in (line if isinstance(line, str) else line.decode("utf-8", "replace"))
        ):
            data["meta"] = _restore(data["meta"], log_path)
        return OpRecord.model_validate(data)
    except (ValueError, TypeError, RecursionError):
        return None


def _files(log_path: Path) -> list[Path]:
    return [p for _, p in segments(log_path)] + [log_path]


def read_ops(log_path: Path, *, mentioning: str | None = None) -> Iterator[OpRecord]:
    """Every record of every segment, oldest first. A torn last line (a crash
    mid-append) is skipped. With `mentioning` (an id made of characters JSON
    never escapes), only lines that contain it are parsed: the cheap way to find
    one chunk's edits in a long log."""
    for path in _files(log_path):
        try:
            fh = path.open("r", encoding="utf-8")
        except FileNotFoundError:
            continue
        with fh:
            for line in fh:
                line = line.strip()
                if not line or (mentioning is not None and mentioning not in line):
                    continue
                rec = _parse(line, log_path)
                if rec is not None:
                    yield rec


def read_ops_since(log_path: Path, offset: int) -> tuple[list[OpRecord], int]:
    """Records appended after stream offset `offset`, and the offset to pass next time.

    Cheap when nothing changed (a stat or two); a partly written last line is left
    for the next call. Records in segments rotated since `offset` are included.
    """
    start = live_start(log_path)
    end = start + _size(log_path)
    if end == offset:
        return [], offset
    if offset > end:  # the log was replaced: start over
        offset = 0
    records: list[OpRecord] = []
    pieces = [*segments(log_path), (start, log_path)]
    for i, (seg_start, path) in enumerate(pieces):
        seg_end = pieces[i + 1][0] if i + 1 < len(pieces) else end
        if seg_end <= offset:
            continue
        with path.open("rb") as fh:
            fh.seek(max(0, offset - seg_start))
            data = fh.read(seg_end - max(offset, seg_start))
        cut = data.rfind(b"\n") + 1
        if i + 1 < len(pieces):
            cut = len(data)  # a rotated segment is complete
        for line in data[:cut].splitlines():
            rec = _parse(line, log_path) if line.strip() else None
            if rec is not None:
                records.append(rec)
        offset = max(offset, seg_start) + cut
    return records, offset


def tail_ops(
    log_path: Path, *, limit: int = 50, path_prefix: str | None = None, actor: str | None = None
) -> list[OpRecord]:
    """The newest `limit` records (oldest first), optionally filtered.

    Reads backwards a page at a time, so the cost follows how far back the
    newest matches lie, not the size of the whole log."""
    if limit <= 0:
        return []
    selected: list[OpRecord] = []
    end: int | None = None
    page = max(limit, 64)
    while len(selected) < limit:
        records, start = read_ops_before(log_path, end, limit=page)
        for rec in records:  # newest first
            if path_prefix is not None and not rec.path.startswith(path_prefix):
                continue
            if actor is not None and rec.actor != actor:
                continue
            selected.append(rec)
            if len(selected) == limit:
                break
        if start <= 0 or not records:
            break
        end = start
        page = min(page * 2, 4096)
    selected.reverse()
    return selected


_BACK_BLOCK = 64 * 1024


def _lines_before(path: Path, seg_start: int, seg_stop: int, want: int) -> list[tuple[int, bytes]]:
    """Whole lines of one segment ending by stream offset `seg_stop`, oldest first, with
    their stream offsets; reads backwards until more than `want` lines are found."""
    pos = seg_stop
    data = b""
    with path.open("rb") as fh:
        while pos > seg_start and data.count(b"\n") <= want:
            step = min(_BACK_BLOCK, pos - seg_start)
            pos -= step
            fh.seek(pos - seg_start)
            data = fh.read(step) + data
    items: list[tuple[int, bytes]] = []
    start = pos
    for piece in data.split(b"\n")[:-1]:  # what follows the last newline is torn or cut
        items.append((start, piece))
        start += len(piece) + 1
    if pos > seg_start and items:
        items.pop(0)  # began mid-line
    return [(offset, line) for offset, line in items if line.strip()]


def read_ops_before(
    log_path: Path, end: int | None = None, *, limit: int = 50
) -> tuple[list[OpRecord], int]:
    """The `limit` records that end at stream offset `end` (default: the end of the
    log), newest first, and the stream offset where the oldest of them starts: pass
    it as `end` for the page before (0: nothing is older). Reads backwards, across
    segments, a block at a time; blobs are put back as `read_ops` does."""
    pieces = [*segments(log_path), (live_start(log_path), log_path)]
    stream_end = pieces[-1][0] + _size(log_path)
    stop = stream_end if end is None else max(0, min(end, stream_end))
    found: list[tuple[int, bytes]] = []
    for seg_start, path in reversed(pieces):
        if len(found) > limit:
            break
        if seg_start >= stop:
            continue
        seg_stop = min(stop, seg_start + _size(path))
        try:
            found = _lines_before(path, seg_start, seg_stop, limit - len(found)) + found
        except FileNotFoundError:
            continue
    taken = found[-limit:] if limit > 0 else []
    records = [r for _, line in reversed(taken) if (r := _parse(line, log_path)) is not None]
    return records, (taken[0][0] if taken and taken[0][0] > 0 else 0)
