"""Chat commands (`/help`, `/history`, `/forget ID`, …): handled by the agent
itself, never sent to the model, never stored as memory or in the conversation.

A message is a command when it starts with `/` and a known or unknown command
word (`/help`, `/foo bar`); a path such as `/etc/hosts is big` is not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_COMMAND = re.compile(r"^/([A-Za-z][A-Za-z-]{0,31})(?:\s+(.*))?$", re.DOTALL)


@dataclass(frozen=True)
class Command:
    name: str
    arg: str


COMMANDS: dict[str, str] = {
    "help": "list these commands",
    "exit": "leave the chat (also /quit)",
    "history": "show the last messages of this conversation (/history N)",
    "recall": "show what memory holds for a query (/recall QUERY)",
    "forget": "delete a memory by its id, from /recall (/forget ID; it can be restored)",
    "new": "start a new conversation",
}
ALIASES = {"quit": "exit", "bye": "exit", "h": "help", "?": "help", "memory": "recall"}


def parse_command(message: str) -> Command | None:
    """The command in `message`, or None when it is an ordinary message."""
    text = message.strip()
    if text == "/?":
        return Command("help", "")
    m = _COMMAND.match(text)
    if m is None:
        return None
    name = m.group(1).lower()
    return Command(ALIASES.get(name, name), (m.group(2) or "").strip())


def help_text() -> str:
    width = max(len(n) for n in COMMANDS) + 1
    lines = ["Commands (handled here, never sent to the model or stored):"]
    lines += [f"  /{name:<{width}} {what}" for name, what in COMMANDS.items()]
    lines.append("Anything else is a message to the assistant.")
    return "\n".join(lines)
