"""The agent's view of one memory home: context before a turn, storing after it,
the default memory tools, and all-or-nothing batches.

- `context(message)`: `user.md` always (when it holds more than the starter
  text), then hybrid recall over chunks, notes and profile facts, within a token
  budget. Without a chunk store (or its index) the profile facts are listed
  instead. Nothing here calls an LLM.
- `store_exchange(...)`: one chunk per exchange whose content is what the user
  said (small talk such as "Hello!" or "thanks" is not stored: nothing to
  recall); the reply stays in `source.reply` (and the conversation record). The
  source marks it `role: user`, `type: statement | question`: the index down-
  weights questions (`memagent.index.search.non_fact`), and the context leaves
  them out, so a question never comes back as if it were a fact.
- Recall in context keeps only relevant hits: a keyword match, or a cosine
  similarity of at least `MIN_COSINE`; each line carries the date it was said.
  Speaker attribution (`attribute`): a question naming a speaker of the recalled
  lines sees only lines by or about that person, and is refused when lines about
  others match it clearly better (it asks about someone else's life).
- `JournaledVault`: a `Vault` that remembers what each file held before its
  first write in a batch, so a failed batch is rolled back (`rollback`) and
  never left half-applied.
"""

from __future__ import annotations

import contextlib
import functools
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any

from memagent.agent.attribution import Attribution, attribute, speaker_of
from memagent.agent.dates import ago_unit, annotate, elapsed
from memagent.agent.tools import Tool
from memagent.agent.voice import is_small_talk
from memagent.core import InvalidInput, MemagentError, MemoryHome, NotFound
from memagent.core.home import STARTER_USER_MD
from memagent.index.breadth import asks_for_list
from memagent.index.search import non_fact
from memagent.memory.vault import Vault
from memagent.stores import Stores

if TYPE_CHECKING:
    from memagent.memory.chunks import ChunkStore

EXCHANGE_KIND = "agent_exchange"
QUESTION_TAG = "question"
MIN_COSINE = 0.35
"""A hit with no keyword match must be at least this similar to the message."""
MAX_MESSAGE_CHARS = 20_000
LIST_K_FACTOR = 2
"""A question asking for a list (`index.breadth.asks_for_list`) gets this many times
`recall_k` lines: its items were said on different days (LoCoMo dev multi-hop:
evidence in the top 5 of recall 40%, top 10 55%)."""
_ABOUT_ME = re.compile(r"\b(i|i'm|me|my|mine|myself)\b", re.IGNORECASE)
"""A message about the user gets their profile facts in context."""


def count_tokens(text: str) -> int:
    """A cheap token estimate (about four characters a token) for budgets."""
    return len(text) // 4 + 1


_ASKING = frozenset(
    [
        "what",
        "who",
        "whom",
        "whose",
        "where",
        "when",
        "which",
        "why",
        "how",
        "do",
        "does",
        "did",
        "is",
        "are",
        "am",
        "was",
        "were",
        "can",
        "could",
        "will",
        "would",
        "should",
        "have",
        "has",
        "tell",
        "remind",
        "recall",
        "list",
        "show",
        "name",
    ]
)


def is_question(text: str) -> bool:
    return text.rstrip().endswith("?")


def looks_like_request(text: str) -> bool:
    """A question or a request for information ("tell me …"), by its form alone."""
    words = text.strip().lower().split(maxsplit=1)
    return is_question(text) or bool(words and words[0].strip(",.!:") in _ASKING)


class JournaledVault(Vault):
    """A vault whose writes can be undone as one batch (see `rollback`).

    Written over the vault's storage hooks, so it also journals a vault in the
    database (`journaled_vault` picks the backend of a user's stores)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("actor", "agent")
        super().__init__(*args, **kwargs)
        self.journal: dict[str, bytes | None] = {}
        self.made_dirs: list[str] = []

    def begin(self) -> None:
        self.journal = {}
        self.made_dirs = []

    def _save(self, path: object) -> None:
        try:
            loc = self.locate(path)
        except MemagentError:
            return  # the write itself will fail with the same error
        if not loc.rel or loc.rel in self.journal:
            return
        try:
            self.journal[loc.rel] = self._read_bytes(loc) if loc.kind == "file" else None
        except MemagentError:
            return  # unreadable (too big): the write itself fails the same way

    def create(self, path: str, content: str) -> dict[str, Any]:
        self._save(path)
        return super().create(path, content)

    def update(self, path: str, old_content: str, new_content: str) -> dict[str, Any]:
        self._save(path)
        return super().update(path, old_content, new_content)

    def append(self, path: str, content: str) -> dict[str, Any]:
        self._save(path)
        return super().append(path, content)

    def delete(self, path: str) -> dict[str, Any]:
        self._save(path)
        return super().delete(path)

    def mkdir(self, path: str) -> dict[str, Any]:
        out = super().mkdir(path)
        if out.get("created"):
            self.made_dirs.append(out["path"].rstrip("/"))
        return out

    def rollback(self) -> list[str]:
        """Put every file written since `begin` back as it was; returns their paths."""
        restored: list[str] = []
        with self._lock():
            for rel, before in reversed(list(self.journal.items())):
                loc = self.locate(rel)
                now = self._read_bytes(loc) if loc.kind == "file" else None
                if now == before:
                    continue
                if before is None:
                    self._remove(loc, "rollback", None)
                else:
                    self._write(loc, before, "rollback", None)
                restored.append(rel)
            for rel in reversed(self.made_dirs):
                with contextlib.suppress(OSError, MemagentError):
                    self._remove_dir(self.locate(rel), "rollback")
        self.begin()
        return restored


def journaled_vault(stores: Stores, actor: str) -> JournaledVault:
    """A journaled vault on the backend of `stores` (files, or the database)."""
    if stores.db is None:
        return JournaledVault(stores._need_home("notes"), actor=actor)
    return _pg_journaled()(
        stores.db, stores.user, config=stores.config, actor=actor, embedder=stores.chunks.embedder
    )


@functools.cache
def _pg_journaled() -> type[JournaledVault]:
    from memagent.postgres import PgVault

    class PgJournaledVault(JournaledVault, PgVault):
        """A journaled vault in the database."""

    return PgJournaledVault


@dataclass
class MemoryContext:
    """What was put in context for one turn."""

    text: str
    tokens: int
    sources: list[dict[str, Any]] = field(default_factory=list)
    about_others: list[str] = field(default_factory=list)
    """Set when recall says the message asks about someone else's life: the
    person it names (speaker attribution, `attribute`); the reply is then a refusal."""
    named: list[str] = field(default_factory=list)
    """Speakers of the recalled lines that the message names."""
    speakers: list[str] = field(default_factory=list)
    """Speakers of the recalled lines, the most frequent first."""
    hits: list[dict[str, Any]] = field(default_factory=list)
    """The recalled hits put in context, in their order (`recall`'s JSON)."""


class AgentMemory:
    """Memory access for one agent (thread-safe: the background writer shares it)."""

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

    def profile_facts(self) -> list[str]:
        """The live profile facts as short dated lines (`memory.profile.summary`)."""
        from memagent.memory.profile.summary import fact_lines

        try:
            store = self.stores.profile
            return fact_lines(store.load_all(), store.today())
        except (ImportError, MemagentError, OSError):
            return []

    def recall(self, query: str, k: int = 5, *, now: float | None = None) -> list[dict[str, Any]]:
        """Hybrid search over chunks, notes and profile facts; `now` (epoch seconds,
        default the clock) is when the question is asked."""
        if not isinstance(query, str) or not query.strip():
            raise InvalidInput("recall needs a non-empty query")
        if len(query) > 4000:
            raise InvalidInput("query is longer than 4000 characters")
        store = self.chunks
        if store is None:
            raise NotFound(f"memory search is unavailable: {self._chunks_error}")
        with self._lock:
            hits = [_hit_json(h.to_json()) for h in store.recall(query, k=k + 1, now=now)]
        if not self.user_md():  # the untouched starter note is noise, not memory
            hits = [h for h in hits if h["id"] != "note:vault/user.md"]
        return hits[:k]

    def read_chunk(self, memory_id: str) -> str:
        store = self.chunks
        if store is None:
            raise NotFound(f"memory search is unavailable: {self._chunks_error}")
        with self._lock:
            return store.get(memory_id).content

    def context(
        self,
        message: str,
        *,
        budget_tokens: int,
        k: int,
        min_ratio: float = 0.0,
        now: float | None = None,
    ) -> MemoryContext:
        """Memory for the model before it answers `message` (see the module doc);
        `now` (epoch seconds, default the clock): when it is asked (`--as-of`)."""
        lines: list[str] = []
        sources: list[dict[str, Any]] = []
        used = 0
        if k > 0 and asks_for_list(message):  # each item was said on another day
            k *= LIST_K_FACTOR

        def add(line: str, source: dict[str, Any]) -> bool:
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
            add(f"- Notes (user.md): {' '.join(head.split())}", {"kind": "note", "id": "user.md"})
        hits: list[dict[str, Any]] = []
        who = Attribution([])
        facts = self.profile_facts() if k > 0 and _ABOUT_ME.search(message) else []
        for fact in facts:  # a question about the user: their profile, with dates
            if not add(f"- Profile: {fact}", {"kind": "fact"}):
                break
        if k > 0 and self.chunks is not None:
            try:
                hits = self.recall(message, k=min(k * 3, 50), now=now)
            except MemagentError:
                hits = []
        elif k > 0 and not facts:
            for fact in self.profile_lines():
                if not add(f"- Profile: {fact}", {"kind": "fact"}):
                    break
        hits = [h for h in hits if h["id"] not in ("note:vault/user.md", "user.md")]
        hits = [h for h in hits if not (facts and h["kind"] == "fact")]
        hits = [h for h in hits if h.get("user") != message.strip()]
        hits = [h for h in hits if relevant(h) and not non_fact(h.get("source"))]
        who = attribute(hits, message, k=k)
        said = Counter(s for h in hits if (s := speaker_of(h)))
        hits = who.hits
        if hits and min_ratio > 0:
            best = max(h["score"] for h in hits)
            hits = [h for h in hits if h["score"] >= best * min_ratio]
        hits.sort(key=lambda h: (QUESTION_TAG in h.get("tags", []), -h["score"]))
        unit = ago_unit(message)  # "how many weeks ago…": each line says how long before
        asked = datetime.fromtimestamp(now if now is not None else time.time(), UTC).date()
        shown: list[dict[str, Any]] = []
        for hit in hits[:k]:
            line = _context_line(hit, (unit, asked) if unit else None)
            if not add(line, {"kind": hit["kind"], "id": hit["id"]}):
                break
            shown.append(hit)
        return MemoryContext(
            "\n".join(lines),
            used,
            sources,
            who.named if who.others_answer else [],
            who.named,
            [s for s, _ in said.most_common()],
            shown,
        )

    # -- writing ----------------------------------------------------------------------
    def store_exchange(
        self, conversation_id: str, user: str, reply: str, *, turn: int
    ) -> list[str]:
        """Store one exchange as a chunk; returns the new chunk ids ([] when no store)."""
        store = self.chunks
        if store is None or not user.strip() or is_small_talk(user):
            return []  # "Hello!", "thanks": kept in the conversation record only
        question = looks_like_request(user)
        tags = ["conversation"] + ([QUESTION_TAG] if question else [])
        # Only what the user said is searchable. The reply is the model's claim, not
        # something the user told us: searchable, a wrong answer would come back as
        # memory and be repeated. It stays in `source.reply` and the conversation.
        content = user.strip()
        source = {
            "kind": EXCHANGE_KIND,
            "role": "user",
            "type": QUESTION_TAG if question else "statement",
            "user": user.strip()[:4000],
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

    def forget(self, memory_id: str) -> dict[str, Any]:
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

        def recall(query: str, k: int = 5) -> list[dict[str, Any]]:
            """Search all memory (past conversations, notes, profile facts) for a query."""
            return self.recall(query, k=max(1, min(k, 20)))

        def remember(text: str, tags: list[str] | None = None) -> list[str]:
            """Store a memory for later; returns its ids."""
            return self.remember(text, tags)

        def forget(memory_id: str) -> dict[str, Any]:
            """Delete a memory by its id (from recall results)."""
            return self.forget(memory_id)

        return [Tool.of(f, default=True) for f in (recall, remember, forget)]


def _hit_json(data: dict[str, Any]) -> dict[str, Any]:
    src = data.get("source") or {}
    out = {
        "id": data["id"],
        "kind": data["kind"],
        "content": data["content"],
        "score": data["score"],
        "tags": list(data.get("tags") or []),
        "created_at": data.get("created_at"),
        "path": data.get("path"),
        "why": data.get("why") or {},
    }
    if isinstance(src, dict):
        out["source"] = {k: v for k, v in src.items() if k in ("kind", "role", "type", "speaker")}
        if src.get("kind") == EXCHANGE_KIND:
            out["user"] = src.get("user")
    return out


def relevant(hit: dict[str, Any]) -> bool:
    """Worth showing the model: a keyword match, or close enough in meaning.
    (Keyword-only search has no cosine: there every hit matched a keyword.)"""
    why = hit.get("why") or {}
    if "keyword" in why or "dense" not in why:
        return True
    cosine = why["dense"].get("cosine")
    return isinstance(cosine, int | float) and cosine >= MIN_COSINE


def _said_on(hit: dict[str, Any]) -> date | None:
    stamp = str(hit.get("created_at") or "")
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


def _context_line(hit: dict[str, Any], ago: tuple[str, date] | None = None) -> str:
    day = _said_on(hit)

    def text(raw: object, limit: int) -> str:
        flat = " ".join(str(raw).split())[:limit]
        return annotate(flat, day) if day else flat

    content = text(hit["content"], 400)
    when = _when(day, ago)
    src = hit.get("source") or {}
    if hit.get("user"):
        return f"- {when}You said: {text(hit['user'], 400)}"
    if hit["kind"] == "note":
        return f"- Note ({hit.get('path') or hit['id']}): {content}"
    if hit["kind"] == "fact":
        return f"- Profile: {content[:300]}"
    speaker = src.get("speaker")
    if isinstance(speaker, str) and speaker:
        # an imported line already names its speaker ("Caroline: …"): not "You said"
        said = content.startswith(f"{speaker}:")
        return f"- {when}{content}" if said else f"- {when}{speaker} said: {content}"
    if src.get("role") == "user":
        return f"- {when}You said: {content}"
    return f"- {when}{content}"
