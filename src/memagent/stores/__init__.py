"""One way to open a user's stores, on either backend.

```python
from memagent.stores import open_stores

with open_stores("~/mem", user="alice") as stores:            # the home's files
    stores.chunks.remember("Jane prefers tea.")
with open_stores("postgresql://db/memagent", user="alice") as stores:
    stores.profile.names()
```

`open_stores(home_or_url, *, user, embeddings, …)` returns a `Stores`: the
chunk store, the profile store, the vault (notes), the API keys, opened lazily
on one backend (`open_keys` opens a server's keys alone). The API
(`memagent.api.Memory`), the agent (`memagent.agent.MemoryAccess`), the HTTP server and the CLI
all open their stores here, so choosing a backend happens in one place. Like
basic-memory's search repository, each store is one base class
whose storage parts are hooks (`ChunkStore` / `PgChunkStore`, `ProfileStore` /
`PgProfileStore`), so callers only see the base class.
"""

from memagent.stores._open import (
    DEFAULT_USER,
    Backend,
    Stores,
    open_keys,
    open_stores,
    store_url,
)

__all__ = ["DEFAULT_USER", "Backend", "Stores", "open_keys", "open_stores", "store_url"]
