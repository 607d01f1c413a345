"""The PostgreSQL + pgvector storage backend: many servers, one database.

`Database` (pool, migrations, per-user transactions), and the stores that sit
on it with the same interfaces as the local ones: `PgChunkStore`,
`PgProfileStore`, `PgVault` (notes), `PgOpsLog`, `PgKeyStore` (API keys),
`PgState` (conversations, traces); `AdvisoryLocks` for the plan executor;
`export_home` / `import_home` to and from the local file layout. Needs the
`postgres` extra (psycopg 3 and psycopg-pool).
"""

from memagent.postgres.api_keys import PgKeyStore
from memagent.postgres.chunks import PgChunkStore
from memagent.postgres.db import Database, DatabaseUnavailable, is_postgres_url
from memagent.postgres.locks import AdvisoryLocks
from memagent.postgres.ops import PgOpsLog
from memagent.postgres.profile import PgProfileStore
from memagent.postgres.state import PgState
from memagent.postgres.vault import PgVault

__all__ = [
    "AdvisoryLocks",
    "Database",
    "DatabaseUnavailable",
    "PgChunkStore",
    "PgKeyStore",
    "PgOpsLog",
    "PgProfileStore",
    "PgState",
    "PgVault",
    "is_postgres_url",
]
