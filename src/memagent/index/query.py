"""One reading of a message: `QueryFacts`.

A message (a question put to recall, or a user's turn of the agent) is read
once, when it arrives, into a frozen value: its keyword terms and words, the
times it names (given when it is asked), whether it asks for a quantity
(`answers`), needs several conversations (`breadth`) or asks about the
assistant's own words (`roles`), whether it is a request or small talk and
speaks of the user (`asking`), and the person or thing of the user's it asks
about (`owner`). Recall's signals, speaker attribution, the focus check and the
agent's turn all read that value; none of them reads the text again.

`QueryFacts.read(text, now)` makes it; `now` (epoch seconds; None: the clock)
is when the message is asked, so "last week" and every time-dependent signal
count from there. Reading never fails and costs linear time in the text;
whether a text may be searched at all (`check_query`: not empty, at most
`MAX_QUERY_CHARS`) is the search's question.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

from memagent.core import InvalidInput
from memagent.index.answers import asks_quantity
from memagent.index.asking import about_user, is_personal, is_small_talk, looks_like_request
from memagent.index.breadth import wants_many
from memagent.index.owner import Focus, focus_of
from memagent.index.roles import asks_about_assistant
from memagent.index.temporal import TimeRange, time_ranges

MAX_QUERY_CHARS = 4000
"""The longest text recall searches (every backend, every entry point)."""
WORD = re.compile(r"[^\W_]+", re.UNICODE)
"""A word of a query or a memory, as the keyword search splits them."""
STOPWORDS = frozenset(
    line.strip()
    for line in (Path(__file__).with_name("stopwords.txt")).read_text("utf-8").splitlines()
    if line.strip() and not line.startswith("#")
)


def query_terms(text: str) -> list[str]:
    """Keyword terms of a text: lower-cased words, no stop words, possessives cut."""
    terms: list[str] = []
    for raw in WORD.findall(text.lower()):
        if raw in STOPWORDS or (len(raw) == 1 and not raw.isdigit()):
            continue
        if raw not in terms:
            terms.append(raw)
    return terms


def check_query(query: object, k: int) -> None:
    """Refuse what no backend may search for: an empty or oversized query, k < 1."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidInput("query is empty")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidInput(f"query is {len(query)} characters; the limit is {MAX_QUERY_CHARS}")
    if k < 1:
        raise InvalidInput("k must be at least 1")


@dataclass(frozen=True)
class QueryFacts:
    """What one message says about what it wants (module doc). Make it with `read`."""

    text: str
    now: float
    """When it is asked (epoch seconds): "now" for its relative times and for recall."""
    terms: tuple[str, ...]
    """Keyword terms (`query_terms`): no stop words, each once, in order."""
    words: tuple[str, ...]
    """Every word, lower-cased, each once, in order (the keyword search's fallback
    when the message is nothing but stop words: "who am I")."""
    word_set: frozenset[str]
    """The same words as a set (a speaker the message names is one of them)."""
    time_ranges: tuple[TimeRange, ...]
    """The times it names ("in May 2023", "two weeks ago"), relative to `now`."""
    quantity: bool
    """It asks for a quantity ("how many…", "how much…"; `answers`)."""
    breadth: bool
    """It counts, adds up, compares, orders or asks what changed (`breadth`)."""
    about_assistant: bool
    """It asks about something the assistant said (`roles`)."""
    request: bool
    """A question or a request for information (`asking`)."""
    small_talk: bool
    """A greeting, thanks or bare acknowledgement: nothing to store (`asking`)."""
    about_user: bool
    """It speaks of the user (I, me, my): their profile belongs in context."""
    personal: bool
    """It asks about the user's own life (my, I, we)."""
    focus: Focus | None
    """The person or thing of the user's it asks about, and the attribute (`owner`)."""

    @classmethod
    def read(cls, text: str, now: float | None = None) -> QueryFacts:
        """Read `text` once (see the module doc); `now` None is the clock."""
        when = time.time() if now is None else float(now)
        words = tuple(dict.fromkeys(WORD.findall(text.lower())))
        return cls(
            text=text,
            now=when,
            terms=tuple(query_terms(text)),
            words=words,
            word_set=frozenset(words),
            time_ranges=tuple(time_ranges(text, when)),
            quantity=asks_quantity(text),
            breadth=wants_many(text),
            about_assistant=asks_about_assistant(text),
            request=looks_like_request(text),
            small_talk=is_small_talk(text),
            about_user=about_user(text),
            personal=is_personal(text),
            focus=focus_of(text),
        )

    def names(self, name: str) -> bool:
        """Whether the message names `name` (a speaker of the recalled lines) as a
        word of its own: "Caroline" in "What did Caroline do?", not in "Carolines"."""
        return re.search(rf"(?<![\w'])({re.escape(name)})(?!\w)", self.text) is not None


def facts_of(query: QueryFacts | str, now: float | None = None) -> QueryFacts:
    """`query` itself when it was read already, else its reading at `now`. `now`
    is refused with facts: they carry when they were asked."""
    if isinstance(query, QueryFacts):
        if now is not None and now != query.now:
            raise InvalidInput("the query was read with its own 'now'; give it once")
        return query
    return QueryFacts.read(query, now)
