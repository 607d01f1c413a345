"""memagent: a local-first memory engine and agent runtime for LLMs.

Memory lives in files people can read and edit (markdown notes, JSON profile
facts, episodic chunks); a derived SQLite index makes it searchable.
"""

from memagent.api import Memory
from memagent.core import MemagentError, MemoryHome

__version__ = "0.1.0"

__all__ = ["MemagentError", "Memory", "MemoryHome", "__version__"]
