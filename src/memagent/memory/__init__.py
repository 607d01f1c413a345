"""Memory stores; files are the source of truth.

- `memagent.memory.vault`: markdown notes (`vault/user.md`, `vault/entities/…`)
  with wikilinks, edited through safe file operations.
"""

from memagent.memory.vault import Vault, WikiLink, parse_link

__all__ = ["Vault", "WikiLink", "parse_link"]
