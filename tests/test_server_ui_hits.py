"""Search hits as the page shows them (`memagent.server.ui._hits`): score order,
the relevance cut, reasons and kinds in words."""

from __future__ import annotations

from datetime import date
from typing import Any

from memagent.index import Hit, Row, SearchParams
from memagent.server.ui import _hits


def row(doc_id: str, content: str, *, kind: str = "chunk", **extra: Any) -> Row:
    fields: dict[str, Any] = {
        "rowid": abs(hash(doc_id)) % 10_000, "doc_id": doc_id, "kind": kind, "path": "",
        "content": content, "tags": [], "type": None, "created": 0.0, "created_at": None,
        "conversation_id": None, "session_id": None, "user_id": None, "agent_id": None,
        "speaker": None, "deleted": False, "access_count": 0, "accessed": None, "source": None,
    }  # fmt: skip
    fields.update(extra)
    return Row(**fields)


def hit(doc_id: str, score: float, why: dict[str, Any], content: str = "text", **kw: Any) -> Hit:
    return Hit(row(doc_id, content, **kw), score, {"mode": "hybrid", **why})


KW = {"keyword": {"rank": 1, "bm25": 1.2}}


def dense(cosine: float) -> dict[str, Any]:
    return {"dense": {"rank": 1, "cosine": cosine}}


def test_shown_in_score_order_whatever_order_came_in() -> None:
    found = [hit("a", 0.363, KW), hit("b", 0.399, KW), hit("c", 0.38, KW)]
    assert [h.id for h in _hits.shown(found, "dog")] == ["b", "c", "a"]
    scores = [h.score for h in _hits.shown(found, "dog")]
    assert scores == sorted(scores, reverse=True)


def test_meaning_alone_must_be_close() -> None:
    nonsense = [hit(str(i), 0.1 - i / 100, dense(0.2 - i / 100)) for i in range(13)]
    assert _hits.relevant(nonsense) == []  # "13 hits for 'zzqxv quantum tuba'" no more
    close = hit("close", 0.3, dense(_hits.MIN_COSINE + 0.01))
    assert [h.row.doc_id for h in _hits.relevant([*nonsense, close])] == ["close"]


def test_far_under_the_best_is_cut() -> None:
    best = hit("best", 1.0, KW)
    near = hit("near", _hits.MIN_SHARE + 0.01, KW)
    far = hit("far", _hits.MIN_SHARE - 0.01, KW)
    assert [h.row.doc_id for h in _hits.relevant([best, near, far])] == ["best", "near"]
    assert _hits.relevant([]) == []


def test_keyword_only_hits_always_have_evidence() -> None:
    only = Hit(row("k", "dog"), 0.5, {"keyword": {"rank": 1, "bm25": 0.0}, "mode": "keyword-only"})
    assert _hits.relevant([only]) == [only]


def test_keyword_only_scores_are_flatter_so_cut_lower() -> None:
    why = {"keyword": {"rank": 1, "bm25": 1.0}, "mode": "keyword-only"}
    kw = [Hit(row("a", "x"), 1.0, why), Hit(row("b", "x"), _hits.MIN_SHARE_KEYWORD_ONLY, why)]
    assert len(_hits.relevant(kw)) == 2
    hybrid = [hit("a", 1.0, KW), hit("b", _hits.MIN_SHARE_KEYWORD_ONLY, KW)]
    assert len(_hits.relevant(hybrid)) == 1


def test_reason_in_words() -> None:
    h = hit(
        "x",
        1.0,
        {**KW, **dense(0.62), "boosts": {"neighbour": 0.298726, "time": 1.0}},
        content="I walked the dog in the park.",
        created_at="2024-05-12T10:00:00+00:00",
    )
    text = _hits.reason(h, "where did I walk the dog?", today=date(2025, 1, 1))
    assert text == (
        "Matches ‘dog’; very close in meaning; next to a message that matches; "
        "from the time you asked about; said on 12 May 2024"
    )  # "walked" is not "walk": only words said are named
    for jargon in ("bm25", "cosine", "neighbour boost", "hybrid", "#"):
        assert jargon not in text
    same_year = _hits.reason(h, "dog", today=date(2024, 6, 1))
    assert same_year.endswith("said on 12 May")
    assert _hits.reason(h, "The DOG", today=date(2024, 6, 1)).startswith("Matches ‘DOG’")
    context = hit("y", 1.0, KW, content="It was amazing!")
    assert _hits.reason(context, "concert") == "The messages around it mention your words"


def test_kinds_in_words() -> None:
    assert _hits.label("chunk", "note", None) == "Memory"
    assert _hits.label("chunk", "preference", None) == "Memory · preference"
    assert _hits.label("chunk", "pattern", None) == "Memory · habit"
    assert _hits.label("note", "note", None) == "Note"
    assert _hits.label("fact", "fact", None) == "Profile"
    asked = {"kind": "agent_exchange", "role": "user", "type": "question"}
    assert _hits.label("chunk", "note", asked) == "Chat · you asked"
    assert _hits.label("chunk", None, {"role": "assistant"}) == "Chat · assistant"
    assert _hits.is_turn(asked) and not _hits.is_turn({"kind": "import", "role": "user"})
    junk: Any = "a hand-edited file may hold anything"
    assert not _hits.is_turn(None) and not _hits.is_turn(junk)


def test_day_words_and_links() -> None:
    assert _hits.day_words(None) == ""
    assert _hits.day_words("not a date") == ""
    assert _hits.day_words("2023-05-08T13:56:00Z", today=date(2024, 1, 1)) == "8 May 2023"
    note = Hit(row("note:vault/a b.md", "x", kind="note", path="vault/a b.md"), 1.0, KW)
    assert _hits.href(note) == "/ui/notes/view?path=a%20b.md"
    assert _hits.href(hit("chunk-20240101-000000000000", 1.0, KW)) == (
        "/ui/memories/chunk-20240101-000000000000"
    )
    assert _hits.href(Hit(row("fact:x", "x", kind="fact"), 1.0, KW)) == "/ui/profile"


def test_ranking_turns_diversity_off_only() -> None:
    p = _hits.ranking(SearchParams())
    assert not p.diversifies
    assert p.neighbour_weight == SearchParams().neighbour_weight


def test_notes_show_their_words_not_their_markdown() -> None:
    assert _hits.plain("# Me\n\nMy sister is [[Jane Doe]] ([[entities/x|X]]).\n- **tea**") == (
        "Me\n\nMy sister is Jane Doe (X).\ntea"
    )
    note = Hit(row("note:vault/u.md", "# Me\n[[Jane Doe]]", kind="note", path="vault/u.md"), 1, KW)
    assert _hits.shown([note], "jane")[0].content == "Me\nJane Doe"


def test_days_and_times_in_words() -> None:
    from memagent.server.ui._render import clock, day_name, memory_kind

    today = date(2024, 5, 9)
    assert day_name("2024-05-09", today) == "Today"
    assert day_name("2024-05-08", today) == "Yesterday"
    assert day_name("2023-05-08", today) == "8 May 2023"
    assert day_name("", today) == day_name("garbage", today) == "Undated"
    assert clock("2024-05-08T13:56:00+00:00") == "13:56"
    assert memory_kind("pattern") == "Memory · habit" and memory_kind(None) == "Memory"
