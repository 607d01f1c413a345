"""The one write primitive of the project.

Every file memagent writes goes through `Storage`: a temp file beside the target,
fsync, atomic rename, fsync of the folder, all under one inter-process lock per
memory home, followed by an append-only record in `log/ops.jsonl` (time, actor,
operation, path, content hashes before and after). A crash at any point leaves
either the old file or the new one, never a torn one; a write that returned has
been fsynced, so it survives a crash of the process or the machine.

The lock is one `_HomeLock` per home in this process, shared by every `Storage`
of that home: a `threading.RLock` (threads of this process queue on it without
polling) in front of a `filelock.FileLock` on `<home>/.lock` (exclusive across
processes). It is reentrant within a thread. Hold `storage.lock()` around a
read-modify-write so no other writer slips in between.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from filelock import FileLock
from filelock import Timeout as _FileLockTimeout

from memagent.core.config import QuotasConfig
from memagent.core.errors import LockTimeout, PathRejected, ReadOnlyHome, StorageFull
from memagent.core.oplog import BLOB_KEY, blob_path, live_start, segment_name, segments
from memagent.core.paths import Layout
from memagent.core.quota import HomeUsage
from memagent.core.quota import tracker as quota_tracker

TMP_PREFIX = ".tmp-"
_BLOB_REF = re.compile(r'"\$blob":"sha256:([0-9a-f]{64})"')
LOG_SEGMENT_BYTES = 64 * 1024 * 1024
"""The live ops log is rotated into a segment when it would pass this size."""
BLOB_MIN_BYTES = 4096
"""Strings in an ops-log record's meta this large are stored once, by hash."""
OpMeta = Mapping[str, object]
"""What a writer notes about a write in its ops-log record (the text an update
replaced, the id of a chunk, …): JSON-able values that storage only writes down."""


class _HomeLock:
    """Thread lock first, then the inter-process file lock; reentrant per thread."""

    def __init__(self, lock_file: Path) -> None:
        self._threads = threading.RLock()
        self._file = FileLock(str(lock_file), thread_local=False)
        self._depth = threading.local()

    def held_by_current_thread(self) -> bool:
        return getattr(self._depth, "n", 0) > 0

    def acquire(self, timeout: float) -> bool:
        """False on timeout. On a read-only home (the lock file cannot be opened for
        writing) only the thread lock is taken: no process can write there, so
        readers need no inter-process lock, and writes fail with `ReadOnlyHome`."""
        deadline = time.monotonic() + timeout
        if not self._threads.acquire(timeout=timeout):
            return False
        if not self.held_by_current_thread():
            try:
                self._file.acquire(timeout=max(0.0, deadline - time.monotonic()))
                self._depth.file = True
            except _FileLockTimeout:
                self._threads.release()
                return False
            except OSError as exc:
                if exc.errno not in _READ_ONLY_ERRNOS:
                    self._threads.release()
                    raise
                self._depth.file = False
        self._depth.n = getattr(self._depth, "n", 0) + 1
        return True

    def release(self) -> None:
        self._depth.n -= 1
        if self._depth.n == 0 and self._depth.file:
            self._file.release()
        self._threads.release()


_READ_ONLY_ERRNOS = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})
FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
"""What a full disk (or a used-up disk quota) raises."""


def is_full(exc: BaseException) -> bool:
    """Whether `exc` says the disk is full: an `OSError` with ENOSPC/EDQUOT,
    SQLite's "database or disk is full", or `StorageFull` itself."""
    if isinstance(exc, StorageFull):
        return True
    if isinstance(exc, OSError):
        return exc.errno in FULL_ERRNOS
    name = type(exc).__name__
    text = str(exc).lower()
    return name in ("OperationalError", "DiskFull") and (
        "disk is full" in text or name == "DiskFull"
    )


_LOCKS: dict[Path, _HomeLock] = {}
_LOCKS_GUARD = threading.Lock()


def sha256_hex(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def now_iso() -> str:
    """UTC timestamp with microseconds, the format of every memagent record."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


def _home_lock(lock_file: Path) -> _HomeLock:
    with _LOCKS_GUARD:
        lock = _LOCKS.get(lock_file)
        if lock is None:
            lock = _HomeLock(lock_file)
            _LOCKS[lock_file] = lock
        return lock


@dataclass(frozen=True)
class WriteRecord:
    """What one write did; the same fields as its ops-log line."""

    ts: str
    actor: str
    op: str
    path: str
    before: str | None
    after: str | None
    meta: OpMeta | None = None

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "ts": self.ts,
            "actor": self.actor,
            "op": self.op,
            "path": self.path,
            "before": self.before,
            "after": self.after,
        }
        if self.meta:
            out["meta"] = self.meta
        return out


class Storage:
    """Atomic, locked, logged writes inside one memory home.

    `path` arguments may be absolute (inside the home) or relative to the home.
    This class is not a path sanitizer for untrusted input — the vault does that —
    but it refuses, as a last line of defence, any path that is not inside the home.
    """

    def __init__(self, root: Path, *, lock_timeout: float = 60.0) -> None:
        self.root = root
        self.layout = Layout(root)
        self.lock_timeout = lock_timeout
        self.log_segment_bytes = LOG_SEGMENT_BYTES
        self.blob_min_bytes = BLOB_MIN_BYTES
        self.quota_source: Callable[[], QuotasConfig | None] | None = None
        """Where this home's quotas come from (its config, or a server's settings)."""
        self._lock = _home_lock(self.layout.lock_file)
        self._tracker = quota_tracker(root)

    # -- locking ---------------------------------------------------------------
    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the home's write lock (reentrant in this thread)."""
        with self._writing(self.root):
            self.root.mkdir(parents=True, exist_ok=True)
        if not self._lock.acquire(self.lock_timeout):
            raise LockTimeout(
                f"memory home {self.root} is locked by another writer "
                f"(waited {self.lock_timeout:.0f}s)"
            )
        try:
            yield
        finally:
            self._lock.release()

    @contextlib.contextmanager
    def _writing(self, target: Path) -> Iterator[None]:
        """Turn "read-only file system" / "permission denied" into `ReadOnlyHome`,
        "no space left" / "disk quota exceeded" into `StorageFull`."""
        try:
            yield
        except OSError as exc:
            if exc.errno in FULL_ERRNOS:
                raise StorageFull(
                    f"no space left for the memory home {self.root}: cannot write "
                    f"{os.path.relpath(target, self.root)} ({exc.strerror}); nothing was changed"
                ) from exc
            if exc.errno not in _READ_ONLY_ERRNOS:
                raise
            raise ReadOnlyHome(
                f"memory home {self.root} is read-only: cannot write "
                f"{os.path.relpath(target, self.root)} ({exc.strerror})"
            ) from exc

    def writable(self) -> bool:
        """Whether this process may write in the home (False on a read-only mount)."""
        return os.access(self.root, os.W_OK)

    def holds_lock(self) -> bool:
        """True when the calling thread is inside `lock()` of this home."""
        return self._lock.held_by_current_thread()

    # -- paths -----------------------------------------------------------------
    def resolve(self, path: str | os.PathLike[str]) -> Path:
        """Absolute, normalized path inside the home; refuses anything outside."""
        p = Path(path)
        if not p.is_absolute():
            p = self.root / p
        normalized = Path(os.path.normpath(p))
        if normalized != self.root and not normalized.is_relative_to(self.root):
            raise PathRejected(f"{path}: outside the memory home {self.root}")
        return normalized

    def relative(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    # -- writes ----------------------------------------------------------------
    def write_bytes(
        self,
        path: str | os.PathLike[str],
        data: bytes,
        *,
        actor: str,
        op: str,
        meta: OpMeta | None = None,
    ) -> WriteRecord:
        """Atomically replace (or create) `path` with `data` and log it."""
        target = self.resolve(path)
        with self.lock(), self._writing(target):
            before = self._hash_of(target)
            old_size = self._check_quota(target, len(data))
            self._atomic_replace(target, data)
            self._tracker.wrote(self.relative(target), old_size, len(data))
            try:
                return self._log(actor, op, target, before, sha256_hex(data), meta)
            except OSError:
                if before is None:  # a new file nobody was told of: not written after all
                    self._unlink_quietly(target)
                    self._tracker.wrote(self.relative(target), len(data), None)
                raise

    def undo_create(self, path: str | os.PathLike[str], *, actor: str) -> None:
        """Remove a file this process just created when a later step of the same
        write failed (its index entry, say): a retry then stores it once. Logged
        when the log has room; the file goes either way."""
        target = self.resolve(path)
        with self.lock():
            with contextlib.suppress(OSError):
                size = target.stat().st_size
                self._unlink_quietly(target)
                self._tracker.wrote(self.relative(target), size, None)
            with contextlib.suppress(OSError):
                self._log(actor, "undo-create", target, None, None, None)

    def _unlink_quietly(self, target: Path) -> None:
        with contextlib.suppress(OSError), self._dir(target.parent, create=False) as dfd:
            os.unlink(target.name, dir_fd=dfd)
            os.fsync(dfd)

    def write_text(
        self,
        path: str | os.PathLike[str],
        text: str,
        *,
        actor: str,
        op: str,
        meta: OpMeta | None = None,
    ) -> WriteRecord:
        return self.write_bytes(path, text.encode("utf-8"), actor=actor, op=op, meta=meta)

    def write_json(
        self,
        path: str | os.PathLike[str],
        obj: Any,
        *,
        actor: str,
        op: str,
        meta: OpMeta | None = None,
    ) -> WriteRecord:
        """Pretty JSON (2-space indent, UTF-8, trailing newline): files people read."""
        text = json.dumps(obj, indent=2, ensure_ascii=False) + "\n"
        return self.write_text(path, text, actor=actor, op=op, meta=meta)

    def delete(
        self,
        path: str | os.PathLike[str],
        *,
        actor: str,
        op: str,
        meta: OpMeta | None = None,
    ) -> WriteRecord:
        """Remove a file (durably) and log it. Missing files raise FileNotFoundError."""
        target = self.resolve(path)
        with self.lock(), self._writing(target):
            before = self._hash_of(target)
            if before is None:
                raise FileNotFoundError(str(target))
            with self._dir(target.parent) as dfd:
                old_size = os.stat(target.name, dir_fd=dfd, follow_symlinks=False).st_size
                os.unlink(target.name, dir_fd=dfd)
                os.fsync(dfd)
            self._tracker.wrote(self.relative(target), old_size, None)
            return self._log(actor, op, target, before, None, meta)

    def mkdir(
        self,
        path: str | os.PathLike[str],
        *,
        actor: str,
        op: str = "mkdir",
        meta: OpMeta | None = None,
    ) -> WriteRecord:
        """Create a folder (and its parents) durably and log it."""
        target = self.resolve(path)
        with self.lock(), self._writing(target):
            self._make_parents(target)
            return self._log(actor, op, target, None, None, meta)

    def rmdir(
        self,
        path: str | os.PathLike[str],
        *,
        actor: str,
        op: str = "rmdir",
        meta: OpMeta | None = None,
    ) -> WriteRecord:
        """Remove an empty folder durably and log it."""
        target = self.resolve(path)
        with self.lock(), self._writing(target), self._dir(target.parent) as dfd:
            os.rmdir(target.name, dir_fd=dfd)
            os.fsync(dfd)
            return self._log(actor, op, target, None, None, meta)

    def log_event(
        self, *, actor: str, op: str, path: str, meta: OpMeta | None = None
    ) -> WriteRecord:
        """Record an operation that changed no file by itself (e.g. an undo marker)."""
        target = self.resolve(path)
        with self.lock(), self._writing(target):
            return self._log(actor, op, target, None, None, meta)

    def prune_log(self, keep: int) -> tuple[int, int, int]:
        """Delete all but the newest `keep` rotated ops-log segments, and the stored
        contents only they referred to (history and undo of those records go with
        them). Returns (segments removed, contents removed, bytes freed)."""
        log_path = self.layout.ops_log
        freed = removed_segments = removed_blobs = 0
        with self.lock(), self._writing(log_path):
            old = segments(log_path)
            drop = old[: max(0, len(old) - max(0, keep))]
            for _, path in drop:
                freed += path.stat().st_size
                path.unlink()
                removed_segments += 1
            if drop:
                used: set[str] = set()
                for path in [p for _, p in segments(log_path)] + [log_path]:
                    with contextlib.suppress(FileNotFoundError):
                        used.update(_BLOB_REF.findall(path.read_text(encoding="utf-8")))
                blobs = blob_path(log_path, "x").parent
                for blob in list(blobs.iterdir()) if blobs.is_dir() else []:
                    if blob.name not in used:
                        freed += blob.stat().st_size
                        blob.unlink()
                        removed_blobs += 1
                self._tracker.wrote("log/ops.jsonl", freed, 0)
                self._log(
                    "storage", "log.prune", log_path, None, None,
                    {"segments": removed_segments, "contents": removed_blobs, "bytes": freed},
                )  # fmt: skip
        return removed_segments, removed_blobs, freed

    def clean_temp_files(self, directory: Path) -> int:
        """Remove temp files a crashed writer left behind in `directory` (recursive)."""
        removed = 0
        with self.lock():
            for tmp in directory.rglob(TMP_PREFIX + "*"):
                if tmp.is_file() and not tmp.is_symlink():
                    tmp.unlink()
                    removed += 1
        return removed

    # -- internals ---------------------------------------------------------------
    def _check_quota(self, target: Path, new_size: int) -> int | None:
        """Refuse (`QuotaExceeded`) a write that would pass a quota; returns the
        target's current size (None: it does not exist)."""
        try:
            old_size: int | None = os.lstat(target).st_size
        except FileNotFoundError:
            old_size = None
        quotas = self.quota_source() if self.quota_source is not None else None
        if quotas is not None and any(
            (quotas.max_bytes, quotas.max_chunks, quotas.max_notes, quotas.max_log_bytes)
        ):
            self._tracker.check(quotas, self.relative(target), old_size, new_size)
        return old_size

    def usage(self) -> HomeUsage:
        """What the home holds now (bytes, chunks, notes, ops-log bytes)."""
        return self._tracker.usage()

    def _hash_of(self, target: Path) -> str | None:
        """The content hash of `target`, read through the same symlink-refusing
        folder descriptors as writes (a link swapped in is never followed)."""
        try:
            with self._dir(target.parent, create=False) as dfd:
                fd = os.open(target.name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=dfd)
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise PathRejected(
                    f"{self.relative(target)}: is a symlink; not replacing it"
                ) from exc
            raise
        with os.fdopen(fd, "rb") as fh:
            return sha256_hex(fh.read())

    @contextlib.contextmanager
    def _dir(self, directory: Path, *, create: bool = True) -> Iterator[int]:
        """A descriptor of `directory` (inside the home), opened one component at a
        time from the home's root: the first component (`vault`, `profile`, …) may
        be a symlink the owner made (e.g. to an Obsidian vault); below it every
        component is opened with O_NOFOLLOW | O_DIRECTORY, so a symlink swapped in
        between a path check and the write is refused, never followed. Missing
        folders are created (and their parents fsynced) when `create`."""
        rel = directory.relative_to(self.root)
        fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for depth, part in enumerate(rel.parts):
                flags = os.O_RDONLY | os.O_DIRECTORY | (os.O_NOFOLLOW if depth else 0)
                try:
                    child = os.open(part, flags, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        raise
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, 0o755, dir_fd=fd)
                        os.fsync(fd)
                    child = os.open(part, flags, dir_fd=fd)
                except OSError as exc:
                    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                        where = "/".join(rel.parts[: depth + 1])
                        raise PathRejected(
                            f"{where}: a symlink or a file is in the way; refusing to write "
                            "through it"
                        ) from exc
                    raise
                os.close(fd)
                fd = child
            yield fd
        finally:
            os.close(fd)

    def _make_parents(self, directory: Path) -> None:
        with self._dir(directory):
            pass

    def _atomic_replace(self, target: Path, data: bytes) -> None:
        tmp = f"{TMP_PREFIX}{target.name}.{os.getpid()}.{secrets.token_hex(4)}"
        with self._dir(target.parent) as dfd:
            fd = os.open(
                tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644, dir_fd=dfd
            )
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                    fh.flush()
                    os.fsync(fh.fileno())
                # Both names relative to the same folder descriptor: the file lands
                # in the folder that was checked, whatever happens to its path.
                os.replace(tmp, target.name, src_dir_fd=dfd, dst_dir_fd=dfd)
            except BaseException:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp, dir_fd=dfd)
                raise
            os.fsync(dfd)

    def _log(
        self,
        actor: str,
        op: str,
        target: Path,
        before: str | None,
        after: str | None,
        meta: OpMeta | None,
    ) -> WriteRecord:
        record = WriteRecord(now_iso(), actor, op, self.relative(target), before, after, meta)
        out = record.to_json()
        if meta:
            out["meta"] = self._blobs_out(meta)
        line = (json.dumps(out, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        log_path = self.layout.ops_log
        with self._dir(log_path.parent) as dfd:
            self._rotate_if_full(dfd, log_path, len(line))
            fd = os.open(
                log_path.name, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644,
                dir_fd=dfd,
            )  # fmt: skip
            try:
                os.write(fd, line)
                os.fsync(fd)
            finally:
                os.close(fd)
        self._tracker.wrote("log/ops.jsonl", 0, len(line))
        return record

    def _rotate_if_full(self, dfd: int, log_path: Path, adding: int) -> None:
        """Start a new live segment when this line would take the live one past
        `log_segment_bytes` (see `memagent.core.oplog`)."""
        try:
            size = os.stat(log_path.name, dir_fd=dfd, follow_symlinks=False).st_size
        except FileNotFoundError:
            return
        if size == 0 or size + adding <= self.log_segment_bytes:
            return
        start = live_start(log_path)
        os.rename(log_path.name, segment_name(start), src_dir_fd=dfd, dst_dir_fd=dfd)
        os.fsync(dfd)

    def _blobs_out(self, meta: OpMeta) -> dict[str, object]:
        """`meta` with every string over `blob_min_bytes` stored once in log/blobs/
        (named by its sha256) and replaced by a reference to it."""

        def walk(value: object) -> object:
            if isinstance(value, str) and len(value) >= self.blob_min_bytes:
                data = value.encode("utf-8")
                if len(data) >= self.blob_min_bytes:
                    return {BLOB_KEY: self._store_blob(data)}
                return value
            if isinstance(value, dict):
                return {k: walk(v) for k, v in value.items()}
            if isinstance(value, list):
                return [walk(v) for v in value]
            return value

        return {k: walk(v) for k, v in meta.items()}

    def _store_blob(self, data: bytes) -> str:
        digest = sha256_hex(data)
        path = blob_path(self.layout.ops_log, digest)
        if not path.exists():  # stored once: the same content is never written twice
            self._atomic_replace(path, data)
            self._tracker.wrote(self.relative(path), None, len(data))
        return digest
