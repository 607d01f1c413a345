"""From what the model read in a statement to profile operations, mechanically.

The model only says what kind of fact a sentence holds and copies its value
(`Extracted`). Everything with a rule is decided here, in Python:

- **Grounding.** A value whose words are not in the statement is dropped (a
  copied few-shot example, an invented fact), and so is a fact about someone
  else ("Tom is allergic to…", "my sister is vegan").
- **Kind fixes.** "allergic" must be said for an allergy ("can't stand X" is a
  dislike); a like said with "don't like"/"hate"/"can't stand" is a dislike; a
  name after "my dog is called" is the dog's name, never a like.
- **Negation and correction.** "no longer", "not … anymore", "stopped",
  "no more X", "instead of X", "not X" remove the item they name (a like that
  is said to be over moves to dislikes); single-valued facts (where the user
  lives, their job, a pet's or a relative's name, where they are now) have one
  key each, so "actually … now" updates that item in place.
- **Expiry.** A time bound in the sentence ("until Friday", "this week") sets
  the item's expiry, resolved from the statement's date (`timebound`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from memagent.memory.profile.keys import match_key, slug, tokens
from memagent.memory.profile.models import Resource
from memagent.memory.profile.operations import AnyOp, AppendOp, RemoveOp, UpdateOp
from memagent.memory.profile.timebound import time_bound

Kind = Literal[
    "allergy",
    "diet",
    "food_like",
    "food_dislike",
    "drink_like",
    "drink_dislike",
    "condition",
    "medication",
    "exercise",
    "routine",
    "plan",
    "whereabouts",
    "home",
    "work",
    "name",
    "pet",
    "family",
    "like",
    "dislike",
    "communication",
]
KINDS: tuple[str, ...] = Kind.__args__  # type: ignore[attr-defined]
MAX_FACTS_PER_CALL = 4
MAX_VALUE_CHARS = 60
MAX_NAME_CHARS = 40

FOOD, GENERAL = "resource_user_food_prefs.json", "resource_user_general_prefs.json"
HEALTH, ROUTINE = "resource_user_health.json", "resource_user_routine.json"


class Extracted(BaseModel):
    """One fact as the model reads it: its kind, the thing (copied from the
    statement) and, for a pet or a relative, their name."""

    model_config = ConfigDict(extra="forbid")

    kind: Kind
    value: Annotated[str, StringConstraints(min_length=1, max_length=MAX_VALUE_CHARS)]
    name: Annotated[str, StringConstraints(max_length=MAX_NAME_CHARS)] = ""


class Extraction(BaseModel):
    model_config = ConfigDict(extra="forbid")

    facts: list[Extracted] = Field(max_length=MAX_FACTS_PER_CALL)


def extraction_schema() -> dict[str, object]:
    """The reply schema, written out so llama.cpp supports every part of it:
    enums, bounded strings and arrays, no regex `pattern`, no `$ref`."""
    fact = {
        "type": "object",
        "properties": {
            "kind": {"type": "string", "enum": list(KINDS)},
            "value": {"type": "string", "minLength": 1, "maxLength": MAX_VALUE_CHARS},
            "name": {"type": "string", "maxLength": MAX_NAME_CHARS},
        },
        "required": ["kind", "value", "name"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {"facts": {"type": "array", "items": fact, "maxItems": MAX_FACTS_PER_CALL}},
        "required": ["facts"],
        "additionalProperties": False,
    }


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
    "like": Target(GENERAL, "preferences.likes", "Likes {v}"),
    "dislike": Target(GENERAL, "preferences.dislikes", "Dislikes {v}"),
    "communication": Target(GENERAL, "communication.style", "{S}", fallback="preferences.likes"),
}
ALWAYS_CHECKED = frozenset(
    {"food_like", "drink_like", "like", "exercise", "medication", "diet", "allergy", "condition"}
)
"""Lists a negated thing is looked for in whatever kind the model read."""
OPPOSITE = {
    "food_like": "food_dislike",
    "food_dislike": "food_like",
    "drink_like": "drink_dislike",
    "drink_dislike": "drink_like",
    "like": "dislike",
    "dislike": "like",
}

_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "my",
        "our",
        "some",
        "any",
        "of",
        "to",
        "for",
        "in",
        "on",
        "at",
        "with",
        "and",
        "or",
        "i",
        "me",
        "im",
        "i'm",
        "am",
        "is",
        "are",
        "be",
        "really",
        "very",
        "so",
        "much",
        "lot",
        "lots",
        "kind",
        "sort",
    ]
)
_OTHER_PERSON = re.compile(
    r"\b(my|our|his|her|their)\s+(\w+\s+)?(wife|husband|partner|boyfriend|girlfriend|son|"
    r"daughter|kids?|child(ren)?|mom|mum|mother|dad|father|sister|brother|friend|boss|"
    r"colleague|coworker|roommate|neighbou?r|grandma|grandpa|aunt|uncle|cousin|baby|"
    r"dog|cat|puppy|kitten|pet|parrot|rabbit|hamster|horse|fish)\b|"
    r"^\s*(he|she|they|his|her|their)\b",
    re.IGNORECASE,
)
_DIET = re.compile(
    r"\b(vegan|vegetarian|pescatarian|halal|kosher|keto|paleo|gluten[- ]free|dairy[- ]free)\b",
    re.IGNORECASE,
)
_DRINKS = re.compile(
    r"\b(coffee|tea|latte|lattes|espresso|cappuccino|flat white|beer|wine|water|juice|"
    r"milk|soda|cola|cocktails?|whisky|whiskey|matcha|kombucha|smoothies?|lemonade)\b",
    re.IGNORECASE,
)
_EVENT = re.compile(
    r"\b(appointment|meeting|wedding|flight|interview|concert|party|exam|deadline|"
    r"conference|surgery|check-?up)\b",
    re.IGNORECASE,
)
_NAMED_SUBJECT = re.compile(
    r"^(?!I\b)([A-Z][a-z]+)(\s+[A-Z][a-z]+)?\s+(is|was|has|had|likes|loves|lives|works|hates|"
    r"eats|drinks|can'?t|cannot|doesn'?t|does|will|just|and|takes|goes|plays|'s)\b"
)
_BACK = re.compile(r"\bback (home|from)\b|\bhome again\b|\bleft\b", re.IGNORECASE)
_FIRST_PERSON = re.compile(r"\b(i|i'm|im|i've|i'd|i'll|me|myself)\b", re.IGNORECASE)
_ALLERGY_WORDS = re.compile(r"allerg|anaphyla|epipen", re.IGNORECASE)
_DISLIKE_CUE = re.compile(
    r"\b(don'?t|do not|doesn'?t|never) (really )?(like|love|enjoy|eat|drink)\b|\bhate\b|"
    r"\bcan'?t stand\b|\bcannot stand\b|\bdislike\b|\bnot a fan of\b|\bloathe\b|\bdetest\b|"
    r"\bnot into\b|\bcan'?t bear\b",
    re.IGNORECASE,
)
_OVER_CUE = re.compile(
    r"\b(no longer|not \w+(\s\w+)? any ?more|(don'?t|do not|doesn'?t)\b.{0,40}\bany ?more|"
    r"stopped|quit|gave up|given up|no more|not anymore|isn'?t .{0,30}any ?more|"
    r"not allergic|am not|i'?m not|went off|gone off|over it)\b",
    re.IGNORECASE,
)
_NEGATED_THING = re.compile(
    r"\b(?:no more|not|instead of|rather than|no longer(?: \w+)?(?: to)?|"
    r"stopped (?:\w+ing)|gave up|given up|quit(?: \w+ing)?|off)\s+((?:\w+\s?){1,3})",
    re.IGNORECASE,
)
_WEEKLY = re.compile(
    r"\b(every|each|on)\s+(mon|tue|wed|thu|fri|sat|sun)\w*|\bweekends?\b|\bweekly\b|"
    r"\b(mon|tues|wednes|thurs|fri|satur|sun)days\b|\bonce a week\b|\btwice a week\b",
    re.IGNORECASE,
)
_NAME_AFTER = re.compile(
    r"\b(?:called|named|name is|name's)\s+([A-Z][\w'-]*)|"
    r"\b(?:[Mm]y|[Oo]ur)\s+(\w+)\s+([A-Z][a-z][\w'-]*)\b"
)


def _words(text: str) -> set[str]:
    return {match_key(t) for t in tokens(text)}


_ENDINGS = frozenset({"ning", "ing", "ner", "ners", "mming", "mer", "s", "es", "ed"})


def _said(word: str, said: set[str]) -> bool:
    """`word` (a match key) is among `said`, or shares a long enough stem with one
    of them ("intolerance"/"intolerant", "swimming"/"swim")."""
    if word in said:
        return True
    for other in said:
        short = min(len(word), len(other))
        common = next(
            (i for i, (a, b) in enumerate(zip(word, other, strict=False)) if a != b), short
        )
        rest = (word if len(word) > len(other) else other)[common:]
        if common == short >= 3 and rest in _ENDINGS:
            return True
        if common >= 4 and common >= 0.75 * short:
            return True
    return False


def grounded(value: str, statement: str) -> bool:
    """Every content word of `value` occurs in `statement` (plurals and word
    endings folded)."""
    said = _words(statement)
    content = [match_key(t) for t in tokens(value) if t not in _STOP]
    return bool(content) and all(_said(k, said) for k in content)


def clause_of(value: str, sentences: list[str]) -> str:
    """The sentence that mentions `value` (the first), else all of them."""
    keys = [match_key(t) for t in tokens(value) if t not in _STOP]
    for s in sentences:
        words = _words(s)
        if keys and all(k in words for k in keys):
            return s
    return " ".join(sentences)


def about_someone_else(clause: str, kind: str) -> bool:
    """A fact about another person or a pet, where the user is not the subject."""
    if kind in ("pet", "family"):
        return False
    if _OTHER_PERSON.search(clause) and not re.search(r"\b(i|i'm|i've)\b", clause, re.I):
        return True
    return bool(_NAMED_SUBJECT.match(clause.strip())) and not _FIRST_PERSON.search(clause)


@dataclass(frozen=True)
class Planned:
    """The operations for one statement, and the facts they came from."""

    operations: list[AnyOp]
    facts: list[Extracted]
    dropped: list[tuple[str, str]]


def _fix_kind(fact: Extracted, clause: str) -> str:
    kind: str = fact.kind
    if kind == "allergy" and not _ALLERGY_WORDS.search(clause):
        kind = "food_dislike" if _DISLIKE_CUE.search(clause) else "condition"
        if kind == "condition" and not re.search(r"intoleran|celiac|coeliac", clause, re.I):
            kind = "food_dislike"
    if kind in ("condition", "like", "food_like", "allergy") and _DIET.search(fact.value):
        kind = "diet"
    if kind == "condition" and re.search(r"\btak(e|es|ing)\b", clause, re.I):
        kind = "medication"
    if kind == "routine" and _EVENT.search(clause):
        kind = "plan"
    if kind in ("food_like", "food_dislike") and _DRINKS.search(fact.value):
        kind = "drink_" + kind.removeprefix("food_")
    liked = kind in ("food_like", "drink_like", "like")
    if liked and _DISLIKE_CUE.search(clause) and not _OVER_CUE.search(clause):
        kind = OPPOSITE[kind]
    if kind in ("like", "food_like") and fact.value[:1].isupper() and _NAME_AFTER.search(clause):
        m = _NAME_AFTER.search(clause)
        if m and fact.value in m.group(0):
            kind = (
                "pet"
                if _OTHER_PERSON.search(clause)
                and re.search(
                    r"dog|cat|pupp|kitt|pet|parrot|rabbit|hamster|horse|fish", clause, re.I
                )
                else "family"
            )
    if kind == "routine" and _WEEKLY.search(clause):
        return "routine_weekly"
    return kind


def _pet_or_family(fact: Extracted, kind: str, clause: str) -> tuple[str, str] | None:
    """(relation or animal, name) for a pet or relative, both said in the clause;
    what the model left out or did not copy from the clause is read from it."""
    name, value = fact.name.strip(), fact.value.strip()
    name = name if name and grounded(name, clause) else ""
    value = value if value and grounded(value, clause) else ""
    m = _NAME_AFTER.search(clause)
    if value and not name and value[:1].isupper() and m and value in m.group(0):
        name, value = value, ""
    if not name and m is not None:
        name = m.group(1) or m.group(3) or ""
    if not value or value.lower() == name.lower():
        if m is not None and m.group(2):
            value = m.group(2)
        else:
            who = _OTHER_PERSON.search(clause)
            value = who.group(3) if who is not None and who.group(3) else ""
    if not value or not name or value.lower() == name.lower():
        return None
    return value, name


def _display(template: str, value: str, name: str, clause: str) -> str:
    sentence = clause.strip().rstrip(".!")
    if len(sentence) > 120:
        sentence = value
    return template.format(
        v=value, V=value[:1].upper() + value[1:], N=name, S=sentence[:1].upper() + sentence[1:]
    )


def _path_in(resources: Mapping[str, Resource], target: Target) -> str | None:
    res = resources.get(target.file)
    if res is None:
        return None
    paths = res.paths()
    if target.path in paths:
        return target.path
    return target.fallback if target.fallback in paths else None


def _existing(resources: Mapping[str, Resource], file: str, path: str, key: str) -> bool:
    res = resources.get(file)
    items = res.items_at(path) if res is not None else None
    mk = match_key(key)
    return bool(items) and any(match_key(i.item) == mk for i in items or [])


def negated_things(sentences: list[str]) -> list[str]:
    """The things a statement says are over or wrong ("no more sushi", "not coffee")."""
    out: list[str] = []
    for s in sentences:
        for m in _NEGATED_THING.finditer(s):
            out.append(m.group(1).strip())
    return out


def _removals(
    things: list[str], resources: Mapping[str, Resource], kinds: set[str], keep: set[str]
) -> list[AnyOp]:
    """`keep`: match keys appended by the same statement (an append moves an item
    across likes/dislikes itself; removing it too would name a missing item)."""
    """Remove existing items (of the kinds this statement is about) that it says are over."""
    ops: list[AnyOp] = []
    seen: set[tuple[str, str, str]] = set()
    for kind in kinds:
        target = TARGETS.get(kind)
        if target is None or target.single:
            continue
        res = resources.get(target.file)
        items = res.items_at(target.path) if res is not None else None
        for item in items or []:
            words = [match_key(t) for t in tokens(item.item) if t not in _STOP]
            for thing in things:
                said = _words(thing)
                if words and all(w in said for w in words) and match_key(item.item) not in keep:
                    key = (target.file, target.path, item.item)
                    if key not in seen:
                        seen.add(key)
                        ops.append(_remove(target.file, target.path, item.item))
    return ops


def plan(
    facts: list[Extracted],
    sentences: list[str],
    resources: Mapping[str, Resource],
    today: date,
) -> Planned:
    """The operations that bring the profile in line with `facts` (see module doc)."""
    statement = " ".join(sentences)
    ops: list[AnyOp] = []
    kept: list[Extracted] = []
    dropped: list[tuple[str, str]] = []
    touched: set[str] = set()
    appended: set[tuple[str, str]] = set()
    for fact in facts:
        value = " ".join(fact.value.split()).strip(" .,!;:\"'")
        if not value or "<" in value or not grounded(value, statement):
            dropped.append((fact.value, "not said in the statement"))
            continue
        clause = clause_of(value, sentences)
        kind = _fix_kind(fact, clause)
        if about_someone_else(clause, kind):
            dropped.append((value, "about someone else"))
            continue
        weekly = kind == "routine_weekly"
        kind = "routine" if weekly else kind
        target = TARGETS[kind]
        path = "routine.weekly" if weekly else _path_in(resources, target)
        if path is None:
            dropped.append((value, f"no {target.path} in {target.file}"))
            continue
        touched.add(kind)
        name = ""
        if kind in ("pet", "family"):
            pair = _pet_or_family(fact, kind, clause)
            if pair is None:
                dropped.append((value, "no name said"))
                continue
            value, name = pair
        over = bool(_OVER_CUE.search(clause)) and kind not in ("whereabouts", "home", "work")
        if kind == "whereabouts" and _BACK.search(clause):
            if _existing(resources, target.file, path, "whereabouts"):
                ops.append(_remove(target.file, path, "whereabouts"))
            kept.append(fact)
            continue
        if over and kind in ("food_like", "drink_like", "like") and _DISLIKE_CUE.search(clause):
            kind, over = OPPOSITE[kind], False  # "I don't like X any more": a dislike now
            target = TARGETS[kind]
            path = _path_in(resources, target) or target.path
            touched.add(kind)
        if over and kind == "diet" and re.search(r"\b(don'?t|never) (eat|drink)\b", clause, re.I):
            over = not re.search(r"any ?more|no longer|stopped", clause, re.I)
        key = (
            f"{target.single}_{slug(value)}"
            if kind in ("pet", "family")
            else (target.single or slug(value))
        )
        if not key:
            dropped.append((value, "no words"))
            continue
        if over:
            ops.extend(_removals([value], resources, {kind, *_pair(kind)}, set()))
            kept.append(fact)
            continue
        display = _display(target.template, value, name, clause)
        named_diet = re.search(r"\b(vegan|vegetarian|pescatarian|halal|kosher|keto)\b", value, re.I)
        if kind == "diet" and not named_diet and re.search(r"\b(don'?t|never|no) ", clause, re.I):
            display = f"No {value}"
        expiry = time_bound(clause, today)
        if expiry is not None:
            display = f"{display} (until {expiry.strftime('%a')} {expiry.isoformat()})"
        if (path, match_key(key)) in appended:
            continue
        appended.add((path, match_key(key)))
        spec = expiry.isoformat() if expiry is not None else None
        if _existing(resources, target.file, path, key) and (target.single or expiry):
            ops.append(
                UpdateOp(
                    operation="update",
                    file=target.file,
                    path=path,
                    value={"item": key, "display": display},
                    expiry=spec,
                )
            )
        else:  # an item already there becomes the handler's no_change
            ops.append(
                AppendOp(
                    operation="append",
                    file=target.file,
                    path=path,
                    value={"item": key, "display": display},
                    expiry=spec,
                )
            )
        kept.append(fact)
    keep = {match_key(o.value.item) for o in ops if isinstance(o, AppendOp | UpdateOp)}
    # "no more X", "quit X", "not X": X goes from any list of likes (or habits,
    # medicines, allergies the statement is about) even when the model read nothing
    kinds = _with_pairs(touched) | ALWAYS_CHECKED
    ops.extend(_removals(negated_things(sentences), resources, kinds, keep))
    return Planned(_dedupe(ops), kept, dropped)


def _remove(file: str, path: str, key: str) -> RemoveOp:
    return RemoveOp(operation="remove", file=file, path=path, value={"item": key})


def _pair(kind: str) -> set[str]:
    return {OPPOSITE[kind]} if kind in OPPOSITE else set()


def _with_pairs(kinds: set[str]) -> set[str]:
    out = set(kinds)
    for k in kinds:
        out |= _pair(k)
    return out


def _dedupe(ops: list[AnyOp]) -> list[AnyOp]:
    seen: set[tuple[str, str, str, str]] = set()
    out: list[AnyOp] = []
    for op in ops:
        if isinstance(op, AppendOp | UpdateOp | RemoveOp):
            sig = (op.operation, op.file, op.path, match_key(op.value.item))
            if sig in seen:
                continue
            seen.add(sig)
        out.append(op)
    return out
