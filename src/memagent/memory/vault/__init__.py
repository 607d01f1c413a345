"""The markdown vault (`home/vault`): Obsidian-compatible notes an LLM can edit.

`Vault` does safe, size-capped file operations confined to the vault; all
writes go through the memory home's `Storage`. Wikilinks resolve as in Obsidian.
Operations return typed results (`FileCreated`, `Listing`, …) with a `to_json`.
`JournaledVault` can undo a batch of writes (`begin`, `rollback`).
"""

from memagent.memory.vault._journal import JournaledVault
from memagent.memory.vault._links import WikiLink, parse_link, title_and_aliases
from memagent.memory.vault._links import key as link_key
from memagent.memory.vault._paths import Located, normalize
from memagent.memory.vault._results import (
    DirMade,
    FileAppended,
    FileCreated,
    FileDeleted,
    FileUpdated,
    LinkedNote,
    Listing,
    SearchMatch,
    SearchResults,
    VaultResult,
)
from memagent.memory.vault._vault import Vault

__all__ = [
    "DirMade",
    "FileAppended",
    "FileCreated",
    "FileDeleted",
    "FileUpdated",
    "JournaledVault",
    "LinkedNote",
    "Listing",
    "Located",
    "SearchMatch",
    "SearchResults",
    "Vault",
    "VaultResult",
    "WikiLink",
    "link_key",
    "normalize",
    "parse_link",
    "title_and_aliases",
]
