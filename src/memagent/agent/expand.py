"""Query expansion with the LLM, for `memagent recall --deep`.

A question names a category ("art-related events", "furniture"); the memory that
answers it names a member ("the gallery opening", "the bookshelf I sold"). The
LLM lists words the person may have used — synonyms, kinds, related words — and
recall searches the question together with them (keywords OR-ed, one embedding
of the whole), so a turn that says "gallery" now matches "art-related events".
The LongMemEval paper expands its *keys* with extracted facts at index time;
this expands the *query*, costs one short generation per recall and nothing at
`remember` time. Opt-in (`--deep`): the plain recall never waits for a model.

The model's reply is untrusted text: it is split on commas and new lines, each
term stripped of control characters, lower-cased, de-duplicated, cut to
`MAX_TERM_CHARS`; at most `MAX_TERMS` are kept and the expanded query never
exceeds the search limit. A reply with no usable term leaves the query as it is.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from memagent.agent.prompts import load_prompt_set
from memagent.core import InvalidInput
from memagent.index import MAX_QUERY_CHARS
from memagent.llm import LLM, Message

MAX_TERMS = 12
MAX_TERM_CHARS = 60
MAX_REPLY_TOKENS = 80

_SPLIT = re.compile(r"[,\n;]+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_EDGE = re.compile(r"^[\s\-*•\d.)\"'`]+|[\s.\"'`]+$")


@dataclass
class Expansion:
    """A question and the terms the model added to it."""

    query: str
    terms: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def expanded(self) -> str:
        """The query recall runs: the question, then the terms."""
        if not self.terms:
            return self.query
        out = self.query
        for t in self.terms:
            if len(out) + len(t) + 2 > MAX_QUERY_CHARS:
                break
            out += (" " if out == self.query else ", ") + t
        return out


def parse_terms(reply: str, query: str = "") -> list[str]:
    """The usable terms of a model reply (see the module docstring)."""
    if not isinstance(reply, str):
        return []
    asked = query.lower().strip()
    terms: list[str] = []
    for raw in _SPLIT.split(reply[: 20 * MAX_TERMS * MAX_TERM_CHARS]):
        t = _EDGE.sub("", _CONTROL.sub(" ", raw)).strip().lower()
        t = " ".join(t.split())[:MAX_TERM_CHARS].strip()
        if not t or t in terms or t == asked or not re.search(r"\w", t):
            continue
        terms.append(t)
        if len(terms) >= MAX_TERMS:
            break
    return terms


def expand_query(llm: LLM, query: str) -> Expansion:
    """Ask `llm` for search terms of `query`. Errors of the model (`LLMError`)
    propagate; the caller decides whether to fall back to the plain query."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidInput("query is empty")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidInput(f"query is {len(query)} characters; the limit is {MAX_QUERY_CHARS}")
    prompts = load_prompt_set("expand")
    messages = [
        Message(role="system", content=prompts.render("system")),
        Message(role="user", content=prompts.render("user_turn", message=query.strip())),
    ]
    t0 = time.perf_counter()
    reply = llm.chat(messages, max_tokens=MAX_REPLY_TOKENS, temperature=0.0)
    return Expansion(query, parse_terms(reply.text, query), time.perf_counter() - t0)
