"""Questions about the assistant's own words (memagent.index.roles) and how
recall treats the assistant's replies for them."""

from __future__ import annotations

from pathlib import Path

import pytest

from memagent.index import Doc, Index, SearchParams, non_fact, search
from memagent.index.roles import asks_about_assistant, infer_speaker, name_prefix, said_by_assistant


@pytest.mark.parametrize(
    "query",
    [
        "Can you remind me of the name of the last venue you recommended?",
        "In our previous chat, you suggested a few alternative terms. What were they?",
        "I was going through our previous conversation about Catalonia.",
        "What were the three objectives we outlined for the project?",
        "What was your suggestion for the sauce?",
        "which two companies did you mention earlier?",
        "Which recipe have you given me for the stew?",
        "You had told me a book title, which one was it?",
    ],
)
def test_questions_about_the_assistant(query: str) -> None:
    assert asks_about_assistant(query)


@pytest.mark.parametrize(
    "query",
    [
        "How many bikes do I own?",
        "Can you recommend some cultural events this weekend?",
        "What did Maria say about her dog?",
        "Where do you live?",
        "Could you suggest a name and tell me why?",
        "We made pasta last night, what wine goes with it?",
        "",
        "you" * 2000,
    ],
)
def test_questions_about_people(query: str) -> None:
    assert not asks_about_assistant(query)


def test_said_by_assistant() -> None:
    assert said_by_assistant({"role": "assistant"})
    assert said_by_assistant({"type": "reply"})
    assert not said_by_assistant({"role": "user"})
    assert not said_by_assistant({"type": "question"})
    assert not said_by_assistant(None)
    # A hand-edited chunk file may hold anything there: no crash, not the assistant.
    assert not said_by_assistant({"role": ["assistant"], "type": {"x": 1}})
    assert not non_fact({"role": ["assistant"], "type": {"x": 1}})


def test_recall_lifts_the_reply_penalty_only_for_questions_about_the_assistant(
    tmp_path: Path,
) -> None:
    idx = Index(tmp_path / "index.sqlite")
    idx.upsert(
        [
            Doc("u", "chunk", "chunks/u.json", "I want a quiet venue",
                source={"role": "user"}),
            Doc("a", "chunk", "chunks/a.json", "For a quiet jazz night venue try Blue Note",
                source={"role": "assistant"}),
        ]
    )  # fmt: skip
    p = SearchParams()
    plain = search(idx, "quiet jazz night venue", params=p)
    assert plain[0].row.doc_id == "u"
    assert plain[1].why["boosts"]["non_fact"] == p.non_fact_weight
    about = search(idx, "Which quiet jazz night venue did you recommend?", params=p)
    assert about[0].row.doc_id == "a"
    assert about[0].why["boosts"]["about_assistant"] == 1.0


@pytest.mark.parametrize(
    ("line", "name"),
    [
        ("Melanie: I ran a charity race.", "Melanie"),
        ("Jon Snow: winter is coming", "Jon Snow"),
        ("José: olá", "José"),
        ("O'Brien: yes", "O'Brien"),
        ("Anne van Dijk: hoi", "Anne van Dijk"),
        ("Note: buy milk", None),
        ("TODO: call mum", None),
        ("Step 2: stir", None),
        ("my cat: Pixel", None),
        ("10:30 dentist", None),
        ("see https://example.org", None),
        ("Caroline:no space", None),
        ("Ana Maria Lopez Garcia: too long a name", None),
        ("", None),
    ],
)
def test_name_prefix_reads_a_person_not_a_label(line: str, name: str | None) -> None:
    assert name_prefix(line) == name


def test_infer_speaker_only_for_imported_lines_without_one() -> None:
    assert infer_speaker({"kind": "import", "role": "user"}, "Ana: hi") == "Ana"
    assert infer_speaker({"kind": "import", "speaker": "Bo"}, "Ana: hi") is None
    assert infer_speaker({"kind": "import", "role": "assistant"}, "Ana: hi") is None
    assert infer_speaker({"kind": "cli"}, "Ana: hi") is None
    assert infer_speaker(None, "Ana: hi") is None
