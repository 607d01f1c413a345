"""Setting up a memory home with every store's starter files.

`MemoryHome.init` makes the layout, `vault/user.md` and `config.toml`; the
profile adds its starting resources and `memagent.core.starter_files` the
persona and slider files. It sits on the memory layer (it needs nothing above
it), so the stores, the agent and the interfaces can all create a missing home.
"""

from __future__ import annotations

from memagent.core import MemoryHome
from memagent.core.starter_files import init_personas
from memagent.memory.profile import init_profile


def init_home(home: MemoryHome) -> list[str]:
    """Create the home and every store's starter files; returns what was created."""
    created = home.init()
    created += init_profile(home)
    created += init_personas(home)
    return created
