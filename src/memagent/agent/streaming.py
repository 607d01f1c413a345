"""Showing the reply while the model is still writing its step.

The step arrives as JSON (`{"think": …, "reply": "…"}`) or tagged text
(`<reply>…</reply>`); `ReplyStreamer` finds the reply in the growing text and
passes on each newly decoded piece. It stays silent for a step that has
actions or code before its reply: that reply may still be dropped if they fail.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

_JSON_REPLY = re.compile(r'"reply"\s*:\s*"')
_TAG_REPLY = re.compile(r"<\s*reply\s*>", re.IGNORECASE)
_TAG_END = re.compile(r"<\s*/\s*reply\s*>", re.IGNORECASE)
_ACTING = re.compile(r'"(actions|python)"\s*:|<\s*(actions|python)\s*>', re.IGNORECASE)


def _decoded_prefix(raw: str) -> str:
    """The longest decodable prefix of a JSON string body (without the quotes)."""
    end = len(raw)
    i = 0
    while i < len(raw):
        c = raw[i]
        if c == "\\":
            i += 2
            continue
        if c == '"':
            end = i
            break
        i += 1
    body = raw[:end]
    for cut in range(len(body), max(len(body) - 7, -1), -1):
        try:
            return str(json.loads('"' + body[:cut] + '"'))
        except json.JSONDecodeError:
            continue
    return ""


class ReplyStreamer:
    """`shape` maps the reply so far to what may be shown of it yet (default: all);
    it must only grow as the reply grows (see `memagent.agent.voice.stable_prefix`)."""

    def __init__(
        self, on_text: Callable[[str], None], shape: Callable[[str], str] | None = None
    ) -> None:
        self.on_text = on_text
        self.shape = shape
        self.buffer = ""
        self.emitted = ""

    def feed(self, piece: str) -> None:
        self.buffer += piece
        text = self._reply_so_far()
        if text is not None and self.shape is not None:
            text = self.shape(text)
        if text is not None and len(text) > len(self.emitted) and text.startswith(self.emitted):
            delta = text[len(self.emitted) :]
            self.emitted = text
            self.on_text(delta)

    def _reply_so_far(self) -> str | None:
        buf = self.buffer
        m = _JSON_REPLY.search(buf)
        if m:
            if _ACTING.search(buf, 0, m.start()):
                return None
            return _decoded_prefix(buf[m.end() :])
        m = _TAG_REPLY.search(buf)
        if m:
            if _ACTING.search(buf, 0, m.start()):
                return None
            rest = buf[m.end() :]
            end = _TAG_END.search(rest)
            if end:
                return rest[: end.start()].strip()
            # hold back what could be the start of the closing tag
            cut = rest.rfind("<")
            return (rest[:cut] if cut >= 0 else rest).lstrip()
        return None
