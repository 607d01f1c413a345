"""Setting up a memory home with every store's starter files.

This sits above the stores (it is called by the interfaces): `MemoryHome.init`
makes the layout and `vault/user.md`; each store that has starter content adds
it here.
"""

from __future__ import annotations

from memagent.core import MemoryHome


def init_home(home: MemoryHome) -> list[str]:
    """Create the home and every store's starter files; returns what was created."""
    created = home.init()
    from memagent.memory.profile import init_profile

    created += init_profile(home)
    from memagent.agent.personas import init_personas

    created += init_personas(home)
    return created
