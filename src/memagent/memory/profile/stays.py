"""Where the user is: a stay's new end, its end when they are home again, and a plan
that is only the stay read again.

A stay ("In Lisbon until Friday") is one line, `whereabouts.current`. It moves when
the user stays on ("we're staying on till Wednesday"), ends sooner when they go
back ("flying home tomorrow"), and ends when they are back ("back home from Cape
Town", "discharged this morning, finally home", "back in Dublin now" where Dublin
is home); said of someone else ("my sister flew back home") or ahead ("can't wait
to be home", "then back home") it does not.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import date

from memagent.memory.profile.changes import (
    GENERAL,
    HOME,
    PEOPLE,
    ROUTINE,
    STAY,
    items,
    remove,
    written_at,
)
from memagent.memory.profile.fact_schema import Extracted
from memagent.memory.profile.item_keys import match_key, tokens
from memagent.memory.profile.lowplaces import lower_place_after
from memagent.memory.profile.models import Resource
from memagent.memory.profile.operations import AnyOp, AppendOp, RemoveOp, UpdateOp
from memagent.memory.profile.subjects import about_someone_else
from memagent.memory.profile.timebound import time_bound

_STAY_ON = re.compile(
    r"\b(?:stay\w*|here|extend\w*|sticking around|remain\w*|still in)\b", re.IGNORECASE
)
_BACK_IN = re.compile(r"\bback (?:in|to|at|home in)\s+((?:[A-Z][\w'-]*\s?){1,3})")
_HOME_NOW = re.compile(
    r"\b(?:back home|got home|got back home|finally home|home again|home sweet home|"
    r"(?:come|came|gone|went|headed|flown|flew|driven|drove) (?:back )?home (?:early|already|"
    r"a day early|sooner)|(?:we'?ve|I'?ve|we have|I have) (?:come|got|gotten|made it) "
    r"(?:back )?home|"
    r"(?:back )?home in my own bed|been discharged|discharged|left (?:the )?hospital|"
    r"trip (?:got |was )?cut short)\b",
    re.IGNORECASE,
)
_NOT_YET = re.compile(
    r"\b(?:when|once|until|till|before|after|if|can'?t wait|want|wish|hope|then|might|may|"
    r"could|should|will|going to|plan(?:ning)? to)\b[^.,]{0,25}"
    r"\b(?:back|home|discharged)\b|\b(?:tomorrow|tonight|next|on (?:mon|tue|wed|thu|fri|sat|sun))",
    re.IGNORECASE,
)
"""'When I'm back home', 'can't wait to be home', 'home tomorrow': not home yet."""
GOING_BACK = re.compile(
    r"\b(?:flying|heading|going|coming|driving|getting|travell?ing|taking the train) "
    r"(?:back|home)\b",
    re.IGNORECASE,
)
"""'flying home tomorrow morning' with a stay held: the stay's new end."""


_SOMEONE = re.compile(r"\b(?:my|our|his|her|their)\s+\w+|\b(?:he|she|they)\b|\b[A-Z][a-z]+\b")
_SELF = re.compile(r"\b(?:I|I'm|im|I've|we|we're|we've)\b", re.IGNORECASE)


def _said_of_self(before: str) -> bool:
    """The words before "back home" make the writer its subject ("we're back home", "ok,
    finally"), not someone else ("My sister flew")."""
    return bool(_SELF.search(before)) or (
        len(before.split()) <= 4 and not _SOMEONE.search(before.replace("I", ""))
    )


_HOME_AGAIN = re.compile(
    r"\b(?:I|I'm|I am|I've|I have|we|we're|we've)\s+(?:[\w']+\s+){0,2}?"
    r"(?:back home|back from|home again|got back|flew back|came back|drove back|"
    r"returned home|returned from|back in town|(?:come|came|got|flown|flew|driven|drove|made it) "
    r"home)\b",
    re.IGNORECASE,
)
"""The user is home again: whatever stay was current is over, even when no fact is
read (the model has nothing to copy in "I flew back home yesterday")."""


def home_again(
    sentences: Sequence[str], resources: Mapping[str, Resource], ops: Sequence[AnyOp]
) -> list[AnyOp]:
    """The removal of the current stay when a sentence says the user is back
    (`_HOME_AGAIN`: "I flew back home yesterday") and no other operation of the
    statement writes or removes the stay. A twin of `back_home`, which ends a stay read
    as a fact; the two read different sentences and are kept apart until a bench pass
    says merging them costs nothing."""
    if not any(i.item == "whereabouts" for i in items(resources, ROUTINE, STAY)):
        return []
    if any(isinstance(o, AppendOp | UpdateOp | RemoveOp) and o.path == STAY for o in ops):
        return []
    for s in sentences:
        if (
            _HOME_AGAIN.search(s)
            and not _NOT_YET.search(s)
            and not about_someone_else(s, "whereabouts")
        ):
            return [remove(ROUTINE, STAY, "whereabouts")]
    return []


def back_home(sentences: Sequence[str], resources: Mapping[str, Resource]) -> bool:
    """A sentence says the user is back in the place they live ("back in Dublin now",
    "back home from Cape Town", "discharged this morning, finally home")."""
    for s in sentences:
        m = _HOME_NOW.search(s)
        if m is not None and not _NOT_YET.search(s) and _said_of_self(s[: m.start()]):
            return True
    home = next((i for i in items(resources, GENERAL, PEOPLE) if i.item == HOME), None)
    if home is None:
        return False
    where = {match_key(t) for t in tokens(home.display or "")}
    for s in sentences:
        for m in _BACK_IN.finditer(s):
            said = {match_key(t) for t in tokens(m.group(1))}
            if said and said <= where:
                return True
    return False


def stay_changes(
    sentences: Sequence[str],
    resources: Mapping[str, Resource],
    ops: Sequence[AnyOp],
    today: date,
) -> list[AnyOp]:
    """A new end for the current stay when a sentence says the user stays on to a
    day and names no new place ("change of plans, we're staying on till
    Wednesday"); its end when they are back home."""
    stay = next((i for i in items(resources, ROUTINE, STAY) if i.item == "whereabouts"), None)
    if stay is None or written_at(ops, STAY):
        return []
    if back_home(sentences, resources):
        return [remove(ROUTINE, STAY, stay.item)]
    for s in sentences:
        end = time_bound(s, today)
        if end is None or re.search(r"\b(?:in|at|to) [A-Z]", s):
            continue
        sooner = stay.expiry is None or end <= stay.expiry
        if not (_STAY_ON.search(s) or (GOING_BACK.search(s) and sooner)):
            continue  # going home is the stay's end only when it comes sooner
        display = re.sub(r"\s*\(until [^)]*\)$", "", stay.display or "In the same place")
        value = {"item": stay.item, "display": f"{display} (until {end:%a} {end.isoformat()})"}
        return [
            UpdateOp(
                operation="update", file=ROUTINE, path=STAY, value=value, expiry=end.isoformat()
            )
        ]
    return []


_ANY = date(2000, 1, 3)
_EVENT_AHEAD = re.compile(
    r"\b(?:appointment|meeting|wedding|flight|interview|concert|party|exam|conference|"
    r"surgery|birthday|graduation|funeral|dentist|doctor|check-?up)\b",
    re.IGNORECASE,
)


def the_stay(value: str, clause: str, stays: set[str]) -> bool:
    """A plan or habit read in a clause that says a stay ("in Tokyo for work till the
    20th": "work till the 20th"; "we're staying on till Wednesday") is that stay read
    again, unless it names an event of its own."""
    if _EVENT_AHEAD.search(value) and len(value) < 0.7 * len(clause):
        return clause in stays and _purpose(value, clause)  # else the event is a plan of its own
    stay_words = r"\W*(?:staying|stay|here|still here|away)\b"
    said_of_stay = bool(re.match(stay_words, clause, re.I)) and time_bound(clause, _ANY) is not None
    return clause in stays or said_of_stay or bool(re.match(stay_words, value, re.I))


def _purpose(value: str, clause: str) -> bool:
    """`value` is what a stay is for, with no day of its own ("in Berlin for a conference
    till thursday"): the stay's reason, not a second fact."""
    v = re.escape(value.removeprefix("a ").removeprefix("an ").removeprefix("the "))
    return bool(
        re.search(rf"\bfor\s+(?:an?|the|my|our|this|that|some)?\s*(?:\w+\s+)?{v}\b", clause, re.I)
    ) and not re.search(rf"\b{v}\s+(?:on|at|tomorrow|tonight|next)\b", clause, re.I)


def left(place: str, clause: str) -> bool:
    """`clause` says the user left `place` ("left Madrid this morning, now in Valencia":
    Madrid's stay is over, Valencia's is not)."""
    return re.search(rf"\bleft\s+(?:the\s+)?{re.escape(place)}\b", clause, re.I) is not None


def named_place(value: str, clause: str) -> str:
    """The place a stay at someone's is in, where the clause names it ("staying at my
    cousin's in Kerry" read as "my cousin's": Kerry), else `value`."""
    if not re.match(r"(?:my|our|the)\s", value, re.IGNORECASE):
        return value
    m = re.search(
        rf"\b{re.escape(value)}\s+(?:in|near|outside|just outside)\s+"
        r"([A-Z][\w'-]+(?: [A-Z][\w'-]+){0,2})",
        clause,
    )
    if m is None:  # "my sister's in cork"
        return lower_place_after(value, clause) or value
    return m.group(1)


_STAY_SAID = re.compile(
    r"^\W*(?:(?:I'?m|im|we'?re|staying|stopping|still)\s+)?(?:at|in)\s+(?P<where>.+?)\s+"
    r"(?:for the (?:next|rest of the)\b|for (?:a|an|\d+|one|two|three|four|five|six|seven|"
    r"ten)\s+(?:days?|nights?|weeks?|months?)\b|"
    r"(?:till|until|til|through)\b(?!\s+(?:\d|noon|midnight|late|close|lunch|dinner|tonight))|"
    r"this (?:week|weekend)\b)",
    re.IGNORECASE,
)
_PLACE_IN = re.compile(r"(?:^|\b(?:in|at)\s+)([A-Z][\w'-]+(?: [A-Z][\w'-]+){0,2})(?=\W*$|\s+for\b)")


def as_stay(fact: Extracted) -> Extracted:
    """A habit or plan the model read that says a stay in a named place ("at my parents'
    in Cork for the next 5 days"): that stay, where the user is, not a plan."""
    if fact.kind not in ("routine", "plan"):
        return fact
    m = _STAY_SAID.match(fact.value)
    place = _PLACE_IN.search(m.group("where").strip()) if m else None
    if place is None:
        return fact
    return Extracted(kind="whereabouts", value=place.group(1), name=fact.name)
