"""A long memory line keeps the part that bears on the question (`memagent.agent.excerpt`)."""

from __future__ import annotations

import time

from hypothesis import given
from hypothesis import strategies as st

from memagent.agent.excerpt import ELLIPSIS, excerpt
from memagent.agent.memory import MemoryAccess
from memagent.core import MemoryHome
from memagent.memory.chunks import ChunkDraft, ChunkStore

LONG = (
    "Thanks for the tips on sleep, I will try a few of them tonight. "
    "I've been watching TV shows before bed and it might be affecting my rest. "
    "By the way, I've been using my Fitbit Charge 3 for 9 months now. "
    "Do you know any good apps for meditation? I also wonder about naps."
)


def test_the_sentence_the_question_is_about_survives_the_cut() -> None:
    got = excerpt(LONG, "How long have I been using my Fitbit Charge 3?", 120)
    assert "Fitbit Charge 3 for 9 months" in got
    assert got.startswith(ELLIPSIS) and len(got) <= 120


def test_a_line_that_fits_or_matches_nothing_is_cut_at_the_head() -> None:
    assert excerpt("short line", "Fitbit?", 400) == "short line"
    assert excerpt(LONG, "What is the capital of Peru?", 80) == LONG[:80]
    assert excerpt(LONG, "How were the sleep tips?", 100) == LONG[:100]  # the head holds it


def test_one_very_long_sentence_is_cut_around_its_start() -> None:
    text = "Intro. " + "my fitbit " * 100
    got = excerpt(text, "fitbit", 60)
    assert len(got) <= 60 and "fitbit" in got


@given(st.text(max_size=2000), st.text(max_size=200), st.integers(min_value=20, max_value=600))
def test_never_longer_than_the_limit(text: str, question: str, limit: int) -> None:
    flat = " ".join(text.split())
    got = excerpt(flat, question, limit)
    assert len(got) <= limit
    if len(flat) <= limit:
        assert got == flat


def test_a_hostile_line_is_cheap() -> None:
    text = "fitbit. " * 50_000
    started = time.perf_counter()
    got = excerpt(text, "fitbit " * 500, 400)
    assert len(got) <= 400 and time.perf_counter() - started < 60  # a hang guard


def test_a_long_recalled_line_shows_the_part_the_question_is_about(home: MemoryHome) -> None:
    store = ChunkStore(home, embeddings=False)
    filler = "We talked about the weather and the garden all afternoon. " * 8
    line = filler + LONG  # the sentence asked about lies past the 400-character cut
    store.create_many([ChunkDraft(content=line, source={"kind": "import", "role": "user"})])
    store.close()
    memory = MemoryAccess(home, embeddings=False)
    try:
        ctx = memory.context("How long have I used my Fitbit Charge?", budget_tokens=800, k=5)
        head = memory.context("How was the weather in the garden?", budget_tokens=800, k=5)
    finally:
        memory.close()
    assert "Fitbit Charge 3 for 9 months" in ctx.text and ELLIPSIS in ctx.text
    assert "You said: We talked about the weather" in head.text and "Fitbit" not in head.text
