"""From what the model read in a statement to profile operations, mechanically.

The model only says what kind of fact a sentence holds and copies its value
(`fact_schema.Extracted`). Everything with a rule is decided in Python:

- **Grounding.** A value whose words are not in the statement is dropped (a
  copied few-shot example, an invented fact), and so is a fact about someone
  else (`subjects.about_someone_else`). One thing said is one item: a value whose
  words hold (or are held by) those of a value read before is that thing read
  again ("camping in the Highlands" after the stay in the Highlands).
- **Kind fixes** (`kinds.fix_kind`): "allergic" must be said for an allergy,
  "hate" makes a like a dislike, a name after "my dog is called" is the dog's.
- **Negation and correction** (`negation`): a value said to be over ("no more
  X", "not X", "quit X", "not … any more") is removed (a like that is over and
  disliked moves to dislikes); single-valued facts (where the user lives, their
  job, their name, where they are now) have one key each, so "actually … now"
  updates that item in place; pets and relatives have one item per name
  (`relations`); one of vegan/vegetarian/pescatarian at a time.
- **Expiry.** A time bound in the sentence ("until Friday", "this week") sets
  the item's expiry, resolved from the statement's date (`timebound`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date

from memagent.memory.profile import changes, milestones, relations, reschedules, stays, swaps
from memagent.memory.profile.changes import HEALTH, ROUTINE, STAY, remove
from memagent.memory.profile.fact_schema import Extracted
from memagent.memory.profile.health import with_type
from memagent.memory.profile.item_keys import abbreviates, match_key, said_word, slug, tokens
from memagent.memory.profile.jobs import job
from memagent.memory.profile.kinds import (
    NAME_AFTER,
    OPPOSITE,
    fix_kind,
    liking_said,
    timed_apart,
)
from memagent.memory.profile.models import Resource
from memagent.memory.profile.negation import (
    SAID_NOT,
    cancelled_things,
    disliked,
    disliked_after,
    ended,
    gone_without,
    negated_things,
    parts,
    subclause,
    unhated,
)
from memagent.memory.profile.nothingnamed import names_nothing
from memagent.memory.profile.occasions import EVENT, HABIT, UNTIL, WEEKLY, undated, when_only
from memagent.memory.profile.operations import AnyOp, AppendOp, RemoveOp, UpdateOp
from memagent.memory.profile.stances import DISLIKED, LIKED, around, stance_unsaid
from memagent.memory.profile.subjects import (
    OTHER_PERSON,
    about_someone_else,
    led_by_a_name,
    said_of_them,
    their_subject,
)
from memagent.memory.profile.targets import (
    TARGETS,
    Target,
    display_line,
    existing,
    held_items,
    path_in,
)
from memagent.memory.profile.timebound import event_day, time_bound

ALWAYS_CHECKED = frozenset(
    {
        "food_like",
        "drink_like",
        "like",
        "exercise",
        "medication",
        "diet",
        "allergy",
        "condition",
        "routine",
        "plan",
    }
)
"""Lists a negated thing is looked for in whatever kind the model read."""

# fmt: off
_STOP = frozenset([
    "a", "an", "the", "my", "our", "some", "any", "of", "to", "for", "in", "on", "at", "with",
    "and", "or", "i", "me", "im", "i'm", "am", "is", "are", "be", "really", "very", "so",
    "much", "lot", "lots", "kind", "sort",
])
_DURABLE = frozenset([
    "work", "home", "pet", "family", "name", "condition", "allergy", "diet", "whereabouts",
])
# fmt: on
"""Kinds of fact a habit or plan read in the same sentence may be a remark on."""
_TIMED = ("routine", "routine_weekly", "plan", "whereabouts")
"""Kinds whose time is the writer's too when a named one's ("Ellie's got swimming every
Saturday, so we can't do Saturday mornings")."""
_WITH_AN_END = ("diet", "whereabouts", "condition", "medication")
"""Kinds of fact a sentence may give an end ("till Friday") that is no plan of its own."""
_WITHOUT = re.compile(r"\b(don'?t|never|no|off|gave up|given up|quit|cut out) ", re.IGNORECASE)
"""A diet said as what one goes without ("no carbs", "off sugar"): its line says "No …"."""
_PRACTICE = re.compile(r"ing\W*$", re.IGNORECASE)
"""A diet done, not a thing gone without ("fasting", "intermittent fasting"): no "No …"."""
_DIET_TYPES = ("vegan", "vegetarian", "pescatarian", "flexitarian", "omnivore", "carnivore")
"""Diets a person follows one of at a time: a new one replaces the other."""
_RULED_OUT = re.compile(
    r"\b(?:is|are|'s)\s+(?:out|a no|a no-go|off limits|off the menu|off the table)\b|"
    r"\bcan'?t have\b",
    re.IGNORECASE,
)
"""What a health fact rules out, said beside it: no taste of its own."""
_HEALTH_REASON = re.compile(r"\b(?:pregnant|allergic|coeliac|celiac|intolerant|diabetic)\b", re.I)
"""A reason for ruling a food out, said though not read as a fact ("6 months pregnant")."""
_INTERJECTION = re.compile(
    r"^(?:sorry|oops|whoops|actually|ugh|argh|wait|omg|lol|ok|okay)\b[,!.]*\s+", re.IGNORECASE
)
_BACK = re.compile(r"(?<!then )\bback (?:early |already )?(home|from)\b|\bhome again\b", re.I)
"""Back home ends a stay; "…until Friday, then back home" is a stay with its end."""


def _words(text: str) -> set[str]:
    return {match_key(t) for t in tokens(text)}


_SAID_SHORT = {
    match_key(k): match_key(v) for k, v in (("veggie", "vegetarian"), ("meds", "medication"))
}


def grounded(value: str, statement: str) -> bool:
    """Every content word of `value` occurs in `statement` (plurals and word
    endings folded)."""
    said = _words(statement)
    said |= {_SAID_SHORT[w] for w in said if w in _SAID_SHORT}  # "been veggie": vegetarian
    content = [match_key(t) for t in tokens(value) if t not in _STOP]
    return bool(content) and all(said_word(k, said) for k in content)


def _content(text: str) -> list[str]:
    return [match_key(t) for t in tokens(text) if t not in _STOP and not t.isdigit()]


def same_thing(said: str, item: str) -> bool:
    """`said` (words of a statement) names the thing an item key `item` stands for:
    every word of the item is said (word endings folded: "swim" names
    `swimming`), or what is said is the item's more general name, ending in the same
    word ("wine" names `red_wine`, "cheese" names `blue_cheese`)."""
    words, named = _content(item), _content(said)
    if not words or not named:
        return False
    heard = set(named)
    if all(said_word(w, heard) for w in words):
        return True
    return named[-1] == words[-1] and set(named) <= set(words)


def clause_of(value: str, sentences: list[str]) -> str:
    """The sentence that mentions `value` (the first), with a time said after it as a
    fragment of its own, else all of them."""
    keys = [match_key(t) for t in tokens(value) if t not in _STOP]
    for n, s in enumerate(sentences):
        words = _words(s)
        if keys and all(k in words for k in keys):
            for after in sentences[n + 1 :]:  # "Yoga. Every sunday.": the time, said apart
                if len(after.split()) > 4 or not (HABIT.search(after) or WEEKLY.search(after)):
                    break
                s = f"{s} {after}"
            return s
    return " ".join(sentences)


@dataclass(frozen=True)
class Planned:
    """The operations for one statement, and the facts they came from."""

    operations: list[AnyOp]
    facts: list[Extracted]
    dropped: list[tuple[str, str]]


def _pets_or_family(fact: Extracted, clause: str) -> list[tuple[str, str]]:
    """(relation or animal, name) for each pet or relative named in the clause;
    what the model left out or did not copy from the clause is read from it."""
    name, value = fact.name.strip(), fact.value.strip()
    name = name if name and grounded(name, clause) else ""
    value = value if value and grounded(value, clause) else ""
    value, name = relations.in_order(fact.kind, value, name)  # "pet: Bess / collie"
    m = NAME_AFTER.search(clause)
    if value and not name and value[:1].isupper() and m and value in m.group(0):
        name, value = value, ""
    if not name and m is not None:
        name = m.group(1) or m.group(3) or ""
    if not value or value.lower() == name.lower():
        if m is not None and m.group(2):
            value = m.group(2)
        else:
            who = OTHER_PERSON.search(clause)
            value = who.group(3) if who is not None and who.group(3) else ""
    if fact.kind == "family" and not relations.is_relation(value):
        value = relations.partnered(clause) or value  # "married to a guy called Dev"
    value = relations.singular(value)
    names = [n for n in relations.split_names(name) if n.lower() != value]
    animal = fact.kind != "pet" or relations.an_animal(value, clause)  # no "secretary" pet
    return [(value, n) for n in names] if value and animal else []


def _removals(
    things: list[str],
    resources: Mapping[str, Resource],
    kinds: set[str],
    keep: set[str],
    *,
    cancel: bool = False,
) -> list[AnyOp]:
    """Remove existing items (of the kinds this statement is about) that it says are
    over. `keep`: match keys appended by the same statement (an append moves an item
    across likes/dislikes itself; removing it too would name a missing item). `cancel`:
    the things are cancelled, and a plan any of whose words they say is over ("lunch is
    off" ends "Dad's 80th is on saturday, we're doing a big lunch at the pub")."""
    ops: list[AnyOp] = []
    seen: set[tuple[str, str, str]] = set()
    for kind in kinds:
        target = TARGETS.get(kind)
        if target is None or target.single:
            continue
        paths = (target.path, "routine.weekly") if kind == "routine" else (target.path,)
        for path, item in ((p, i) for p in paths for i in held_items(resources, target.file, p)):
            for thing in things:
                named = (
                    same_thing(thing, item.item)
                    or (kind in ("plan", "routine") and same_thing(thing, undated(item.item)))
                    or (
                        kind == "plan"
                        and cancel
                        and set(_content(thing)) <= set(_content(f"{item.item} {item.display}"))
                    )
                    or (
                        kind == "medication"
                        and (
                            abbreviates(thing, item.item)
                            or same_thing(thing, swaps.undosed(item.item))
                        )
                    )
                )
                if named and match_key(item.item) not in keep:
                    key = (target.file, path, item.item)
                    if key not in seen:
                        seen.add(key)
                        ops.append(remove(target.file, path, item.item))
    return ops


def _beside(fact: Extracted, facts: list[Extracted], sentences: list[str]) -> bool:
    """Another fact, not a habit or plan, was read from the same sentence."""
    clause = clause_of(fact.value, sentences)
    return any(
        f is not fact
        and f.kind not in ("routine", "plan")
        and clause_of(f.value, sentences) == clause
        for f in facts
    )


def _relation_ops(
    kind: str,
    pairs: list[tuple[str, str]],
    resources: Mapping[str, Resource],
    path: str,
    clause: str,
) -> list[AnyOp]:
    """Operations for pets or relatives (`relations`): one item per name; a
    correction replaces the relation's other names."""
    target = TARGETS[kind]
    items = held_items(resources, target.file, path)
    pairs_of = [(i.item, i.display) for i in items]
    ops: list[AnyOp] = []
    for relation, name in pairs:
        display = display_line(target.template, relation, name, clause)
        key = relations.key(kind, relation, name)
        mk = match_key(key)
        if relations.already_named(pairs_of, kind, relation, name) is not None:
            continue
        others = [
            i.item
            for i in items
            if relations.same_relation(i.item, kind, relation) and match_key(i.item) != mk
        ]
        value = {"item": key, "display": display}
        if any(match_key(i.item) == mk for i in items):  # one of a kind: a new name
            ops.append(UpdateOp(operation="update", file=target.file, path=path, value=value))
            continue
        if relations.replaces(clause) or key == relations.prefix(kind, relation):
            ops.extend(remove(target.file, path, o) for o in others)
        if relations.replaces(clause):  # "Arjun is my cousin actually, not my brother"
            ops.extend(
                remove(target.file, path, i.item)
                for i in items
                if (held := changes.who(i)) is not None
                and held[0] == kind
                and held[2].lower() == name.lower()
                and held[1] != relation.lower()
            )
        ops.append(AppendOp(operation="append", file=target.file, path=path, value=value))
    return ops


def plan(
    facts: list[Extracted],
    sentences: list[str],
    resources: Mapping[str, Resource],
    today: date,
) -> Planned:
    """The operations that bring the profile in line with `facts` (see module doc)."""
    statement = " ".join(sentences)
    lists = {(t.file, t.path): k for k, t in TARGETS.items() if not t.single}
    facts = [  # "raspberries, not strawberries": the new one in the old one's list
        *(
            Extracted(kind=lists[(f, p)], value=v)
            for f, p, v in swaps.substitutes(sentences, resources, list(lists))
        ),
        *(stays.as_stay(f) for f in facts),
    ]
    ops: list[AnyOp] = []
    kept: list[Extracted] = []
    dropped: list[tuple[str, str]] = []
    touched: set[str] = set()
    appended: set[tuple[str, str]] = set()
    homes = {  # a home read as one, not a stay for as long as something lasts
        match_key(f.value)
        for f in facts
        if f.kind == "home" and fix_kind(f.kind, f.value, clause_of(f.value, sentences)) == "home"
    }
    names_held = changes.held_names(resources)  # pets' and relatives' names
    tastes_held = [
        i.item
        for kind in (*LIKED, *DISLIKED)
        for i in held_items(resources, TARGETS[kind].file, TARGETS[kind].path)
    ]
    names_read = {match_key(f.name) for f in facts if f.name and f.kind != "name"}
    read: list[set[str]] = []  # one item per thing said: the first kind read for a value
    stay_clauses = {  # "moving to Sheffield next month" is a plan, and no stay to read again
        clause_of(f.value, sentences)
        for f in facts
        if f.kind == "whereabouts"
        and fix_kind(f.kind, f.value, clause_of(f.value, sentences)) == "whereabouts"
    }
    told = {clause_of(f.value, sentences) for f in facts if f.kind in _DURABLE}
    lasting = {clause_of(f.value, sentences) for f in facts if f.kind in _WITH_AN_END}
    health = {
        subclause(f.value, clause_of(f.value, sentences))
        for f in facts
        if f.kind in ("medication", "condition", "allergy")
    }
    mine = [p for s in sentences for p in parts(s) if not their_subject(p)]  # not "she's not"
    negated = [*negated_things(mine), *swaps.taken_back(sentences, resources, list(lists))]
    back_home = stays.back_home(sentences, resources)
    for fact in facts:
        value = SAID_NOT.sub("", " ".join(fact.value.split()).strip(" .,!;:\"'"))
        value = _INTERJECTION.sub("", value)  # "sorry PISTACHIOS not cashews"
        if not value or "<" in value or not grounded(value, statement):
            dropped.append((fact.value, "not said in the statement"))
            continue
        if names_nothing(value, fact.kind):
            dropped.append((value, "no thing named"))  # "allergic to everything"
            continue
        clause = clause_of(value, sentences)
        swapped = (
            fact.kind in TARGETS
            and swaps.in_place_of(value, statement)
            and _removals(negated, resources, {fact.kind}, set())
        )  # "raspberries, not strawberries": the kind of the stored one it replaces
        fixed = fact.kind if swapped else fix_kind(fact.kind, value, clause)
        if fixed is None:
            dropped.append((value, f"not a {fact.kind} by itself"))
            continue
        if (
            not swapped
            and stance_unsaid(fixed, value, clause, around(clause, sentences))
            and not any(same_thing(value, key) for key in tastes_held)
        ):  # a held taste named again is the planning's to end or move
            dropped.append((value, "met, no liking or dislike said"))
            continue
        if fixed.startswith("routine") and when_only(value) and _beside(fact, facts, sentences):
            dropped.append((value, "the when of another fact, not a habit of its own"))
            continue  # "ICU nurse here, three 12-hour days a week": the job's hours
        sub = subclause(value, clause)
        theirs = about_someone_else(clause, fixed) and about_someone_else(sub, fixed)
        if theirs and fixed in ("routine", "routine_weekly", "plan") and _leads(value, sub):
            theirs = False  # "Choir practice has moved to Wednesday nights": the habit itself
        if fixed not in ("pet", "family") and (
            led_by_a_name(sub, names_held | (set() if fixed in _TIMED else names_read))
            or said_of_them(value, clause)
            or (fixed not in _TIMED and relations.told_of_a_relative(fact.name, clause))
        ):
            theirs = True  # "lena went vegan last month": Lena's
        if (theirs and not swapped) or (
            sub != clause and fixed not in ("pet", "family") and their_subject(sub)
        ):  # "no pork please, and my husband can't handle spice": the pork is the user's
            dropped.append((value, "about someone else"))
            continue
        if fixed == "work" and changes.ends_a_job(sub):
            dropped.append((value, "the job the statement ends"))
            continue
        if fixed in ("plan", "routine") and stays.the_stay(value, clause, stay_clauses):
            dropped.append((value, "the stay read again as a plan"))
            continue
        words = set(_content(value))
        if fixed not in ("pet", "family") and any(words <= r or r <= words for r in read):
            dropped.append((value, "read already, as another kind"))
            continue
        if fixed not in ("pet", "family"):
            read.append(words)
        if fixed == "plan" and (
            (UNTIL.search(clause) and clause in lasting and not EVENT.search(value))
            or (
                stays.GOING_BACK.search(clause)
                and existing(resources, ROUTINE, STAY, "whereabouts")
            )
        ):  # "dry january, no alcohol till the end of the month"; "flying home tomorrow"
            dropped.append((value, "the end of another fact, not a plan"))
            continue
        timed = fixed.removesuffix("_weekly")
        aside = clause in told and not timed_apart(timed, value, clause)
        if timed in ("routine", "plan") and aside:
            dropped.append((value, "a remark on another fact, not a habit or plan of its own"))
            continue
        if (  # "I take metformin with meals": the meals are no taste
            fixed in LIKED and subclause(value, clause) in health and not liking_said(value, clause)
        ) or (  # "allergic to sesame so hummus is a no": what the allergy rules out
            fixed in ("food_dislike", "drink_dislike")
            and (health or _HEALTH_REASON.search(" ".join(sentences)))
            and _RULED_OUT.search(clause)
            and not disliked(value, clause)
        ):
            dropped.append((value, "a remark on another fact, not a taste"))
            continue
        if fixed == "whereabouts":
            value = stays.named_place(value, clause)  # "at my cousin's in Kerry": Kerry
        if fixed == "whereabouts" and match_key(value) in homes:
            dropped.append((value, "where the user lives, not a stay"))
            continue
        if fixed in OPPOSITE and match_key(value) in names_held:
            dropped.append((value, "a pet's or person's name, not a taste"))  # "mochi just…"
            continue
        if fixed == "condition":
            value = with_type(value, clause)  # "im type 1 diabetic"
        if fixed == "medication":  # "dose went up, I'm on 20mg of lisinopril now"
            value = swaps.named_dose(value, clause)
            if not swaps.names_a_medicine(value):
                dropped.append((value, "no medicine named"))  # "daily" read apart
                continue
            value = swaps.with_dose(value, clause)
            ops.extend(
                remove(HEALTH, "health.medications", i) for i in swaps.other_doses(value, resources)
            )
        weekly = fixed == "routine_weekly"
        kind = "routine" if weekly else fixed
        target = TARGETS[kind]
        path = "routine.weekly" if weekly else path_in(resources, target)
        if path is None:
            dropped.append((value, f"no {target.path} in {target.file}"))
            continue
        touched.add(kind)
        if kind in ("pet", "family"):
            pairs = _pets_or_family(fact, clause) or _pets_or_family(fact, statement)
            pairs = [p for p in pairs if not changes.relation_over(p[1], p[0], clause)]
            if kind == "pet" and (relations.their_pet(clause) or relations.anothers_pet(statement)):
                pairs = []  # "my friend Jonas just got a puppy named Biscotti": theirs
            if kind == "family":  # "a rabbit called Clover …, they're best mates": pets
                pets = {(f.name or "").lower() for f in facts if f.kind == "pet"}
                pairs = [p for p in pairs if p[1].lower() not in pets]
            pairs = [p for p in pairs if not relations.minds_pets(p[0])]  # "dog walker"
            if not pairs:
                dropped.append((value, "no name said"))
                continue
            ops.extend(_relation_ops(kind, pairs, resources, path, clause))
            kept.append(fact)
            continue
        over = ended(value, kind, clause) and not swaps.in_place_of(value, statement)
        if target.single and kind != "name" and over:  # "I'm no longer in Oslo"
            ops.extend(changes.single_over(value, target.file, path, target.single, resources))
            kept.append(fact)
            continue
        if kind == "whereabouts" and (
            _BACK.search(clause) or back_home or stays.left(value, clause)
        ):
            if existing(resources, target.file, path, "whereabouts"):
                ops.append(remove(target.file, path, "whereabouts"))
            kept.append(fact)
            continue
        later = over and (  # "gone off X, can't stand them"; "gone off X?? … can't stand them"
            disliked_after(value, clause) or disliked_after(value, statement)
        )
        if (
            over
            and kind in ("food_like", "drink_like", "like")
            and (later or disliked(value, clause))
        ):
            kind, over = OPPOSITE[kind], False  # "I don't like X any more": a dislike now
            target = TARGETS[kind]
            path = path_in(resources, target) or target.path
            touched.add(kind)
        elif later and kind in ("food_dislike", "drink_dislike", "dislike"):
            over = False  # the dislike itself, not the end of one
        elif over and kind == "diet" and gone_without(value, clause):
            over = False  # "I'm off sugar for ten days": the diet itself, not its end
        template = target.template
        if kind == "work":
            value, template = job(value, clause, TARGETS["work"].template)
        if kind in OPPOSITE and not over:
            value = _as_named(value, resources, TARGETS[OPPOSITE[kind]])
        key = target.single or (f"language_{slug(value)}" if kind == "language" else slug(value))
        if not key:
            dropped.append((value, "no words"))
            continue
        if over:
            ops.extend(_removals([value], resources, {kind, *_pair(kind)}, set()))
            kept.append(fact)
            continue
        display = display_line(template, value, "", clause)
        named_diet = re.search(r"\b(vegan|vegetarian|pescatarian|halal|kosher|keto)\b", value, re.I)
        if (
            kind == "diet"
            and not (named_diet or _PRACTICE.search(value))
            and _WITHOUT.search(clause)
        ):
            display = f"No {re.sub(r'^no ', '', value, flags=re.IGNORECASE)}"
        if kind == "diet" and value.lower() in _DIET_TYPES:
            ops.extend(
                remove(target.file, path, i.item)
                for i in held_items(resources, target.file, path)
                if i.item.removesuffix("ism") in _DIET_TYPES and i.item != value.lower()
            )
        bound_in = clause if kind in ("whereabouts", "plan") else subclause(value, clause)
        expiry = time_bound(bound_in, today)  # "…until tomorrow, airport sushi is not it"
        if expiry is None and kind == "whereabouts":  # "Landed in Lima! Here until the 18th"
            expiry = time_bound(statement, today)
        if expiry is None and kind == "whereabouts" and _unnamed(value, statement):
            dropped.append((value, "no named place and no end: a moment, not a stay"))
            continue  # "I'm at the supermarket"
        if expiry is not None:
            display = f"{display} (until {expiry.strftime('%a')} {expiry.isoformat()})"
        elif kind == "plan":  # "my sister's wedding is on 14 June 2025": its day says it
            expiry = event_day(clause, today)
            if expiry is not None and expiry < today:
                dropped.append((value, "a plan whose day has passed"))
                continue
        if {(path, match_key(key)), (path, display)} & appended:
            continue  # one line a thing: "Tennis is on Sundays now" read as tennis and as Sunday
        appended |= {(path, match_key(key)), (path, display)}
        spec = expiry.isoformat() if expiry is not None else None
        item = {"item": key, "display": display}
        if existing(resources, target.file, path, key) and (target.single or expiry):
            ops.append(
                UpdateOp(operation="update", file=target.file, path=path, value=item, expiry=spec)
            )
        else:  # an item already there becomes the handler's no_change
            ops.append(
                AppendOp(operation="append", file=target.file, path=path, value=item, expiry=spec)
            )
        kept.append(fact)
    ops.extend(stays.home_again(sentences, resources, ops))
    keep = {match_key(o.value.item) for o in ops if isinstance(o, AppendOp | UpdateOp)}
    # "no more X", "quit X", "not X": X goes from any list of likes (or habits,
    # medicines, allergies the statement is about) even when the model read nothing
    kinds = _with_pairs(touched) | ALWAYS_CHECKED
    if unhated(negated):  # "don't hate the treadmill any more"
        kinds |= {"food_dislike", "drink_dislike", "dislike"}
    cancelled = cancelled_things(mine)
    ops.extend(_removals([t for t in negated if t not in cancelled], resources, kinds, keep))
    ops.extend(_removals(cancelled, resources, {"plan", "routine"}, keep, cancel=True))
    ops.extend(changes.relation_endings(sentences, resources, ops))
    ops.extend(changes.renames(sentences, resources, ops))
    ops.extend(changes.own_name_respelled(sentences, resources, ops))
    ops.extend(changes.partner_steps(sentences, resources, ops))
    ops.extend(stays.stay_changes(sentences, resources, ops, today))
    ops.extend(reschedules.routine_moved(sentences, resources, ops))
    ops.extend(changes.move_done(ops, resources))
    ops.extend(changes.sober(sentences, resources))
    ops.extend(milestones.pregnancy_over(sentences, resources))
    ops.extend(milestones.rule_given_up(sentences, resources))
    ops.extend(milestones.eating_again(sentences, resources))
    ops.extend(milestones.off_coffee(sentences, resources))
    ops.extend(milestones.smoke_free(sentences, resources))
    if not any(isinstance(o, AppendOp | UpdateOp) and o.value.item == "work" for o in ops):
        ops.extend(changes.job_over(sentences, resources))
    ops.extend(changes.answer_swaps(ops, resources, ("communication.style", "preferences.likes")))
    ops.extend(changes.back_to_normal(sentences, resources, ops))
    return Planned(_dedupe(ops), kept, dropped)


def _leads(value: str, clause: str) -> bool:
    """`clause` opens with a word of `value` ("Choir practice has moved…" for "choir"),
    maybe after "my"/"our": the habit is the subject."""
    first = re.match(r"\W*(?:(?:my|our)\s+)?([\w'-]+)", clause, re.IGNORECASE)
    said = {match_key(t) for t in tokens(value)}
    return first is not None and match_key(first.group(1).split("'")[0]) in said


def _unnamed(place: str, statement: str) -> bool:
    """`place` names no place (no capital: "the supermarket", "the sun") in a statement
    written with capitals (one typed all in lower case says nothing by its case)."""
    cased = any(c.isupper() for c in statement)
    said = re.search(re.escape(place), statement, re.IGNORECASE)  # as the user wrote it
    place = said.group(0) if said else place
    return cased and not any(w[:1].isupper() for w in place.split())


def _as_named(value: str, resources: Mapping[str, Resource], other: Target) -> str:
    """`value` as the opposite list already names it (`same_thing`, or every word
    of it in the item's: "spicy" said of `spicy_food` in the likes is spicy food),
    so a like that turns into a dislike moves across rather than leaving both."""
    named = set(_content(value))
    for item in held_items(resources, other.file, other.path):
        if same_thing(value, item.item) or (named and named <= set(_content(item.item))):
            return " ".join(tokens(item.item))
    return value


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
