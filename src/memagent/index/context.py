"""Document expansion for keyword search: a conversation turn's keyword document
also carries the words of the turns said next to it.

People talking to each other leave the topic implicit: "How was the concert?" —
"It was amazing, the crowd sang every song." The second turn holds the answer
to "what did Caroline think of the concert?" but not the word "concert". So a
turn's keyword document gets a second field, its *context*: the text of the
previous and the next turn of the same conversation. FTS5 scores it as its own
column at a fraction of the turn's own words (`SearchParams.context_weight`),
so a turn that says a query word itself still ranks first, and a turn that
only sits next to one can still be found. (The score-level neighbour boost of
`search` cannot do this: it only lifts turns that are candidates already.)

Context passes only across an exchange: between turns by different speakers
(or where a turn names none). The user's successive messages to the assistant
(`role: user` each, the agent's own chat) are separate statements — "My dog is
Rex." then "I live in Oslo." — and lending between them would make each match
the other's questions. LoCoMo and LongMemEval alternate speakers, so there the
rule changes nothing.

Only what people said lends and receives context. The assistant's replies and
questions put to it (`roles.non_fact`) neither get nor give words: a reply
echoes and elaborates the user's words at length, and lending them to the
user's turns made every turn of a chat about a topic match it (measured on
LongMemEval: turn recall@10 −4 points; see docs/experiments/). Notes and profile
facts have no conversation and get no context.

The context is stored in `docs.context` (derived, like the rest of the index)
and rebuilt whenever a turn or one of its neighbours changes.

Dense search does the same with vectors: a turn is searched by its own
embedding plus `NEIGHBOUR_VECTOR_WEIGHT` times each neighbour's, normalised
(`ctx_vectors`; its own stays in `vectors`), so "It was amazing" lies nearer to
"concert". Here every turn of a conversation takes part, the assistant's too:
a reply's vector carries the topic of the exchange, not its words (on
LongMemEval leaving replies out of the mix loses what mixing gains).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from memagent.core.jsontext import JsonObject
from memagent.index.roles import non_fact
from memagent.index.vectors import Vector, VectorSearch

CONTEXT_MAX_CHARS = 1000
"""At most this much of each neighbour's text is lent (a long chunk's start)."""
NEIGHBOUR_VECTOR_WEIGHT = 0.5
"""A neighbour's embedding counts this much in a turn's searched vector."""


def takes_part(source: JsonObject | None, deleted: bool = False) -> bool:
    """Whether a document lends and receives context: a live turn said by a person."""
    return not deleted and not non_fact(source)


def speaker(source: JsonObject | None) -> str | None:
    """Who said a turn: `source.speaker` (an imported conversation's person),
    else `source.role`; None when the source names neither."""
    if not isinstance(source, dict):
        return None
    for key in ("speaker", "role"):
        value = source.get(key)  # a hand-edited file may hold anything
        if isinstance(value, str) and value.strip():
            return value.strip().casefold()
    return None


def exchange(a: str | None, b: str | None) -> bool:
    """Whether turns by speakers `a` and `b` (see `speaker`) lend each other
    context: not when both are named and the same."""
    return a is None or b is None or a != b


def context_text(neighbours: Sequence[str]) -> str:
    """The context field made of the neighbours' texts (each clipped)."""
    return "\n".join(t[:CONTEXT_MAX_CHARS] for t in neighbours if t.strip())


_NEIGHBOURS_SQL = """
SELECT d.rowid,
  (SELECT p.rowid FROM docs p INDEXED BY docs_conv
     WHERE p.conversation_id = d.conversation_id AND p.deleted = 0
     AND (p.created, p.rowid) < (d.created, d.rowid)
     ORDER BY p.created DESC, p.rowid DESC LIMIT 1),
  (SELECT n.rowid FROM docs n INDEXED BY docs_conv
     WHERE n.conversation_id = d.conversation_id AND n.deleted = 0
     AND (n.created, n.rowid) > (d.created, d.rowid)
     ORDER BY n.created, n.rowid LIMIT 1)
FROM docs d WHERE d.conversation_id IS NOT NULL AND d.rowid IN ({marks})
"""

Near = tuple[int | None, int | None]


def neighbours(conn: sqlite3.Connection, rowids: Sequence[int]) -> dict[int, Near]:
    """(previous, next) live document of the same conversation, for each rowid
    that has a conversation (`index.sqlite`'s `docs`)."""
    return {int(r): (prev, nxt) for r, prev, nxt in _rows_in(conn, _NEIGHBOURS_SQL, rowids)}


def _rows_in(conn: sqlite3.Connection, sql: str, keys: Sequence[int | str]) -> Iterator[Any]:
    """The rows of `sql` (its `{marks}` an IN list) for `keys`, 500 at a time
    (SQLite's limit on bound parameters)."""
    ids = list(keys)
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        yield from conn.execute(sql.format(marks=",".join("?" * len(part))), part)


@dataclass(frozen=True)
class Neighbourhood:
    """What changes when some turns change (see `neighbourhood`)."""

    near: dict[int, Near]
    """(previous, next) turn of each changed turn and of each turn beside one."""
    targets: list[int]
    """The turns to recompute: the changed ones and the turns beside them."""
    wanted: list[int]
    """Every row that recomputing the targets reads."""


def neighbourhood(
    find: Callable[[Sequence[int]], dict[int, Near]],
    ids: Sequence[int],
    left: Iterable[int] = (),
) -> Neighbourhood:
    """The neighbourhood of `ids`, with `find` giving (previous, next) turns
    (`neighbours` here, `memagent.postgres.context.neighbours` there). `left`:
    turns that were beside `ids` before the write (a turn re-stored in another
    conversation or at another time has left them), recomputed too."""
    near = find(ids)
    targets = set(ids) | set(left) | {x for pn in near.values() for x in pn if x is not None}
    near.update(find(sorted(targets - set(near))))
    wanted = targets | {x for t in targets for x in near.get(t, ()) if x is not None}
    return Neighbourhood(near, sorted(targets), sorted(wanted))


def around(
    conn: sqlite3.Connection, rowids: Sequence[int], left: Iterable[int] = ()
) -> Neighbourhood:
    """The neighbourhood of `rowids` in `index.sqlite` (`left`: see `neighbourhood`)."""
    return neighbourhood(lambda ids: neighbours(conn, ids), rowids, left)


def beside(conn: sqlite3.Connection, rowids: Sequence[int]) -> set[int]:
    """The turns next to `rowids` now (taken before a write moves or deletes them)."""
    return {x for pn in neighbours(conn, rowids).values() for x in pn if x is not None}


def beside_docs(conn: sqlite3.Connection, doc_ids: Sequence[str]) -> set[int]:
    """`beside` the indexed versions of `doc_ids`."""
    sql = "SELECT rowid FROM docs WHERE doc_id IN ({marks})"
    return beside(conn, [int(r[0]) for r in _rows_in(conn, sql, doc_ids)])


def lent_text(part_of: bool, who: str | None, lent: Iterable[tuple[str, bool, str | None]]) -> str:
    """A turn's context from its neighbours' (text, takes part, speaker): the
    words of those that take part and are of its exchange; none when the turn
    itself takes no part."""
    if not part_of:
        return ""
    return context_text([text for text, lends, by in lent if lends and exchange(who, by)])


def lent_vector(
    own: Vector, who: str | None, lent: Iterable[tuple[Vector, str | None]], live: bool = True
) -> Vector | None:
    """A turn's searched vector from its neighbours' (own vector, speaker): `mix`
    with those of its exchange; None when none lends, or when the turn is
    deleted (it is no one's neighbour, so a mix would go stale as they change)."""
    return mix(own, [vec for vec, by in lent if exchange(who, by)]) if live else None


def parse_source(text: str | None) -> JsonObject | None:
    """The `docs.source` JSON as a dict (None when absent or not an object)."""
    try:
        got = json.loads(text) if text else None
    except ValueError:
        return None
    return got if isinstance(got, dict) else None


def refresh_contexts(conn: sqlite3.Connection, hood: Neighbourhood, new: set[int]) -> None:
    """Recompute the context of the neighbourhood's targets (changed turns and
    the turns next to them), and (re)write the FTS row of each whose context
    changed. `new` rows have no FTS row yet: theirs is written here in any case.
    Runs inside the caller's transaction."""
    near, targets, wanted = hood.near, hood.targets, hood.wanted
    # rowid -> (content, tags, stored context, takes part, speaker)
    info: dict[int, tuple[str, str, str, bool, str | None]] = {}
    sql = "SELECT rowid, content, tags, context, deleted, source FROM docs WHERE rowid IN ({marks})"
    for r, content, tags, ctx, deleted, source in _rows_in(conn, sql, wanted):
        src = parse_source(source)
        info[int(r)] = (content, tags, ctx, takes_part(src, bool(deleted)), speaker(src))
    for t in targets:
        if t not in info:
            continue
        content, tags, old, part_of, who = info[t]
        lent = [info[x] for x in near.get(t, ()) if x is not None and x in info]
        ctx = lent_text(part_of, who, [(n[0], n[3], n[4]) for n in lent])
        if t not in new:
            if ctx == old:
                continue
            conn.execute(
                "INSERT INTO docs_fts(docs_fts, rowid, content, tags, context) "
                "VALUES('delete', ?, ?, ?, ?)",
                (t, content, tags, old),
            )
        if ctx != old:
            conn.execute("UPDATE docs SET context = ? WHERE rowid = ?", (ctx, t))
        conn.execute(
            "INSERT INTO docs_fts(rowid, content, tags, context) VALUES (?, ?, ?, ?)",
            (t, content, tags, ctx),
        )


def fill_contexts(conn: sqlite3.Connection) -> None:
    """Every turn's context at once, then the FTS table rebuilt from `docs` (an
    index that predates contexts, after its `context` column was added). Runs
    inside the caller's transaction."""
    rows = conn.execute(
        "SELECT rowid, conversation_id, content, source FROM docs "
        "WHERE conversation_id IS NOT NULL AND deleted = 0 "
        "ORDER BY conversation_id, created, rowid"
    ).fetchall()
    sources = [parse_source(r[3]) for r in rows]
    part_of = [takes_part(src) for src in sources]
    who = [speaker(src) for src in sources]
    updates: list[tuple[str, int]] = []
    for i, (rowid, conv, _content, _source) in enumerate(rows):
        if not part_of[i]:
            continue
        near = [
            rows[j][2]
            for j in (i - 1, i + 1)
            if 0 <= j < len(rows) and rows[j][1] == conv and part_of[j] and exchange(who[i], who[j])
        ]
        ctx = context_text(near)
        if ctx:
            updates.append((ctx, rowid))
    conn.executemany("UPDATE docs SET context = ? WHERE rowid = ?", updates)
    conn.execute("INSERT INTO docs_fts(docs_fts) VALUES('rebuild')")


def mix(own: Vector, neighbours: Sequence[Vector]) -> Vector | None:
    """A turn's conversation-aware vector; None when it has no neighbour."""
    if not neighbours:
        return None
    v = np.asarray(own, dtype=np.float32) + NEIGHBOUR_VECTOR_WEIGHT * np.sum(
        np.asarray(neighbours, dtype=np.float32), axis=0
    )
    norm = float(np.linalg.norm(v))
    return (v / norm).astype(np.float32) if norm > 0 else None


def _own_vectors(
    conn: sqlite3.Connection, rowids: Sequence[int]
) -> dict[int, tuple[Vector, str | None, bool]]:
    """Each row's own vector, its speaker and whether it is live (rows without
    a vector left out)."""
    sql = (
        "SELECT v.rowid, v.vec, d.source, d.deleted FROM vectors v "
        "JOIN docs d ON d.rowid = v.rowid WHERE v.rowid IN ({marks})"
    )
    return {
        int(r): (np.frombuffer(blob, dtype=np.float32), speaker(parse_source(source)), not deleted)
        for r, blob, source, deleted in _rows_in(conn, sql, rowids)
    }


def refresh_vectors(conn: sqlite3.Connection, vectors: VectorSearch, hood: Neighbourhood) -> None:
    """Recompute the searched vector of the neighbourhood's targets from the
    stored own vectors (`ctx_vectors`, and the search matrix). Inside the
    caller's transaction."""
    near, targets, wanted = hood.near, hood.targets, hood.wanted
    own = _own_vectors(conn, wanted)
    done: list[int] = []
    searched: list[Vector] = []
    for t in targets:
        if t not in own:
            conn.execute("DELETE FROM ctx_vectors WHERE rowid = ?", (t,))
            continue
        vec, who, live = own[t]
        lent = [own[x][:2] for x in near.get(t, ()) if x is not None and x in own]
        mixed = lent_vector(vec, who, lent, live)
        if mixed is None:
            conn.execute("DELETE FROM ctx_vectors WHERE rowid = ?", (t,))
        else:
            conn.execute(
                "INSERT OR REPLACE INTO ctx_vectors(rowid, vec) VALUES (?, ?)",
                (t, mixed.tobytes()),
            )
        done.append(t)
        searched.append(vec if mixed is None else mixed)
    if done:
        vectors.set_rows(done, np.stack(searched))


def fill_vectors(conn: sqlite3.Connection) -> None:
    """Every turn's searched vector at once (an index from before them); the
    caller then reloads the search matrix. Inside the caller's transaction."""
    conn.execute("DELETE FROM ctx_vectors")
    rows = conn.execute(
        "SELECT d.rowid, d.conversation_id, v.vec, d.source FROM docs d LEFT JOIN vectors v "
        "ON v.rowid = d.rowid WHERE d.conversation_id IS NOT NULL AND d.deleted = 0 "
        "ORDER BY d.conversation_id, d.created, d.rowid"
    ).fetchall()
    who = [speaker(parse_source(r[3])) for r in rows]
    batch: list[tuple[int, bytes]] = []
    for i, (rowid, conv, blob, _source) in enumerate(rows):
        if blob is None:
            continue
        near = [
            np.frombuffer(rows[j][2], dtype=np.float32)
            for j in (i - 1, i + 1)
            if 0 <= j < len(rows)
            and rows[j][1] == conv
            and rows[j][2] is not None
            and exchange(who[i], who[j])
        ]
        mixed = mix(np.frombuffer(blob, dtype=np.float32), near)
        if mixed is not None:
            batch.append((rowid, mixed.tobytes()))
        if len(batch) >= 5000:
            conn.executemany("INSERT INTO ctx_vectors(rowid, vec) VALUES (?, ?)", batch)
            batch = []
    conn.executemany("INSERT INTO ctx_vectors(rowid, vec) VALUES (?, ?)", batch)
