"""Foundation: the memory home, its one write primitive, its ops log and config.

Everything above this layer writes files only through `Storage`.
"""

from memagent.core.config import Config, load_config
from memagent.core.errors import (
    Conflict,
    CorruptFile,
    InvalidInput,
    LockTimeout,
    MemagentError,
    NotFound,
    PathRejected,
    ReadOnlyHome,
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
    "InvalidInput",
    "Layout",
    "LockTimeout",
    "MemagentError",
    "MemoryHome",
    "NotFound",
    "OpRecord",
    "PathRejected",
    "ReadOnlyHome",
    "Storage",
    "Unavailable",
    "WriteRecord",
    "load_config",
    "now_iso",
    "read_ops",
    "read_ops_since",
    "resolve_home",
    "sha256_hex",
    "tail_ops",
]
