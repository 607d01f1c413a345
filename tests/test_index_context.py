"""A conversation turn's keyword document carries its neighbours' words, and its
searched vector is mixed with theirs (`context`): kept right as turns arrive,
change, are deleted and re-indexed; the assistant's words neither lend nor
receive keywords; an old index is migrated in place."""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from memagent.index import Doc, Index, SearchParams, search
from memagent.index.context import (
    CONTEXT_MAX_CHARS,
    NEIGHBOUR_VECTOR_WEIGHT,
    context_text,
    exchange,
    fill_contexts,
    fill_vectors,
    mix,
    parse_source,
    speaker,
    takes_part,
)
from memagent.index.vectors import ExactVectors


def _turn(i: int, content: str, conv: str = "c", **kw: object) -> Doc:
    return Doc(
        doc_id=f"t{i}",
        kind="chunk",
        path=f"chunks/x/t{i}.json",
        content=content,
        conversation_id=conv,
        created=float(i),
        **kw,  # type: ignore[arg-type]
    )


def _context(idx: Index, doc_id: str) -> str:
    row = idx.conn.execute("SELECT context FROM docs WHERE doc_id = ?", (doc_id,)).fetchone()
    return str(row[0])


def _ids(idx: Index, query: str, **kw: object) -> list[str]:
    return [h.row.doc_id for h in search(idx, query, params=SearchParams(**kw))]  # type: ignore[arg-type]


@pytest.fixture
def chat(tmp_path: Path) -> Index:
    idx = Index(tmp_path / "index.sqlite")
    idx.upsert(
        [
            _turn(1, "Caroline: How was the concert on Saturday?"),
            _turn(2, "Melanie: It was amazing, the crowd sang every song."),
            _turn(3, "Caroline: I wish I had been there!"),
            _turn(9, "Melanie: my sister loves opera", conv="other"),
        ]
    )
    return idx


def test_rule_helpers() -> None:
    assert takes_part(None) and takes_part({"role": "user"})
    assert not takes_part({"role": "assistant"}) and not takes_part({"type": "question"})
    assert not takes_part({"role": "user"}, deleted=True)
    assert context_text(["a" * 5000, "  ", "b"]) == "a" * CONTEXT_MAX_CHARS + "\nb"
    assert parse_source('{"role": "user"}') == {"role": "user"}
    assert parse_source("not json {") is None and parse_source("[1, 2]") is None
    assert parse_source(None) is None


def test_a_turn_carries_the_words_of_the_turns_beside_it(chat: Index) -> None:
    ctx = _context(chat, "t2")
    assert "concert" in ctx and "wish" in ctx
    assert _context(chat, "t1") == "Melanie: It was amazing, the crowd sang every song."
    assert "opera" not in _context(chat, "t3")  # another conversation lends nothing
    assert _context(chat, "t9") == ""


def test_a_turn_is_found_by_its_neighbours_words_but_ranks_below_one_that_says_them(
    chat: Index,
) -> None:
    got = _ids(chat, "crowd amazing")
    assert got[0] == "t2"  # says the words itself
    got = _ids(chat, "concert")
    assert got[0] == "t1" and "t2" in got  # t2 only through its context
    assert "t2" not in _ids(chat, "concert", context_weight=0.0, neighbour_weight=0.0)


def test_a_word_said_in_many_turns_is_matched_in_their_own_words_only(tmp_path: Path) -> None:
    idx = Index(tmp_path / "i.sqlite")
    idx.upsert(
        [
            _turn(1, "the rehearsal ran late"),
            _turn(2, "so tired now"),
            _turn(3, "rehearsal again tomorrow", conv="d"),
            _turn(4, "another rehearsal", conv="e"),
        ]
    )
    # "rehearsal" is in the own words of 3 turns: at most 3 it reaches t2's context.
    assert "t2" in _ids(idx, "rehearsal", neighbour_weight=0.0, context_max_docs=3)
    assert "t2" not in _ids(idx, "rehearsal", neighbour_weight=0.0, context_max_docs=2)
    assert "t2" not in _ids(idx, "rehearsal", neighbour_weight=0.0, context_max_docs=0)
    got = _ids(idx, "rehearsal tired", neighbour_weight=0.0, context_max_docs=2)
    assert "t2" in got  # its own word still counts
    assert "t1" in got  # and a rare word ("tired", in one turn) reaches its neighbour


def test_context_follows_new_changed_and_deleted_turns(chat: Index) -> None:
    chat.upsert([_turn(4, "Melanie: next time come with me to the stadium")])
    assert "stadium" in _context(chat, "t3")
    assert "t3" in _ids(chat, "stadium", neighbour_weight=0.0)
    chat.upsert([_turn(2, "Melanie: The violinist was superb.")])  # edited
    assert "violinist" in _context(chat, "t1") and "crowd" not in _context(chat, "t1")
    assert "t1" not in _ids(chat, "crowd", neighbour_weight=0.0)
    chat.upsert([_turn(2, "Melanie: The violinist was superb.", deleted=True)])  # soft delete
    assert "wish" in _context(chat, "t1") and "violinist" not in _context(chat, "t1")
    assert _context(chat, "t2") == ""
    chat.remove_docs(["t3"])
    assert _context(chat, "t1") == "Melanie: next time come with me to the stadium"
    chat.remove_path("chunks/x/t4.json")
    assert _context(chat, "t1") == ""
    assert _ids(chat, "stadium") == []  # no stale FTS entry anywhere


def test_the_assistants_words_neither_lend_nor_receive(tmp_path: Path) -> None:
    idx = Index(tmp_path / "i.sqlite")
    idx.upsert(
        [
            _turn(1, "I adopted a beagle last week", source={"role": "user"}),
            _turn(2, "Beagles need long walks and puzzle feeders", source={"role": "assistant"}),
            _turn(3, "I also started pottery classes", source={"role": "user"}),
            _turn(4, "What should I name it?", source={"type": "question"}),
        ]
    )
    assert _context(idx, "t1") == "" and _context(idx, "t2") == ""
    assert _context(idx, "t3") == "" and _context(idx, "t4") == ""


def test_speaker_rule() -> None:
    assert speaker({"speaker": " Caroline ", "role": "user"}) == "caroline"
    assert speaker({"role": "User"}) == "user"
    assert speaker(None) is None and speaker({"speaker": 3, "role": ["x"]}) is None
    assert speaker({"speaker": "", "role": "user"}) == "user"
    assert exchange("caroline", "melanie") and exchange(None, "user") and exchange("user", None)
    assert not exchange("user", "user")


def test_one_speakers_successive_turns_lend_nothing(tmp_path: Path) -> None:
    """The agent's chat stores each user message as a turn of one conversation:
    "My dog is Rex." must not match "where do I live?" through the next turn."""
    idx = Index(tmp_path / "i.sqlite", TopicEmbedder())
    user = {"role": "user", "type": "statement"}
    idx.upsert(
        [
            _turn(1, "I adopted a beagle", source=user),
            _turn(2, "I started pottery classes", source=user),
            _turn(3, "Caroline: How was the concert?", conv="d", source={"speaker": "Caroline"}),
            _turn(4, "Melanie: It was amazing", conv="d", source={"speaker": "Melanie"}),
            _turn(5, "Melanie: The crowd sang", conv="d", source={"speaker": "Melanie"}),
        ]
    )
    assert _context(idx, "t1") == "" and _context(idx, "t2") == ""
    assert np.allclose(_searched(idx, "t2"), _own(idx, "t2"))
    # Different speakers exchange context; the same speaker twice in a row does not.
    assert _context(idx, "t4") == "Caroline: How was the concert?"
    assert _context(idx, "t5") == ""
    assert float(_searched(idx, "t4") @ TopicEmbedder().embed(["concert"])[0]) > 0.4
    assert np.allclose(_searched(idx, "t5"), _own(idx, "t5"))
    # A rebuild from scratch (the migration's path) follows the same rule.
    with idx.conn:
        idx.conn.execute("UPDATE docs SET context = ''")
        idx.conn.execute("DELETE FROM meta WHERE key = 'ctx_vectors'")
    idx._fill_contexts()
    idx._fill_vectors_once()
    assert _context(idx, "t1") == "" and _context(idx, "t5") == ""
    assert _context(idx, "t4") == "Caroline: How was the concert?"
    fresh = Index(tmp_path / "i.sqlite", TopicEmbedder())
    assert np.allclose(_searched(fresh, "t2"), _own(fresh, "t2"))
    assert float(_searched(fresh, "t4") @ TopicEmbedder().embed(["concert"])[0]) > 0.4


def test_batch_and_one_by_one_give_the_same_contexts(tmp_path: Path) -> None:
    texts = [f"speaker{i % 2}: word{i} shared{i // 3}" for i in range(12)]
    a = Index(tmp_path / "a.sqlite")
    a.upsert([_turn(i, t) for i, t in enumerate(texts)])
    b = Index(tmp_path / "b.sqlite")
    for i in [5, 0, 11, 3, 1, 2, 4, 10, 6, 9, 7, 8]:  # out of order, as a re-index may be
        b.upsert([_turn(i, texts[i])])
    for i in range(12):
        assert _context(a, f"t{i}") == _context(b, f"t{i}")
    for q in ("word4", "shared2", "word11"):  # the same hits (ties may swap: rowids differ)
        got_a, got_b = search(a, q), search(b, q)
        assert {h.row.doc_id for h in got_a} == {h.row.doc_id for h in got_b}
        assert [round(h.score, 9) for h in got_a] == [round(h.score, 9) for h in got_b]


def test_context_weight_is_validated() -> None:
    with pytest.raises(ValidationError):
        SearchParams(context_max_docs=-1)
    with pytest.raises(ValidationError):
        SearchParams(context_weight=-1.0)
    with pytest.raises(ValidationError):
        SearchParams(context_weight=1e9)


def test_an_index_from_before_contexts_is_migrated_in_place(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite"
    idx = Index(path)
    idx.upsert(
        [
            _turn(1, "How was the concert?"),
            _turn(2, "It was amazing"),
            _turn(3, "hidden", deleted=True),
        ]
    )
    idx.close()
    # Rewrite it the way the previous version laid it out: no context column, two
    # FTS columns.
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("DROP TABLE docs_fts")
        conn.execute("ALTER TABLE docs DROP COLUMN context")
        conn.execute(
            "CREATE VIRTUAL TABLE docs_fts USING fts5(content, tags, content='docs', "
            "content_rowid='rowid', tokenize='porter unicode61 remove_diacritics 2')"
        )
        conn.execute("INSERT INTO docs_fts(docs_fts) VALUES('rebuild')")
    conn.close()
    idx = Index(path)
    assert idx.count() == 3
    assert "concert" in _context(idx, "t2") and _context(idx, "t3") == ""
    assert "t2" in _ids(idx, "concert", neighbour_weight=0.0)
    assert _ids(idx, "amazing")[0] == "t2"
    idx.upsert([_turn(4, "and the encore")])  # writes work after the migration
    assert "encore" in _context(idx, "t2")
    idx.close()
    assert "encore" in _context(Index(path), "t2")  # and it is not migrated twice


class TopicEmbedder:
    """One dimension per known word: a turn's vector is the words it says."""

    name = "topics"
    dim = 8
    WORDS = ("concert", "amazing", "hiking", "beagle", "pottery", "stadium", "crowd", "wish")

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for j, w in enumerate(self.WORDS):
                if w in t.lower():
                    out[i, j] = 1.0
            out[i] /= max(float(np.linalg.norm(out[i])), 1e-9)
        return out

    def count_tokens(self, text: str) -> int:
        return len(text.split())


def _searched(idx: Index, doc_id: str) -> np.ndarray:
    rowid = idx.conn.execute("SELECT rowid FROM docs WHERE doc_id = ?", (doc_id,)).fetchone()[0]
    return idx.vectors.get([rowid])[rowid]


def _own(idx: Index, doc_id: str) -> np.ndarray:
    rowid = idx.conn.execute("SELECT rowid FROM docs WHERE doc_id = ?", (doc_id,)).fetchone()[0]
    vec = idx.vector_of(rowid)
    assert vec is not None
    return vec


def test_mix_rule() -> None:
    own = np.array([1.0, 0.0], dtype=np.float32)
    assert mix(own, []) is None
    got = mix(own, [np.array([0.0, 1.0], dtype=np.float32)])
    assert got is not None
    expected = np.array([1.0, NEIGHBOUR_VECTOR_WEIGHT]) / np.hypot(1.0, NEIGHBOUR_VECTOR_WEIGHT)
    assert np.allclose(got, expected) and got.dtype == np.float32
    assert mix(own, [-own / NEIGHBOUR_VECTOR_WEIGHT]) is None  # cancels out: no direction


@pytest.mark.parametrize("loaded", [True, False])
def test_a_turn_is_searched_by_its_vector_mixed_with_its_neighbours(
    tmp_path: Path, loaded: bool
) -> None:
    idx = Index(tmp_path / "i.sqlite", TopicEmbedder())
    if loaded:
        len(idx.vectors)  # the search matrix is in memory: updates must reach it
    idx.upsert(
        [
            _turn(1, "How was the concert?"),
            _turn(2, "It was amazing"),
            _turn(3, "I went hiking alone", conv="other"),
        ]
    )
    concert = TopicEmbedder().embed(["concert"])[0]
    assert float(_own(idx, "t2") @ concert) == 0.0  # its own words say nothing of it
    assert float(_searched(idx, "t2") @ concert) > 0.4  # its exchange does
    assert np.allclose(_searched(idx, "t3"), _own(idx, "t3"))  # alone: its own vector
    found = {h.row.doc_id for h in search(idx, "concert", params=SearchParams(context_weight=0))}
    assert "t2" in found
    # A new neighbour, an edit and a deletion re-mix the turns beside them.
    idx.upsert([_turn(4, "next time the stadium")])
    stadium = TopicEmbedder().embed(["stadium"])[0]
    assert float(_searched(idx, "t2") @ stadium) > 0.2
    idx.remove_docs(["t4"])
    assert float(_searched(idx, "t2") @ stadium) == 0.0
    idx.upsert([_turn(1, "How was the concert?", deleted=True)])
    assert np.allclose(_searched(idx, "t2"), _own(idx, "t2"))
    fresh = Index(tmp_path / "i.sqlite", TopicEmbedder())  # another process loads the same
    assert np.allclose(_searched(fresh, "t2"), _own(idx, "t2"))


def test_vectors_of_an_index_from_before_them_are_filled_once(tmp_path: Path) -> None:
    path = tmp_path / "i.sqlite"
    idx = Index(path, TopicEmbedder())
    idx.upsert([_turn(1, "concert"), _turn(2, "amazing")])
    with idx.conn:
        idx.conn.execute("DELETE FROM ctx_vectors")
        idx.conn.execute("DELETE FROM meta WHERE key = 'ctx_vectors'")
    idx.close()
    idx = Index(path, TopicEmbedder())
    assert idx.conn.execute("SELECT count(*) FROM ctx_vectors").fetchone()[0] == 2
    assert float(_searched(idx, "t2") @ TopicEmbedder().embed(["concert"])[0]) > 0.4


def test_a_keyword_only_writer_leaves_turns_searched_by_what_exists(tmp_path: Path) -> None:
    path = tmp_path / "i.sqlite"
    Index(path, TopicEmbedder()).upsert([_turn(1, "concert")])
    Index(path).upsert([_turn(2, "amazing")])  # no model here: no vector for t2
    idx = Index(path, TopicEmbedder())  # the next process with the model embeds t2
    concert = TopicEmbedder().embed(["concert"])[0]
    assert float(_searched(idx, "t2") @ concert) > 0.4
    assert float(_searched(idx, "t1") @ TopicEmbedder().embed(["amazing"])[0]) > 0.4


def _fts(idx: Index, column: str, word: str) -> set[str]:
    """The documents whose FTS row holds `word` in `column` (what the index
    matches, not what `docs` says it should)."""
    rows = idx.conn.execute(
        "SELECT d.doc_id FROM docs_fts f JOIN docs d ON d.rowid = f.rowid WHERE docs_fts MATCH ?",
        (f"{column} : {word}",),
    ).fetchall()
    return {r[0] for r in rows}


def _rebuilt(idx: Index) -> Index:
    """A fresh index of what `idx` holds now, as `memagent reindex` builds it."""
    rows = idx.conn.execute(
        "SELECT doc_id, content, conversation_id, created, deleted, source FROM docs"
    ).fetchall()
    fresh = Index(Path(":memory:"), idx.embedder)
    fresh.upsert(
        [
            Doc(
                doc_id=d,
                kind="chunk",
                path=f"chunks/x/{d}.json",
                content=c,
                conversation_id=conv,
                created=created,
                deleted=bool(deleted),
                source=parse_source(src),
            )
            for d, c, conv, created, deleted, src in rows
        ]
    )
    return fresh


def _assert_same_as_rebuilt(idx: Index) -> None:
    """`idx` holds what `memagent reindex` would build from its documents, and
    what migrating an index from before contexts would fill in."""
    fresh = _rebuilt(idx)
    filled = _rebuilt(idx)
    with filled.conn:
        filled.conn.execute("UPDATE docs SET context = ''")
        fill_contexts(filled.conn)
        fill_vectors(filled.conn)
    filled.vectors = ExactVectors(filled.conn, filled.vectors_dim)
    reopened = Index(idx.path, idx.embedder) if idx.path != Path(":memory:") else idx
    for check in (idx, fresh, filled):  # every FTS row agrees with its `docs` row
        check.conn.execute("INSERT INTO docs_fts(docs_fts, rank) VALUES('integrity-check', 1)")
    for (d,) in idx.conn.execute("SELECT doc_id FROM docs").fetchall():
        assert _context(idx, d) == _context(fresh, d) == _context(filled, d), d
        if idx.embedder is not None:
            want = _searched(fresh, d)
            for got in (idx, reopened, filled):
                assert np.allclose(_searched(got, d), want, atol=1e-6), d


def _said(i: int, content: str, conv: str = "c", **kw: object) -> Doc:
    """A turn whose source names its speaker (the text's "Name: ")."""
    doc = _turn(i, content, conv, source={"speaker": content.split(":")[0]})
    return dataclasses.replace(doc, **kw)  # type: ignore[arg-type]


def test_a_turn_that_moves_leaves_its_old_neighbours_context(tmp_path: Path) -> None:
    """Re-storing a turn in another conversation, or at another time, takes its
    words and its vector out of the turns it used to sit beside."""
    idx = Index(tmp_path / "i.sqlite", TopicEmbedder())
    idx.upsert(
        [
            _said(1, "Caroline: How was the concert?"),
            _said(2, "Melanie: It was amazing, the crowd sang"),
            _said(3, "Caroline: I wish I had been there"),
            _said(4, "Melanie: next time, the stadium"),
            _said(7, "Melanie: we went hiking", conv="d"),
            _said(8, "Caroline: my beagle came too", conv="d"),
        ]
    )
    len(idx.vectors)  # the search matrix is loaded: the moves must reach it too
    assert _fts(idx, "context", "crowd") == {"t1", "t3"}
    moved = _said(2, "Melanie: It was amazing, the crowd sang", conv="d", created=9.0)
    idx.upsert([moved])  # to another conversation, after t8
    assert _fts(idx, "context", "crowd") == {"t8"}
    assert _context(idx, "t1") == ""  # t3 beside it now, but the same speaker
    assert _context(idx, "t3") == "Melanie: next time, the stadium"
    crowd = TopicEmbedder().embed(["crowd"])[0]
    assert float(_searched(idx, "t1") @ crowd) == 0.0
    assert float(_searched(idx, "t3") @ crowd) == 0.0
    _assert_same_as_rebuilt(idx)
    idx.upsert([_said(4, "Melanie: next time, the stadium", created=0.5)])  # moved in time
    assert _fts(idx, "context", "stadium") == {"t1"}  # t3 no longer sits beside it
    assert _context(idx, "t3") == ""
    assert float(_searched(idx, "t3") @ TopicEmbedder().embed(["stadium"])[0]) == 0.0
    _assert_same_as_rebuilt(idx)


_SPEAKERS = ("Caroline", "Melanie", "assistant")
# One step: (verb, turn 0-5, conversation 0-1, time 0-9, speaker) with verb store
# (add or edit), move (re-store it elsewhere), pair (move it and the next turn in
# one upsert, as a re-index batch does), delete, soft (deleted=True).
_STEPS = st.lists(
    st.tuples(
        st.sampled_from(["store", "store", "move", "pair", "delete", "soft"]),
        st.integers(0, 5),
        st.integers(0, 1),
        st.integers(0, 9),
        st.sampled_from(_SPEAKERS),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=150, deadline=None)
@given(_STEPS)
def test_any_sequence_of_writes_leaves_the_index_a_rebuild_would_make(
    steps: list[tuple[str, int, int, int, str]],
) -> None:
    idx = Index(Path(":memory:"), TopicEmbedder())
    stored: dict[int, Doc] = {}
    for n, (verb, i, conv, at, who) in enumerate(steps):
        words = TopicEmbedder.WORDS
        # Times never tie (a tie is ordered by rowid, which a rebuild renumbers).
        created = at + n / 100
        if verb == "delete":
            idx.remove_docs([f"t{i}"])
            stored.pop(i, None)
            continue
        batch: list[Doc] = []
        for j in (i, (i + 1) % 6) if verb == "pair" else (i,):
            if verb in ("move", "pair", "soft") and j in stored:
                doc = dataclasses.replace(
                    stored[j], conversation_id=f"c{conv}", created=created + j / 1000
                )
                if verb == "soft":
                    doc = dataclasses.replace(stored[j], deleted=True)
            else:
                role = {"role": "assistant"} if who == "assistant" else {"speaker": who}
                text = f"{who}: {words[(j + n) % len(words)]} w{j}v{n}"
                doc = _turn(j, text, f"c{conv}", source=role)
                doc = dataclasses.replace(doc, created=created + j / 1000)
            batch.append(doc)
            stored[j] = doc
        idx.upsert(batch)
    _assert_same_as_rebuilt(idx)
