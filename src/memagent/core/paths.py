"""Resolving the memory home and the fixed layout inside it (see DESIGN.md)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

ENV_HOME = "MEMAGENT_HOME"
DEFAULT_HOME = "~/.memagent"


def resolve_home(home: str | os.PathLike[str] | None = None) -> Path:
    """`--home`, else `$MEMAGENT_HOME`, else `~/.memagent`; always absolute."""
    raw = os.fspath(home) if home is not None else os.environ.get(ENV_HOME) or DEFAULT_HOME
    return Path(raw).expanduser().absolute()


@dataclass(frozen=True)
class Layout:
    """Where each part of a memory home lives. Paths only; nothing is touched."""

    root: Path

    @property
    def vault(self) -> Path:
        return self.root / "vault"

    @property
    def profile(self) -> Path:
        return self.root / "profile"

    @property
    def chunks(self) -> Path:
        return self.root / "chunks"

    @property
    def personalities(self) -> Path:
        return self.root / "personalities"

    @property
    def sliders(self) -> Path:
        return self.root / "sliders"

    @property
    def gauges(self) -> Path:
        return self.root / "gauges"

    @property
    def log_dir(self) -> Path:
        return self.root / "log"

    @property
    def ops_log(self) -> Path:
        return self.log_dir / "ops.jsonl"

    @property
    def index(self) -> Path:
        return self.root / "index.sqlite"

    @property
    def config(self) -> Path:
        return self.root / "config.toml"

    @property
    def state(self) -> Path:
        """Runtime state that is not memory: sandbox sessions, conversations, traces."""
        return self.root / "state"

    @property
    def lock_file(self) -> Path:
        return self.root / ".lock"

    def directories(self) -> list[Path]:
        return [
            self.vault,
            self.vault / "entities",
            self.profile,
            self.chunks,
            self.personalities,
            self.sliders,
            self.gauges,
            self.log_dir,
            self.state,
        ]
