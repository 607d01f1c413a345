"""Where a fact of each kind is written and how its line reads: the list (`Target`) each
kind the planning reads goes to, its line's template, and the lookups the planning makes
in the files it writes."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from memagent.memory.profile.changes import FOOD, GENERAL, HEALTH, ROUTINE
from memagent.memory.profile.item_keys import match_key
from memagent.memory.profile.models import Item, Resource


@dataclass(frozen=True)
class Target:
    file: str
    path: str
    template: str
    single: str | None = None
    """The fixed key of a single-valued fact ("home"): a new value updates it."""
    fallback: str | None = None


TARGETS: dict[str, Target] = {
    "allergy": Target(HEALTH, "health.allergies", "Allergic to {v}"),
    "diet": Target(FOOD, "diet.restrictions", "{V}"),
    "food_like": Target(FOOD, "food.likes", "Likes {v}"),
    "food_dislike": Target(FOOD, "food.dislikes", "Dislikes {v}"),
    "drink_like": Target(FOOD, "drink.likes", "Likes {v}"),
    "drink_dislike": Target(FOOD, "drink.dislikes", "Dislikes {v}"),
    "condition": Target(HEALTH, "health.conditions", "{V}"),
    "medication": Target(HEALTH, "health.medications", "Takes {v}"),
    "exercise": Target(HEALTH, "fitness.activities", "{V}"),
    "routine": Target(ROUTINE, "routine.daily", "{S}"),
    "plan": Target(ROUTINE, "schedule.upcoming", "{S}"),
    "whereabouts": Target(ROUTINE, "whereabouts.current", "In {V}", single="whereabouts"),
    "home": Target(GENERAL, "personal.facts", "Lives in {V}", single="home"),
    "work": Target(GENERAL, "personal.facts", "Works as {v}", single="work"),
    "name": Target(GENERAL, "personal.facts", "Name: {V}", single="name"),
    "pet": Target(GENERAL, "personal.facts", "{V} named {N}", single="pet"),
    "family": Target(GENERAL, "personal.facts", "{V}: {N}", single="family"),
    "language": Target(GENERAL, "personal.facts", "Speaks {V}"),
    "like": Target(GENERAL, "preferences.likes", "Likes {v}"),
    "dislike": Target(GENERAL, "preferences.dislikes", "Dislikes {v}"),
    "communication": Target(GENERAL, "communication.style", "{S}", fallback="preferences.likes"),
}


def display_line(template: str, value: str, name: str, clause: str) -> str:
    """The line `template` writes for `value` (and a pet's or person's `name`); a habit's,
    plan's or way of answering's line is its clause, when the clause is not too long."""
    sentence = _told_part(clause.strip(), value).rstrip(".!,; ")
    if len(sentence) > 120:
        sentence = value
    if template == "In {V}" and re.match(r"(?:my|our) ", value, re.I):
        return f"At {value}"  # "staying at my mum's": At my mum's
    return template.format(
        v=value, V=value[:1].upper() + value[1:], N=name, S=sentence[:1].upper() + sentence[1:]
    )


_TAIL = re.compile(
    r"\s*[\U0001f300-\U0001faff\u2600-\u27bf]|,?\s+(?:lol|haha|tbh|btw)\b|\s+-\s+|[;:!?]|"
    r",\s+(?:non[- ]negotiable|obviously|honestly)\b",
    re.IGNORECASE,
)


def _told_part(sentence: str, value: str) -> str:
    """`sentence` up to the first aside after `value` ("thursday night is pub quiz night with
    the lads, non negotiable 😂 so don't let me book anything then": up to "lads")."""
    at = sentence.lower().find(value.lower())
    if at < 0:
        return sentence
    tail = _TAIL.search(sentence, at + len(value))
    return sentence[: tail.start()] if tail else sentence


def path_in(resources: Mapping[str, Resource], target: Target) -> str | None:
    """The list `target` writes to in the user's files (its fallback in older files)."""
    res = resources.get(target.file)
    if res is None:
        return None
    paths = res.paths()
    if target.path in paths:
        return target.path
    return target.fallback if target.fallback in paths else None


def held_items(resources: Mapping[str, Resource], file: str, path: str) -> list[Item]:
    """The items held at `path` of `file` (none when either is missing)."""
    res = resources.get(file)
    return (res.items_at(path) if res is not None else None) or []


def existing(resources: Mapping[str, Resource], file: str, path: str, key: str) -> bool:
    """An item with `key` (word endings folded) is held at `path` of `file`."""
    mk = match_key(key)
    return any(match_key(i.item) == mk for i in held_items(resources, file, path))
