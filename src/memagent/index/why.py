"""Why a memory was found and ranked where it is: `Why`, one per search hit.

It holds the candidate lists that found the memory (its rank and raw score in
each: BM25 for keywords, cosine for meaning), the boosts that moved its score
(each with its value and the reason in words a person understands, as the
signal gave it), the search's mode (hybrid, or keyword-only and the reason) and
what diversity did when it was picked.

`to_json()` is the shape every interface shows (`"why"` of a recall hit):
`{"keyword": {"rank", "bm25"}, "dense": {"rank", "cosine"}, "boosts": {name:
value}, "mode": "...", "diversity": {"same_conversation", "max_cosine"}}`, each
key present only when it applies. A `Why` also reads as that mapping
(`why["boosts"]`, `"dense" in why`), so code written against the JSON keeps
working; `from_json` reads one back. Its parts are named tuples: one search
makes a few hundred of them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from memagent.core.jsontext import JsonObject


class Listed(NamedTuple):
    """A memory's place in one candidate list."""

    rank: int
    score: float
    """The list's raw score (BM25, or cosine), rounded to 4 places as it is shown."""


class Boost(NamedTuple):
    """What one signal did to a memory's score."""

    name: str
    """The key in `why.boosts` ("speaker", "time", "non_fact", …)."""
    value: float
    """What `why.boosts` shows: the share it gained, or the weight it kept."""
    words: str = ""
    """The reason in plain words ("said by Caroline, whom the question names")."""


class Diversified(NamedTuple):
    """What diversity did when the memory was picked (see `diversity`)."""

    same_conversation: int
    """Hits picked before it from its conversation."""
    max_cosine: float
    """Its highest cosine similarity to a hit picked before it."""


@dataclass(eq=False, slots=True)
class Why(Mapping[str, Any]):
    """Why one hit was found and ranked (module doc)."""

    keyword: Listed | None = None
    dense: Listed | None = None
    boosts: dict[str, Boost] = field(default_factory=dict)
    """By name, in the order they applied."""
    mode: str | None = None
    diversity: Diversified | None = None

    def add(self, boost: Boost) -> None:
        self.boosts[boost.name] = boost

    def reasons(self) -> list[str]:
        """The boosts' reasons in words, in the order they applied."""
        return [b.words for b in self.boosts.values() if b.words]

    def to_json(self) -> JsonObject:
        out: JsonObject = {}
        if self.keyword is not None:
            out["keyword"] = {"rank": self.keyword.rank, "bm25": self.keyword.score}
        if self.dense is not None:
            out["dense"] = {"rank": self.dense.rank, "cosine": self.dense.score}
        if self.boosts:
            out["boosts"] = {b.name: b.value for b in self.boosts.values()}
        if self.mode is not None:
            out["mode"] = self.mode
        if self.diversity is not None:
            out["diversity"] = {
                "same_conversation": self.diversity.same_conversation,
                "max_cosine": round(self.diversity.max_cosine, 4),
            }
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Why:
        """A `Why` read back from its JSON (missing or odd parts are left out)."""

        def listed(part: object, score: str) -> Listed | None:
            if not isinstance(part, Mapping):
                return None
            return Listed(int(part.get("rank") or 0), float(part.get(score) or 0.0))

        boosts = data.get("boosts")
        div = data.get("diversity")
        mode = data.get("mode")
        return cls(
            keyword=listed(data.get("keyword"), "bm25"),
            dense=listed(data.get("dense"), "cosine"),
            boosts={
                str(k): Boost(str(k), float(v))
                for k, v in (boosts.items() if isinstance(boosts, Mapping) else ())
                if isinstance(v, int | float)
            },
            mode=mode if isinstance(mode, str) else None,
            diversity=Diversified(
                int(div.get("same_conversation") or 0), float(div.get("max_cosine") or 0.0)
            )
            if isinstance(div, Mapping)
            else None,
        )

    # -- read as the JSON mapping ------------------------------------------------------
    def __getitem__(self, key: str) -> Any:
        return self.to_json()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_json())

    def __len__(self) -> int:
        return len(self.to_json())
