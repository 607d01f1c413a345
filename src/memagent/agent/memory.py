"""The agent's way into one memory home (`MemoryAccess`): context before a turn, storing after it,
the default memory tools, and all-or-nothing batches.

- `context(message)`: `user.md` always (when it holds more than the starter
  text), then hybrid recall over chunks, notes and profile facts, within a token
  budget. Without a chunk store (or its index) the profile facts are listed
  instead. Nothing here calls an LLM.
- `store_exchange(...)`: one chunk per exchange whose content is what the user
  said (small talk such as "Hello!" or "thanks" is not stored: nothing to
  recall); the reply stays in `source.reply` (and the conversation record). The
  source marks it `role: user`, `type: statement | question`: the index down-
  weights questions (`memagent.index.non_fact`), and the context leaves
  them out, so a question never comes back as if it were a fact. So are the
  assistant's own words (an imported reply, a stored reply), except for a
  question about them ("remind me of the book you suggested": `asks_about_assistant`).
- Recall in context keeps only relevant hits: a keyword match, or a cosine
  similarity of at least `MIN_COSINE`; each line carries the date it was said.
  Speaker attribution (`attribute`): a question naming a speaker of the recalled
  lines sees only lines by or about that person, and is refused when lines about
  others match it clearly better (it asks about someone else's life).
- `journaled_vault`: the agent's vault is a `JournaledVault` (on the stores'
  backend), so a failed batch is rolled back (`rollback`) and never left
  half-applied.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any, TypedDict

from memagent.agent.attribution import Attribution, attribute
from memagent.agent.dates import ago_unit, annotate, elapsed
from memagent.agent.excerpt import excerpt
from memagent.agent.recalled import (
    EXCHANGE_KIND,
    MIN_COSINE,
    MemorySource,
    RecalledJson,
    RecalledMemory,
)
from memagent.agent.tools import Tool
from memagent.core import InvalidInput, MemagentError, MemoryHome, NotFound
from memagent.core.home import STARTER_USER_MD
from memagent.index import (
    MAX_QUERY_CHARS,
    QueryFacts,
    facts_of,
    is_question,
    looks_like_request,
    non_fact,
    said_by_assistant,
)
from memagent.index.breadth import asks_for_list
from memagent.memory.vault import JournaledVault
from memagent.stores import Stores

if TYPE_CHECKING:
    from memagent.memory.chunks import ChunkStore
    from memagent.memory.profile.answers import ProfileAnswer

__all__ = [
    "EXCHANGE_KIND",
    "MAX_MESSAGE_CHARS",
    "MIN_COSINE",
    "QUESTION_TAG",
    "JournaledVault",
    "MemoryAccess",
    "MemoryContext",
    "MemorySource",
    "RecalledMemory",
    "count_tokens",
    "is_question",
    "journaled_vault",
    "looks_like_request",
    "relevant",
]

QUESTION_TAG = "question"
MAX_MESSAGE_CHARS = 20_000
LIST_K_FACTOR = 2
"""A question asking for a list (`index.breadth.asks_for_list`) gets this many times
`recall_k` lines: its items were said on different days (LoCoMo dev multi-hop:
evidence in the top 5 of recall 40%, top 10 55%)."""


def count_tokens(text: str) -> int:
    """A cheap token estimate (about four characters a token) for budgets."""
    return len(text) // 4 + 1


def journaled_vault(stores: Stores, actor: str) -> JournaledVault:
    """A journaled vault on the backend of `stores` (files, or the database)."""
    if stores.db is None:
        return JournaledVault(stores.need_home("notes"), actor=actor)
    from memagent.postgres.vault import PgJournaledVault

    return PgJournaledVault(
        stores.db, stores.user, config=stores.config, actor=actor, embedder=stores.chunks.embedder
    )


class ForgetResult(TypedDict):
    """What the `forget` tool gives back (and a rolled-back batch restores)."""

    id: str
    deleted: bool


@dataclass
class MemoryContext:
    """What was put in context for one turn."""

    text: str
    tokens: int
    sources: list[MemorySource] = field(default_factory=list)
    about_others: list[str] = field(default_factory=list)
    """Set when recall says the message asks about someone else's life: the
    person it names (speaker attribution, `attribute`); the reply is then a refusal."""
    named: list[str] = field(default_factory=list)
    """Speakers of the recalled lines that the message names."""
    speakers: list[str] = field(default_factory=list)
    """Speakers of the recalled lines, the most frequent first."""
    profile_unsure: str | None = None
    """Set when the question asks about something the profile and a recalled line
    disagree on, neither clearly the latest: the reply that says so
    (`memory.profile.answers`)."""
    hits: list[RecalledMemory] = field(default_factory=list)
    """The recalled memories put in context, in their order."""


class MemoryAccess:
    """What an agent's turn reads and writes of one memory home: the context before
    it, the exchange after it, the memory tools and the journaled vault (thread-safe:
    the background writer shares it). Not `memagent.Memory`, the Python API over a
    home, nor `memagent.memory`, the stores' package: this is the agent's way in."""

    def __init__(
        self,
        home: MemoryHome,
        *,
        embeddings: bool | None = None,
        actor: str = "agent",
        stores: Stores | None = None,
    ) -> None:
        """`stores`: the user's stores opened elsewhere (shared, not closed here);
        by default the home's own are opened."""
        self.home = home.require()
        self.actor = actor
        self._owns_stores = stores is None
        self.stores = stores if stores is not None else Stores(home, embeddings=embeddings)
        self.vault = journaled_vault(self.stores, actor)
        self._chunks_error: str | None = None
        self._lock = self.stores.lock
        self.undo_log: list[tuple[str, str]] = []

    # -- stores ---------------------------------------------------------------------
    @property
    def chunks(self) -> ChunkStore | None:
        """The chunk store, or None when it cannot be opened (reason in `chunks_error`)."""
        with self._lock:
            if self._chunks_error is None:
                try:
                    return self.stores.chunks
                except (ImportError, MemagentError, OSError) as exc:
                    self._chunks_error = f"{type(exc).__name__}: {exc}"
            return None

    @property
    def chunks_error(self) -> str | None:
        return self._chunks_error

    def close(self) -> None:
        with self._lock:
            if self._owns_stores:
                self.stores.close()

    # -- reading ----------------------------------------------------------------------
    def user_md(self) -> str:
        try:
            text = self.vault.read("user.md")
        except MemagentError:
            return ""
        return "" if text.strip() == STARTER_USER_MD.strip() else text.strip()

    def profile_lines(self) -> list[str]:
        try:
            store = self.stores.profile
            resources = store.load_all()
            today = store.today()
        except (ImportError, MemagentError, OSError):
            return []
        lines = []
        for name, res in resources.items():
            label = name.removeprefix("resource_").removesuffix(".json").replace("_", " ")
            for path, items in res.iter_lists():
                for item in items:
                    if not item.expired(today):
                        lines.append(f"{label} / {path}: {item.display}")
        return lines

    def profile_answer(self, message: str, hits: list[RecalledMemory]) -> ProfileAnswer | None:
        """The profile for a question about the user: the question's topic first, and
        where the user's recalled lines disagree with it (`memory.profile.answers`)."""
        from memagent.memory.profile.answers import Said, for_question

        said = [
            Said.of(str(h.user or h.content), h.created_at)
            for h in hits
            if (h.user or _own_line(h))
            and h.user != message.strip()
            and h.relevant()
            and not non_fact(h.source)
        ]
        try:
            store = self.stores.profile
            return for_question(store.load_all(), store.today(), message, said)
        except (ImportError, MemagentError, OSError):
            return None

    def recall(self, query: str, k: int = 5, *, now: float | None = None) -> list[RecalledJson]:
        """Hybrid search over chunks, notes and profile facts, as the `recall` tool
        gives them (JSON); `now` (epoch seconds, default the clock) is when the
        question is asked."""
        return [h.to_json() for h in self.recalled(query, k, now=now)]

    def recalled(
        self, query: str | QueryFacts, k: int = 5, *, now: float | None = None
    ) -> list[RecalledMemory]:
        """`recall` as typed values; `query` may be the message's `QueryFacts`."""
        text = query.text if isinstance(query, QueryFacts) else query
        if not isinstance(text, str) or not text.strip():
            raise InvalidInput("recall needs a non-empty query")
        if len(text) > MAX_QUERY_CHARS:
            raise InvalidInput(f"query is longer than {MAX_QUERY_CHARS} characters")
        store = self.chunks
        if store is None:
            raise NotFound(f"memory search is unavailable: {self._chunks_error}")
        with self._lock:
            hits = [RecalledMemory.of(h) for h in store.recall(query, k=k + 1, now=now)]
        if not self.user_md():  # the untouched starter note is noise, not memory
            hits = [h for h in hits if h.id != "note:vault/user.md"]
        return hits[:k]

    def read_chunk(self, memory_id: str) -> str:
        store = self.chunks
        if store is None:
            raise NotFound(f"memory search is unavailable: {self._chunks_error}")
        with self._lock:
            return store.get(memory_id).content

    def context(
        self,
        message: str | QueryFacts,
        *,
        budget_tokens: int,
        k: int,
        min_ratio: float = 0.0,
        now: float | None = None,
    ) -> MemoryContext:
        """Memory for the model before it answers `message` (its `QueryFacts`, or
        its text, read here; see the module doc); `now` (epoch seconds, default the
        clock; with a text only): when it is asked (`--as-of`)."""
        facts = facts_of(message, now)
        lines: list[str] = []
        sources: list[MemorySource] = []
        used = 0
        if k > 0 and asks_for_list(facts.text):  # each item was said on another day
            k *= LIST_K_FACTOR

        def add(line: str, source: MemorySource) -> bool:
            nonlocal used
            cost = count_tokens(line)
            if used + cost > budget_tokens:
                return False
            lines.append(line)
            sources.append(source)
            used += cost
            return True

        user = self.user_md()
        if user:
            head = user if count_tokens(user) <= budget_tokens // 2 else user[: budget_tokens * 2]
            add(f"- Notes (user.md): {' '.join(head.split())}", MemorySource("note", "user.md"))
        hits: list[RecalledMemory] = []
        who = Attribution([])
        if k > 0 and self.chunks is not None:
            try:
                hits = self.recalled(facts, k=min(k * 3, 50))
            except MemagentError:
                hits = []
        view = self.profile_answer(facts.text, hits) if k > 0 and facts.about_user else None
        facts_lines = view.lines if view is not None else []
        for fact in facts_lines:  # a question about the user: their profile, with dates
            if not add(f"- Profile: {fact}", MemorySource("fact")):
                break
        if k > 0 and self.chunks is None and not facts_lines:
            for fact in self.profile_lines():
                if not add(f"- Profile: {fact}", MemorySource("fact")):
                    break
        said_now = facts.text.strip()
        hits = [h for h in hits if h.id not in ("note:vault/user.md", "user.md")]
        hits = [h for h in hits if not (facts_lines and h.kind == "fact")]
        hits = [h for h in hits if h.user != said_now]
        mine = facts.about_assistant  # "remind me of the book you suggested"
        hits = [h for h in hits if relevant(h) and (not non_fact(h.source) or (mine and _by_me(h)))]
        who = attribute(hits, facts, k=k)
        said = Counter(s for h in hits if (s := h.speaker))
        hits = who.hits
        if hits and min_ratio > 0:
            best = max(h.score for h in hits)
            hits = [h for h in hits if h.score >= best * min_ratio]
        hits.sort(key=lambda h: (QUESTION_TAG in h.tags, -h.score))
        unit = ago_unit(facts.text)  # "how many weeks ago…": each line says how long before
        asked = datetime.fromtimestamp(facts.now, UTC).date()
        shown: list[RecalledMemory] = []
        for hit in hits[:k]:
            line = _context_line(hit, (unit, asked) if unit else None, facts.text, replies=mine)
            if not add(line, MemorySource(hit.kind, hit.id)):
                break
            shown.append(hit)
        return MemoryContext(
            "\n".join(lines),
            used,
            sources,
            who.named if who.others_answer else [],
            who.named,
            [s for s, _ in said.most_common()],
            view.unsure if view is not None else None,
            shown,
        )

    # -- writing ----------------------------------------------------------------------
    def store_exchange(
        self, conversation_id: str, user: str | QueryFacts, reply: str, *, turn: int
    ) -> list[str]:
        """Store one exchange (what the user said: its text, or its `QueryFacts`) as a
        chunk; returns the new chunk ids ([] when no store)."""
        store = self.chunks
        facts = user if isinstance(user, QueryFacts) else None
        text = facts.text if facts is not None else str(user)
        if store is None or not text.strip():
            return []
        if facts is None:
            facts = QueryFacts.read(text)
        if facts.small_talk:
            return []  # "Hello!", "thanks": kept in the conversation record only
        question = facts.request
        tags = ["conversation"] + ([QUESTION_TAG] if question else [])
        # Only what the user said is searchable. The reply is the model's claim, not
        # something the user told us: searchable, a wrong answer would come back as
        # memory and be repeated. It stays in `source.reply` and the conversation.
        content = text.strip()
        source = {
            "kind": EXCHANGE_KIND,
            "role": "user",
            "type": QUESTION_TAG if question else "statement",
            "user": text.strip()[:4000],
            "reply": reply.strip()[:4000],
            "turn": turn,
        }
        with self._lock:
            chunk = store.create(
                content[: self.home.config.limits.max_file_bytes // 4],
                tags=tags,
                conversation_id=conversation_id[:200],
                agent_id="memagent",
                source=source,
            )
        return [chunk.id]

    def remember(self, text: str, tags: list[str] | None = None) -> list[str]:
        """Store a memory (split into chunks when long); returns the chunk ids."""
        store = self.chunks
        if store is None:
            raise NotFound(f"episodic memory is unavailable: {self._chunks_error}")
        with self._lock:
            chunks = store.remember(text, tags=list(tags or []))
        return [c.id for c in chunks]

    def forget(self, memory_id: str) -> ForgetResult:
        """Soft-delete a memory by id (it can be restored)."""
        store = self.chunks
        if store is None:
            raise NotFound(f"episodic memory is unavailable: {self._chunks_error}")
        with self._lock:
            chunk = store.soft_delete(memory_id)
        return {"id": chunk.id, "deleted": True}

    def undo_tool(self, name: str, value: Any) -> None:
        """Undo a memory tool's effect (a rolled-back batch)."""
        store = self.chunks
        if store is None:
            return
        with self._lock:
            if name == "remember":
                for cid in value:
                    with contextlib.suppress(MemagentError):
                        store.hard_delete(cid)
            elif name == "forget":
                with contextlib.suppress(MemagentError):
                    store.restore(value["id"])

    def tools(self) -> list[Tool]:
        """The default memory tools (besides the vault actions)."""

        def recall(query: str, k: int = 5) -> list[RecalledJson]:
            """Search all memory (past conversations, notes, profile facts) for a query."""
            return self.recall(query, k=max(1, min(k, 20)))

        def remember(text: str, tags: list[str] | None = None) -> list[str]:
            """Store a memory for later; returns its ids."""
            return self.remember(text, tags)

        def forget(memory_id: str) -> ForgetResult:
            """Delete a memory by its id (from recall results)."""
            return self.forget(memory_id)

        return [Tool.of(f, default=True) for f in (recall, remember, forget)]


def relevant(hit: RecalledMemory) -> bool:
    """Worth showing the model (`RecalledMemory.relevant`): a keyword match, or close
    enough in meaning (at least `MIN_COSINE`)."""
    return hit.relevant()


def _own_line(hit: RecalledMemory) -> bool:
    """A line the user said themselves (an imported line that names another speaker
    is theirs, even with role user)."""
    source = hit.source or {}
    return source.get("role") == "user" and not source.get("speaker")


REPLY_CHARS = 1200
"""How much of an assistant's reply a question about it sees (other lines: 400)."""


def _by_me(hit: RecalledMemory) -> bool:
    """The assistant's own words: an imported reply, or a stored exchange's reply.
    Context leaves them out (the model's claims, not what people said) except for a
    question about them (`roles.asks_about_assistant`)."""
    return said_by_assistant(hit.source) or hit.reply is not None


def _said_on(hit: RecalledMemory) -> date | None:
    stamp = str(hit.created_at or "")
    try:
        return datetime.fromisoformat(stamp[:10]).date()
    except ValueError:
        return None


def _when(day: date | None, ago: tuple[str, date] | None = None) -> str:
    """`[8 May 2023] `: the words a person (and LoCoMo's gold answers) use for a
    date, so an answer can quote it. `ago` (the unit a "how many weeks ago"
    question asks in, the day it is asked): `[8 May 2023, 3 weeks before the
    question] `, the count computed here rather than by the model."""
    if not day:
        return ""
    since = elapsed(day, ago[1], ago[0]) if ago else None
    return f"[{day.day} {day:%B %Y}, {since}] " if since else f"[{day.day} {day:%B %Y}] "


def _context_line(
    hit: RecalledMemory,
    ago: tuple[str, date] | None = None,
    question: str = "",
    *,
    replies: bool = False,
) -> str:
    """One memory line for the context; a long one keeps the part that bears on
    `question` (`agent.excerpt`). `replies`: a stored exchange shows the assistant's
    reply too (the question asks what the assistant said)."""
    day = _said_on(hit)

    def text(raw: object, limit: int) -> str:
        flat = excerpt(" ".join(str(raw).split()), question, limit)
        return annotate(flat, day) if day else flat

    src = hit.source or {}
    # a reply asked about is often a list ("the last venue you recommended"): more of it
    content = text(hit.content, REPLY_CHARS if replies and said_by_assistant(src) else 400)
    when = _when(day, ago)
    if hit.user:
        line = f"- {when}You said: {text(hit.user, 400)}"
        if replies and hit.reply is not None:
            line += f" The assistant replied: {text(hit.reply, REPLY_CHARS)}"
        return line
    if hit.kind == "note":
        return f"- Note ({hit.path or hit.id}): {content}"
    if hit.kind == "fact":
        return f"- Profile: {content[:300]}"
    speaker = src.get("speaker")
    if said_by_assistant(src) and not (isinstance(speaker, str) and speaker):
        return f"- {when}The assistant said: {content}"
    if isinstance(speaker, str) and speaker:
        # an imported line already names its speaker ("Caroline: …"): not "You said"
        said = content.startswith(f"{speaker}:")
        return f"- {when}{content}" if said else f"- {when}{speaker} said: {content}"
    if src.get("role") == "user":
        return f"- {when}You said: {content}"
    return f"- {when}{content}"
