"""The chunking engine on real text: paragraph splits, merges, sentence splits, types."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from memagent.memory.chunks import detect_type, split_text

FIXTURE = Path(__file__).parent / "fixtures" / "chunks" / "project_notes.md"


def test_real_notes_merge_short_paragraphs() -> None:
    text = FIXTURE.read_text(encoding="utf-8")
    pieces = split_text(text)
    # Six paragraphs, most under 100 tokens: merged into fewer, each within bounds.
    assert 1 < len(pieces) < 6
    assert all(p.tokens <= 800 for p in pieces)
    assert all(p.tokens >= 60 for p in pieces[:-1])
    joined = " ".join(p.text for p in pieces)
    assert "Migration retrospective" in joined and "Nobody has measured it yet." in joined


def test_small_limits_split_at_sentence_boundaries() -> None:
    text = FIXTURE.read_text(encoding="utf-8")
    pieces = split_text(text, min_tokens=10, max_tokens=40)
    assert len(pieces) > 6
    for p in pieces:
        assert p.tokens <= 40
        assert p.text.rstrip()[-1] in ".?!:" or p.text.startswith("#")


def test_giant_sentence_is_split_on_words() -> None:
    text = " ".join(["word"] * 3000)
    pieces = split_text(text, max_tokens=800)
    assert len(pieces) >= 4
    assert sum(len(p.text.split()) for p in pieces) == 3000


def test_type_detection() -> None:
    assert detect_type("We decided to move billing to Postgres.") == "decision"
    assert detect_type("Maria prefers Tuesday windows rather than weekends.") == "preference"
    assert detect_type("The team usually writes a rollback script.") == "pattern"
    assert detect_type("Jonas was born in 1988.") == "fact"
    assert detect_type("hmm, interesting") == "note"


@settings(max_examples=50, deadline=None)
@given(st.text(max_size=3000))
def test_no_text_is_lost(text: str) -> None:
    pieces = split_text(text, min_tokens=5, max_tokens=50)
    assert "".join("".join(p.text.split()) for p in pieces) == "".join(text.split())
