"""The agent: a memory assistant loop over one memory home (DESIGN.md part 5).

`Agent(home, llm).turn(message)` puts relevant memory in context, asks the
model for steps (JSON actions or sandboxed Python), runs them all-or-nothing,
and replies (three steps: `prepare`, `act`, `finish`); the exchange is stored
before the reply, the rest in the background. Personas, the HUD,
traces and saved conversations live beside it.
"""

from memagent.agent.conversations import Conversation, Conversations
from memagent.agent.deep import DeepResult, deep_ask
from memagent.agent.hud import hud_status, render_hud, write_hud
from memagent.agent.loop import Agent
from memagent.agent.memory import MemoryAccess, MemoryContext, MemorySource
from memagent.agent.personas import Persona, Personas, Slider, init_personas
from memagent.agent.protocol import Step, StepInvalid, parse_step, step_schema
from memagent.agent.tools import Tool, ToolRegistry
from memagent.agent.traces import Trace, Traces
from memagent.agent.turn import TurnResult

__all__ = [
    "Agent",
    "Conversation",
    "Conversations",
    "DeepResult",
    "MemoryAccess",
    "MemoryContext",
    "MemorySource",
    "Persona",
    "Personas",
    "Slider",
    "Step",
    "StepInvalid",
    "Tool",
    "ToolRegistry",
    "Trace",
    "Traces",
    "TurnResult",
    "deep_ask",
    "hud_status",
    "init_personas",
    "parse_step",
    "render_hud",
    "step_schema",
    "write_hud",
]
