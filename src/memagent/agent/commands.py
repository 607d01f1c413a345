"""Chat commands (`/help`, `/history`, `/forget ID`, …): handled by the agent
itself, never sent to the model, never stored as memory or in the conversation.

`/forget`, `/edit` and `/undo` take any id `/recall` prints (a memory, a note or
a profile fact); `memory_refs` says what each does to each kind.

A message is a command when it starts with `/` and a known or unknown command
word (`/help`, `/foo bar`); a path such as `/etc/hosts is big` is not.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from memagent.agent import memory_refs
from memagent.agent.conversations import ConversationMessage
from memagent.agent.memory import MemoryAccess
from memagent.core import MemagentError

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
    "forget": "forget a memory, note or fact by its id from /recall (/forget ID)",
    "edit": "change what a memory, note or fact says (/edit ID NEW TEXT)",
    "undo": "undo the last change to a memory, note or fact (/undo ID)",
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


USAGE = {
    "recall": "Usage: /recall QUERY",
    "forget": "Usage: /forget ID (ids come from /recall)",
    "edit": "Usage: /edit ID NEW TEXT (ids come from /recall)",
    "undo": "Usage: /undo ID (ids come from /recall)",
}
WHAT = {"forget": "forget", "edit": "edit", "undo": "undo the last change to"}


def help_text() -> str:
    width = max(len(n) for n in COMMANDS) + 1
    lines = ["Commands (handled here, never sent to the model or stored):"]
    lines += [f"  /{name:<{width}} {what}" for name, what in COMMANDS.items()]
    lines.append("Anything else is a message to the assistant.")
    return "\n".join(lines)


class CommandHost(Protocol):
    """What a command needs of the agent whose chat it is typed in."""

    memory: MemoryAccess

    def flush(self) -> None:
        """Wait for the background writes of earlier turns (so /recall sees them)."""

    def new_conversation(self) -> str:
        """Start a new conversation; its id."""

    def recent_messages(self, n: int) -> Sequence[ConversationMessage]:
        """The last `n` messages of this conversation."""


def answer_command(command: Command, host: CommandHost) -> str:
    """The answer to `command`: text for the user, never an exception for a
    failed recall or forget (the reason is in the answer)."""
    name, arg = command.name, command.arg
    if name == "help":
        return help_text()
    if name == "exit":
        return "Goodbye."
    if name == "new":
        return f"Started a new conversation ({host.new_conversation()})."
    if name == "history":
        msgs = host.recent_messages(
            int(arg) if arg.isdigit() and len(arg) <= 3 and 0 < int(arg) <= 200 else 10
        )
        if not msgs:
            return "Nothing said yet in this conversation."
        return "\n".join(f"{'you' if m.role == 'user' else 'assistant'}: {m.content}" for m in msgs)
    if name in USAGE and not arg:
        return USAGE[name]
    if name == "recall":
        host.flush()  # earlier turns of this chat are stored in the background
        try:
            hits = host.memory.recall(arg, k=5)
        except MemagentError as exc:
            return f"Recall failed: {exc}"
        if not hits:
            return "Nothing in memory matches that."
        return "\n".join(f"{h['id']}  {' '.join(str(h['content']).split())[:120]}" for h in hits)
    if name in ("forget", "edit", "undo"):
        return _change(name, arg, host)
    known = ", ".join(f"/{c}" for c in COMMANDS)
    return f"Unknown command /{name}. Commands: {known} (/help explains them)."


def _change(name: str, arg: str, host: CommandHost) -> str:
    """/forget, /edit or /undo on the id that starts `arg`: the outcome, or why not."""
    ref, _, text = arg.partition(" ")
    if name == "edit" and not text.strip():
        return "Usage: /edit ID NEW TEXT: give the new text after the id."
    host.flush()
    shown = ref if len(ref) <= 60 else ref[:59] + "…"
    try:
        if name == "forget":
            return memory_refs.forget(host.memory, ref)
        if name == "edit":
            return memory_refs.edit(host.memory, ref, text)
        return memory_refs.undo(host.memory, ref)
    except MemagentError as exc:
        return f"Could not {WHAT[name]} {shown}: {exc}"
