"""LLM backends behind one small interface (`LLM`): scripted (tests), embedded
llama.cpp, and any OpenAI-compatible server."""

from memagent.llm.base import LLM, ChatResult, LLMError, Message, Usage, as_messages
from memagent.llm.factory import load_llm
from memagent.llm.scripted import ScriptedCall, ScriptedLLM, ScriptExhausted

__all__ = [
    "LLM",
    "ChatResult",
    "LLMError",
    "Message",
    "ScriptExhausted",
    "ScriptedCall",
    "ScriptedLLM",
    "Usage",
    "as_messages",
    "load_llm",
]
