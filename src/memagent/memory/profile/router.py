"""The tag router: from a fact's tags, the resource files it belongs in, ranked.

A tag that equals one of a resource's `_metadata.tags` scores 3; a tag that
appears among the words of its description or section names scores 1 (all
compared by `match_key`, so "allergies" meets "allergy"). Resources that score
nothing are dropped; when none scores, the fact goes to general preferences.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from memagent.memory.profile.item_keys import match_key, tokens
from memagent.memory.profile.models import Metadata, Resource
from memagent.memory.profile.store import GENERAL_RESOURCE

TAG_SCORE = 3
WORD_SCORE = 1


@dataclass(frozen=True)
class Route:
    file: str
    score: int
    matched: tuple[str, ...]


def _words(metadata: Metadata, section_paths: Iterable[str]) -> set[str]:
    words = {match_key(t) for t in tokens(metadata.description)}
    for path in section_paths:
        words.update(match_key(t) for t in tokens(path))
    return words


def route(
    tags: Iterable[str],
    resources: Mapping[str, Resource],
    *,
    limit: int = 3,
    fallback: str = GENERAL_RESOURCE,
) -> list[Route]:
    """Rank `resources` for `tags`; at least the fallback when it exists."""
    wanted = [(t, match_key(t)) for t in tags]
    wanted = [(t, k) for t, k in wanted if k]
    ranked: list[Route] = []
    for name, resource in resources.items():
        own = {match_key(t) for t in resource.metadata.tags}
        words = _words(resource.metadata, resource.paths())
        score = 0
        matched: list[str] = []
        for tag, key in wanted:
            if key in own:
                score += TAG_SCORE
                matched.append(tag)
            elif key in words:
                score += WORD_SCORE
                matched.append(tag)
        if score:
            ranked.append(Route(name, score, tuple(matched)))
    ranked.sort(key=lambda r: (-r.score, r.file))
    if not ranked and fallback in resources:
        return [Route(fallback, 0, ())]
    return ranked[:limit]
