"""LLM backends behind one small interface (`LLM`): scripted (tests), embedded
llama.cpp, and any OpenAI-compatible server."""

from typing import TYPE_CHECKING, Any

from memagent.llm.base import LLM, ChatResult, LLMError, Message, Usage, as_messages
from memagent.llm.factory import load_llm
from memagent.llm.scripted import ScriptedCall, ScriptedLLM, ScriptExhausted

if TYPE_CHECKING:
    from memagent.llm.embedded import EmbeddedLLM
    from memagent.llm.openai_compat import OpenAICompatLLM

__all__ = [
    "LLM",
    "ChatResult",
    "EmbeddedLLM",
    "LLMError",
    "Message",
    "OpenAICompatLLM",
    "ScriptExhausted",
    "ScriptedCall",
    "ScriptedLLM",
    "Usage",
    "as_messages",
    "load_llm",
]


def __getattr__(name: str) -> Any:
    """The real backends import lazily: `openai` and llama.cpp stay out of CLI start-up."""
    if name == "EmbeddedLLM":
        from memagent.llm.embedded import EmbeddedLLM

        return EmbeddedLLM
    if name == "OpenAICompatLLM":
        from memagent.llm.openai_compat import OpenAICompatLLM

        return OpenAICompatLLM
    raise AttributeError(f"module 'memagent.llm' has no attribute {name!r}")
