"""The persona and slider files a new memory home starts with (`personalities/`,
`sliders/`), copied from `memagent/core/starters/`.

They sit here, beside the home's layout, rather than beside the agent that reads
them (`memagent.agent.personas`), so that setting up a home
(`memagent.setup.init_home`) needs nothing above the memory layer.
"""

from __future__ import annotations

from importlib.resources import files

from memagent.core.home import MemoryHome


def init_personas(home: MemoryHome) -> list[str]:
    """Write the starter personas and slider descriptions that are missing;
    returns what was created, relative to the home."""
    created: list[str] = []
    root = files("memagent.core").joinpath("starters")
    with home.storage.lock():
        for folder, target in (
            ("personalities", home.layout.personalities),
            ("sliders", home.layout.sliders),
        ):
            for entry in sorted(root.joinpath(folder).iterdir(), key=lambda e: e.name):
                if not entry.name.endswith(".md"):
                    continue
                dest = target / entry.name
                if dest.exists():
                    continue
                home.storage.write_text(
                    dest, entry.read_text(encoding="utf-8"), actor="init", op="create"
                )
                created.append(home.storage.relative(dest))
    return created
