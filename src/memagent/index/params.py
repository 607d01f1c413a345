"""The knobs of recall: `SearchParams`, made from the stages' knobs and every
signal's (`memagent.index.signals.SIGNALS`), so a new signal's knobs appear
here, in `config.toml`'s `[search]` table and in the configuration reference
without another line. Defaults are tuned on LoCoMo (bench/recall_locomo.py).

Knob names are flat and unique across the parts (`speaker_boost`,
`session_decay`, …): config files, benchmarks and callers name them so.
`search_params(overrides)` validates a `[search]` table against them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from memagent.core import InvalidInput
from memagent.index.signals import SIGNALS, Signal
from memagent.index.sqlite import CONTEXT_MAX_DOCS, CONTEXT_WEIGHT


class Fusion(BaseModel):
    """Candidates and their fusion: the best `candidates` by BM25 and by cosine,
    fused by weighted reciprocal rank plus a share of their normalised scores."""

    model_config = ConfigDict(extra="forbid")

    candidates: int = Field(default=100, ge=1, le=5000)
    """Candidates taken from each list (keyword, dense), at least k."""
    rrf_k: float = Field(default=60.0, gt=0)
    """Reciprocal-rank fusion's constant: a candidate at rank r counts 1 / (rrf_k + r)."""
    keyword_weight: float = Field(default=1.0, ge=0)
    """Weight of the keyword (BM25) list in the fusion."""
    dense_weight: float = Field(default=1.0, ge=0)
    """Weight of the dense (cosine) list in the fusion."""
    score_weight: float = Field(default=0.5, ge=0)
    """Share of each list's normalised raw score added to the fused rank score."""
    context_weight: float = Field(default=CONTEXT_WEIGHT, ge=0, le=10)
    """A query word in the turns next to a turn (its context) counts this much of one
    in the turn itself; 0 matches the turns' own words only."""
    context_max_docs: int = Field(default=CONTEXT_MAX_DOCS, ge=0, le=10**9)
    """A query word in the own words of more than this many memories is matched in
    their own words only."""


class Neighbour(BaseModel):
    """The neighbour stage: in a conversation the answer often sits in the turn next
    to the one that matches, so a turn gains a share of its best neighbour's fused
    score (added before any signal's factor)."""

    model_config = ConfigDict(extra="forbid")

    neighbour_weight: float = Field(default=0.3, ge=0)
    """Share of its best conversation neighbour's fused score a turn gains."""


class Diversity(BaseModel):
    """The diversity stage (`memagent.index.diversity`): the top k picked greedily."""

    model_config = ConfigDict(extra="forbid")

    session_decay: float = Field(default=0.5, ge=0, le=1)
    """Each further pick from one conversation counts this much (1: off)..."""
    session_free: int = Field(default=2, ge=0, le=1000)
    """...after this many picks from it (a turn, its reply and one more) go undecayed."""
    mmr_weight: float = Field(default=0.3, ge=0)
    """Maximal marginal relevance: minus this × the highest cosine to a picked hit."""
    session_head: int = Field(default=3, ge=0, le=1000)
    """A question that counts, adds up, compares or orders (`breadth`) gets its first
    this many hits from different conversations."""
    session_head_always: bool = False
    """...every question does."""

    @property
    def diversifies(self) -> bool:
        return self.session_decay < 1.0 or self.mmr_weight > 0 or self.session_head > 0


class Stages(Diversity, Neighbour, Fusion):
    """The knobs of the stages around the signals (the signals add theirs); listed
    fusion first (pydantic orders the fields of the last base first)."""

    model_config = ConfigDict(extra="forbid")


def knobs_model(name: str, base: type[BaseModel], parts: Sequence[type[BaseModel]]) -> Any:
    """A model with `base`'s fields and every field of `parts` (each signal's
    knobs), flat; a name two parts share is a mistake and raises."""
    fields: dict[str, Any] = {}
    for part in parts:
        for field_name, info in part.model_fields.items():
            if field_name in fields or field_name in base.model_fields:
                raise TypeError(f"search knob {field_name!r} is declared twice ({part.__name__})")
            fields[field_name] = (info.annotation, info)
    return create_model(name, __base__=base, __doc__=base.__doc__, **fields)


if TYPE_CHECKING:
    SearchParams = Stages
else:
    SearchParams = knobs_model("SearchParams", Stages, SIGNALS)
    SearchParams.__module__ = __name__
    SearchParams.__doc__ = (
        "Knobs of the ranking: the stages' (`Stages`) and every signal's (`SIGNALS`)."
    )


def knob_parts() -> list[type[BaseModel]]:
    """Where each knob is declared, in the order `SearchParams` lists them: the
    stages, then the signals (the configuration reference documents each)."""
    return [Fusion, Neighbour, Diversity, *SIGNALS]


_BOUND: dict[tuple[object, ...], list[Signal]] = {}
_BOUND_MAX = 64


def bind(params: SearchParams, signals: Sequence[type[Signal]] | None = None) -> list[Signal]:
    """The signals (default: `SIGNALS`) with their knobs from `params`; a signal
    whose knobs `params` lacks (one added after it was made) takes its defaults.
    Signals are frozen values, so one binding serves every search with the same
    knobs (a search's hot path makes none)."""
    chosen = tuple(SIGNALS if signals is None else signals)
    key = (chosen, *params.__dict__.items())
    try:
        bound = _BOUND.get(key)
    except TypeError:  # a value set without validation that cannot be a key
        key, bound = (), None
    if bound is None:
        have = type(params).model_fields
        bound = [
            s.model_construct(**{f: getattr(params, f) for f in s.model_fields if f in have})
            for s in chosen
        ]
        if key:
            if len(_BOUND) >= _BOUND_MAX:
                _BOUND.clear()
            _BOUND[key] = bound
    return bound


def search_params(overrides: Mapping[str, object], where: str = "config") -> SearchParams:
    """`SearchParams` with `overrides` (a `[search]` table) on the defaults;
    `InvalidInput` naming `search.KNOB` and what is wrong, in one line."""
    try:
        return SearchParams.model_validate(dict(overrides))
    except ValidationError as exc:
        first = exc.errors()[0]
        knob = ".".join(str(p) for p in first["loc"])
        raise InvalidInput(f"{where}: search.{knob}: {first['msg']}") from exc
