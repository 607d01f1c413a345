"""A memory home: its layout, its storage (the write primitive) and its config."""

from __future__ import annotations

import os
from functools import cached_property
from pathlib import Path

from memagent.core.config import Config, QuotasConfig, load_config
from memagent.core.errors import CorruptFile, InvalidInput, NotFound
from memagent.core.oplog import OpRecord, tail_ops
from memagent.core.paths import Layout, resolve_home
from memagent.core.storage import Storage

STARTER_USER_MD = """\
# User

This note is the assistant's picture of you. It is plain markdown: edit it freely.
Link to people, places and projects with [[wikilinks]], e.g. [[entities/example_person]].

## About

## Preferences

## People

## Ongoing
"""


class MemoryHome:
    """One person's (or one app's) memory, rooted in a folder.

    Construct with `MemoryHome.open(home)`; `home` follows the CLI rule
    (`--home`, else `$MEMAGENT_HOME`, else `~/.memagent`).
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.layout = Layout(root)
        self.storage = Storage(root)
        self.storage.quota_source = self._quotas

    def _quotas(self) -> QuotasConfig | None:
        try:
            return self.config.quotas
        except CorruptFile:
            return None  # a broken config.toml is reported where it is read

    @classmethod
    def open(cls, home: str | os.PathLike[str] | None = None) -> MemoryHome:
        return cls(resolve_home(home))

    @property
    def exists(self) -> bool:
        return self.layout.vault.is_dir()

    def check_folder(self) -> MemoryHome:
        """Raise a clear error if the home (or a part of its path) is not a folder."""
        for p in (self.root, *self.root.parents):
            if p.exists():
                if not p.is_dir():
                    raise InvalidInput(f"memory home {self.root}: {p} is a file, not a folder")
                break
        return self

    def require(self) -> MemoryHome:
        """Raise a clear error if `memagent init` was never run here."""
        self.check_folder()
        if not self.exists:
            raise NotFound(
                f"no memory home at {self.root} (run `memagent init --home {self.root}`)"
            )
        return self

    @cached_property
    def config(self) -> Config:
        return load_config(self.layout.config)

    def init(self, *, actor: str = "init") -> list[str]:
        """Create the layout, a starter `vault/user.md` and `config.toml`.

        Idempotent: existing files are left as they are. Returns what was created,
        relative to the home. Other stores add their own starter files on top
        (see `memagent.setup.init_home`).
        """
        created: list[str] = []
        storage = self.storage
        self.check_folder()
        with storage.lock():
            for directory in self.layout.directories():
                if not directory.is_dir():
                    storage.mkdir(directory, actor=actor)
                    created.append(storage.relative(directory) + "/")
            user_md = self.layout.vault / "user.md"
            if not user_md.exists():
                storage.write_text(user_md, STARTER_USER_MD, actor=actor, op="create")
                created.append(storage.relative(user_md))
            if not self.layout.config.exists():
                storage.write_text(self.layout.config, Config().to_toml(), actor=actor, op="create")
                created.append(storage.relative(self.layout.config))
            storage.clean_temp_files(self.root)
        return created

    def ops(
        self, *, limit: int = 50, path_prefix: str | None = None, actor: str | None = None
    ) -> list[OpRecord]:
        return tail_ops(self.layout.ops_log, limit=limit, path_prefix=path_prefix, actor=actor)
