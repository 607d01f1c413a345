"""Foundation: the memory home, its one write primitive, its ops log and config.

Everything above this layer writes files only through `Storage`.
"""

from memagent.core.config import Config, load_config
from memagent.core.deadline import check_deadline, deadline, remaining_time
from memagent.core.errors import (
    Conflict,
    CorruptFile,
    DeadlineExceeded,
    InvalidInput,
    LockTimeout,
    MemagentError,
    NotFound,
    Overloaded,
    PathRejected,
    QuotaExceeded,
    ReadOnlyHome,
    StorageFull,
    Unavailable,
)
from memagent.core.home import MemoryHome
from memagent.core.oplog import OpRecord, read_ops, read_ops_since, tail_ops
from memagent.core.paths import Layout, resolve_home
from memagent.core.storage import Storage, WriteRecord, now_iso, sha256_hex

__all__ = [
    "Config",
    "Conflict",
    "CorruptFile",
    "DeadlineExceeded",
    "InvalidInput",
    "Layout",
    "LockTimeout",
    "MemagentError",
    "MemoryHome",
    "NotFound",
    "OpRecord",
    "Overloaded",
    "PathRejected",
    "QuotaExceeded",
    "ReadOnlyHome",
    "Storage",
    "StorageFull",
    "Unavailable",
    "WriteRecord",
    "check_deadline",
    "deadline",
    "load_config",
    "now_iso",
    "read_ops",
    "read_ops_since",
    "remaining_time",
    "resolve_home",
    "sha256_hex",
    "tail_ops",
]
