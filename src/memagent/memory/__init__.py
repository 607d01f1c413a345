"""Memory stores; files are the source of truth (the index is derived).

- `memagent.memory.vault`: markdown notes (`vault/user.md`, `vault/entities/…`)
  with wikilinks, edited through confined, size-capped file operations.
- `memagent.memory.profile`: structured profile facts (`profile/resource_*.json`).
- `memagent.memory.chunks`: episodic chunks (`chunks/YYYY-MM-DD/…`).

Only the vault is re-exported here; import the other stores from their packages.
"""

from memagent.memory.vault import Vault, WikiLink, parse_link

__all__ = ["Vault", "WikiLink", "parse_link"]
