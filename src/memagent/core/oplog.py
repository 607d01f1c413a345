"""Reading the append-only ops log (`log/ops.jsonl`) that `Storage` writes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict


class OpRecord(BaseModel):
    """One line of the ops log: who wrote what, when, and the content hashes."""

    model_config = ConfigDict(frozen=True)

    ts: str
    actor: str
    op: str
    path: str
    before: str | None = None
    after: str | None = None
    meta: dict[str, Any] | None = None


def read_ops(log_path: Path) -> Iterator[OpRecord]:
    """Every record, oldest first. A torn last line (a crash mid-append) is skipped."""
    try:
        fh = log_path.open("r", encoding="utf-8")
    except FileNotFoundError:
        return
    with fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            try:
                yield OpRecord.model_validate(json.loads(line))
            except (ValueError, TypeError):
                continue


def read_ops_since(log_path: Path, offset: int) -> tuple[list[OpRecord], int]:
    """Records appended after byte `offset`, and the offset to pass next time.

    Cheap when nothing changed (one `stat`); a partly written last line is left
    for the next call. An offset beyond the file (the log was replaced) starts over.
    """
    try:
        size = log_path.stat().st_size
    except FileNotFoundError:
        return [], 0
    if size == offset:
        return [], offset
    if size < offset:
        offset = 0
    with log_path.open("rb") as fh:
        fh.seek(offset)
        data = fh.read(size - offset)
    end = data.rfind(b"\n") + 1
    records: list[OpRecord] = []
    for line in data[:end].splitlines():
        try:
            records.append(OpRecord.model_validate(json.loads(line)))
        except (ValueError, TypeError):
            continue
    return records, offset + end


def tail_ops(
    log_path: Path, *, limit: int = 50, path_prefix: str | None = None, actor: str | None = None
) -> list[OpRecord]:
    """The newest `limit` records (oldest first), optionally filtered."""
    selected: list[OpRecord] = []
    for rec in read_ops(log_path):
        if path_prefix is not None and not rec.path.startswith(path_prefix):
            continue
        if actor is not None and rec.actor != actor:
            continue
        selected.append(rec)
        if len(selected) > limit:
            selected.pop(0)
    return selected
