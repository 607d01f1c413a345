"""Locks that hold across processes and machines, given to the `Executor`.

The executor's own read/write locks serialise steps inside one process. When
the resources live in a store many processes share (a database), the same
conflicts must hold between processes too: an `Executor(shared_locks=…)` takes
the step's locks from the `SharedLocks` as well, after its own, in the same
global order (so no deadlock), and releases them when the step ends.

This layer stays generic: an implementation (PostgreSQL advisory locks in
`memagent.postgres.locks`) is plugged in by whoever builds the executor.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from memagent.plan._rwlock import LockRequest, X


class SharedLocks(Protocol):
    """Cross-process locks over resource names.

    `acquire` gets `(resource, exclusive)` pairs in the order to take them and
    returns a token; `release(token)` frees everything that call took. Writes
    (and the intention to write under a prefix) are exclusive, reads shared.
    """

    async def acquire(self, resources: Sequence[tuple[str, bool]]) -> Any: ...

    async def release(self, token: Any) -> None: ...


def shared_requests(locks: Sequence[LockRequest]) -> list[tuple[str, bool]]:
    """The executor's lock requests as `(resource, exclusive)` for `SharedLocks`.

    Only X is exclusive across processes; IX (a write below a prefix) is taken
    shared on the prefix, so writers of different files under one folder run in
    parallel while a writer of the whole prefix (X) still excludes them all.
    """
    return [(key, mode == X) for key, mode in locks]
