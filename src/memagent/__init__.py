"""memagent: a local-first memory engine and agent runtime for LLMs.

Memory lives in files people can read and edit (markdown notes, JSON profile
facts, episodic chunks); a derived SQLite index makes it searchable.
"""

from memagent.api import Memory
from memagent.core import MemagentError, MemoryHome

__version__ = "0.1.0"

__all__ = ["Agent", "MemagentError", "Memory", "MemoryHome", "__version__"]


def __getattr__(name: str) -> object:
    # `Agent` loads lazily: it pulls in the agent stack, which the CLI start-up avoids.
    if name == "Agent":
        from memagent.agent import Agent

        return Agent
    raise AttributeError(f"module 'memagent' has no attribute {name!r}")
