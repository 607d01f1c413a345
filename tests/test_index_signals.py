"""Recall's signals (`memagent.index.signals`): every registered signal's knobs are
search params and `[search]` settings, a new signal is one class and one line in
`SIGNALS`, and each boost says why in words."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import pytest
from pydantic import Field

from memagent.core import CorruptFile, InvalidInput, MemoryHome
from memagent.index import SIGNALS, Boost, Index, QueryFacts, Row, SearchParams, Signal, Why, search
from memagent.index.documents import Doc
from memagent.index.params import Stages, bind, knob_parts, knobs_model, search_params
from memagent.index.signals import NOTHING
from memagent.memory.chunks import ChunkStore


def _doc(n: int, content: str, **kw: object) -> Doc:
    return Doc(doc_id=f"d{n}", kind="chunk", path=f"chunks/d{n}.json", content=content, **kw)  # type: ignore[arg-type]


def test_every_signal_knob_is_a_search_param_with_its_default_and_bounds() -> None:
    for signal in SIGNALS:
        assert signal.model_fields, f"{signal.__name__} has no knobs"
        for name, info in signal.model_fields.items():
            field = SearchParams.model_fields[name]
            assert (field.annotation, field.default, field.metadata) == (
                info.annotation,
                info.default,
                info.metadata,
            ), name
    declared = [n for part in knob_parts() for n in part.model_fields]
    assert sorted(declared) == sorted(SearchParams.model_fields)  # each knob declared once
    assert len({s.name for s in SIGNALS}) == len(SIGNALS)


def test_bound_signals_take_their_knobs_from_the_params() -> None:
    p = SearchParams(speaker_boost=0.25, recency_weight=2.0)
    by_name = {s.name: s for s in bind(p)}
    assert by_name["speaker"].speaker_boost == 0.25  # type: ignore[attr-defined]
    assert by_name["recency"].recency_weight == 2.0  # type: ignore[attr-defined]


def test_every_knob_can_be_set_in_config_toml(home: MemoryHome) -> None:
    changed = {
        name: (not info.default) if isinstance(info.default, bool) else info.default + 1
        for name, info in SearchParams.model_fields.items()
        if name not in ("session_decay", "non_fact_weight")  # at most 1
    }
    changed |= {"session_decay": 0.25, "non_fact_weight": 0.5}
    lines = "".join(f"{k} = {str(v).lower()}\n" for k, v in changed.items())
    cfg = home.layout.config
    cfg.write_text(cfg.read_text().replace("[search]\n", "[search]\n" + lines))
    store = ChunkStore(MemoryHome.open(home.root), embeddings=False)
    try:
        got = store.search_params()
    finally:
        store.close()
    assert {k: getattr(got, k) for k in changed} == changed


def test_an_old_config_file_still_loads(home: MemoryHome) -> None:
    cfg = home.layout.config
    old = "[search]\nrecency_weight = 0.0\naccess_weight = 0.0\n"
    cfg.write_text(cfg.read_text().replace("[search]\n", old))
    store = ChunkStore(MemoryHome.open(home.root), embeddings=False)
    try:
        assert store.search_params() == SearchParams()
    finally:
        store.close()


@pytest.mark.parametrize(
    ("line", "error", "match"),
    [
        ("speaker_boost = -1", InvalidInput, r"search\.speaker_boost"),
        ("speakr_boost = 0.5", InvalidInput, r"search\.speakr_boost: Extra inputs"),
        ("candidates = 0", InvalidInput, r"search\.candidates"),
        ('speaker_boost = "high"', CorruptFile, r"search\.speaker_boost"),
        ("speaker_boost = [1, 2]", CorruptFile, r"search\.speaker_boost"),
    ],
)
def test_a_bad_knob_is_named_in_one_line(
    home: MemoryHome, line: str, error: type[Exception], match: str
) -> None:
    cfg = home.layout.config
    cfg.write_text(cfg.read_text().replace("[search]\n", f"[search]\n{line}\n"))
    with pytest.raises(error, match=match):
        store = ChunkStore(MemoryHome.open(home.root), embeddings=False)
        try:
            store.recall("anything")
        finally:
            store.close()
    assert cfg.read_text().count(line) == 1  # the file is never rewritten


def test_search_params_refuses_a_bad_table_naming_it() -> None:
    assert search_params({}) == SearchParams()
    with pytest.raises(InvalidInput, match=r"^x\.toml: search\.rrf_k: "):
        search_params({"rrf_k": 0}, "x.toml")


class Beans(Signal):
    """A toy signal: a memory that mentions beans."""

    name: ClassVar[str] = "beans"
    beans_boost: float = Field(default=9.0, ge=0)
    """A memory mentioning beans gains this share."""

    def factor(self, row: Row, facts: QueryFacts) -> tuple[float, Boost | None]:
        if "beans" in row.content:
            return 1.0 + self.beans_boost, Boost(self.name, self.beans_boost, "mentions beans")
        return NOTHING


def test_a_new_signal_is_one_class_and_one_line(tmp_path: Path) -> None:
    idx = Index(tmp_path / "i.sqlite")
    idx.upsert(
        [
            _doc(1, "coffee coffee coffee at the corner shop"),
            _doc(2, "we bought coffee beans"),
            _doc(3, "coffee is hot"),
        ]
    )
    before = [h.row.doc_id for h in search(idx, "coffee", now=0.0)]
    SIGNALS.append(Beans)  # the one line
    try:
        hits = search(idx, "coffee", now=0.0)
        made = knobs_model("Params", Stages, SIGNALS)
    finally:
        SIGNALS.remove(Beans)
    after = [h.row.doc_id for h in hits]
    assert before[0] != "d2" and after[0] == "d2" and sorted(after) == sorted(before)
    assert hits[0].why["boosts"]["beans"] == 9.0 and "mentions beans" in hits[0].why.reasons()
    # its knob is a search param (so a [search] setting) with its default and bound
    assert made().beans_boost == 9.0 and made(beans_boost=1.0).beans_boost == 1.0  # type: ignore[attr-defined]
    with pytest.raises(ValueError):
        made(beans_boost=-1.0)
    assert "beans_boost" not in SearchParams.model_fields  # nothing else changed


def test_a_knob_declared_twice_is_refused() -> None:
    class Twin(Signal):
        name: ClassVar[str] = "twin"
        speaker_boost: float = 1.0

    with pytest.raises(TypeError, match="'speaker_boost' is declared twice"):
        knobs_model("Params", Stages, [*SIGNALS, Twin])


def test_boosts_say_why_in_words(tmp_path: Path) -> None:
    idx = Index(tmp_path / "i.sqlite")
    may = 1683590400.0  # 9 May 2023
    idx.upsert(
        [
            _doc(1, "Caroline: I went to the support group", speaker="Caroline", created=may),
            _doc(2, "Did I go to the group?", source={"role": "user", "type": "question"}),
        ]
    )
    hits = {
        h.row.doc_id: h for h in search(idx, "What did Caroline do on 9 May 2023 at the group?")
    }
    assert hits["d1"].why.reasons() == [
        "said by Caroline, whom the question names",
        "said within the time the question names (9 May 2023)",
    ]
    assert hits["d2"].why.reasons() == [
        "a question or reply in a chat, not something a person stated: ranked lower"
    ]


def test_why_reads_as_its_json_and_back() -> None:
    data = {
        "keyword": {"rank": 1, "bm25": 2.5},
        "dense": {"rank": 3, "cosine": 0.41},
        "boosts": {"speaker": 0.5},
        "mode": "hybrid",
        "diversity": {"same_conversation": 1, "max_cosine": 0.2},
    }
    why = Why.from_json(data)
    assert why.to_json() == data and dict(why) == data and why == data
    assert "dense" in why and why["boosts"]["speaker"] == 0.5 and why.get("nope") is None
    assert Why.from_json({"dense": "junk", "boosts": {"x": "y"}}).to_json() == {}
