"""memagent: a local-first memory engine and agent runtime for LLMs.

Memory lives in files people can read and edit (markdown notes, JSON profile
facts, episodic chunks); a derived SQLite index makes it searchable.
"""

from typing import TYPE_CHECKING

from memagent.core import MemagentError, MemoryHome

if TYPE_CHECKING:
    from memagent.agent import Agent
    from memagent.api import Memory

from memagent.core.version import __version__

__all__ = ["Agent", "MemagentError", "Memory", "MemoryHome", "__version__"]


def __getattr__(name: str) -> object:
    # `Memory` and `Agent` load lazily: they pull in every store (and the agent
    # stack), which the CLI's start-up avoids.
    if name == "Memory":
        from memagent.api import Memory

        return Memory
    if name == "Agent":
        from memagent.agent import Agent

        return Agent
    raise AttributeError(f"module 'memagent' has no attribute {name!r}")
