"""The profile in an answer: the facts a question is about, with their dates, and
what to do when the profile and what the user said in conversation disagree.

A question about the user ("What can't I eat?", "Where am I this week?") gets
their live profile facts, the ones on the question's topic first, each with the
day it was noted and, for a temporary one, the day it ends (`for_question`).

Recall also brings back what the user said in earlier conversations, and that
can disagree with the profile: a statement the learner has not learned yet (or
read wrong), or an old one the profile has since moved past. Whether a line the
user said disagrees is decided mechanically, by the same screen, rules and
planner that learn the profile (no model call): the line disagrees with an item
when learning it now would update or remove that item. Then "latest" is decided
by dates, never by the model:

- the profile's item changed after the line was said: the profile holds, and
  its line says what it replaced;
- the line was said after the item changed: the line holds, and the profile's
  line says it is out of date;
- neither is clearly later (the same day for a line that carries only a day, or
  a date missing): the answer says memory disagrees and gives both, with their
  dates, instead of choosing (`ProfileAnswer.unsure`) — when the question is
  about that topic.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from typing import Literal

from memagent.memory.profile.facts import plan
from memagent.memory.profile.item_keys import match_key, tokens
from memagent.memory.profile.models import Item, Resource
from memagent.memory.profile.operations import RemoveOp, UpdateOp
from memagent.memory.profile.rules import rule_facts
from memagent.memory.profile.statements import screen
from memagent.memory.profile.summary import MAX_FACT_LINES, item_line

MAX_SAID_CHARS = 600
"""A longer recalled line is not one statement; it is not compared."""


@dataclass(frozen=True)
class Topic:
    """What a question asks about: the lists (and, in `personal.facts`, the key
    prefixes) that hold the answer, in words for a reply."""

    words: str
    paths: tuple[str, ...]
    keys: tuple[str, ...] = ()

    def holds(self, path: str, key: str) -> bool:
        if path not in self.paths:
            return False
        return path != "personal.facts" or not self.keys or key.startswith(self.keys)


_FOOD = ("health.allergies", "diet.restrictions", "food.dislikes", "food.likes")
TOPICS: tuple[tuple[re.Pattern[str], Topic], ...] = (
    (
        re.compile(
            r"\b(eat|eating|food|foods|meals?|dinner|lunch|breakfast|cook|recipes?|snacks?|"
            r"restaurants?|diet|allerg\w*|intoleran\w*)\b",
            re.I,
        ),
        Topic("what you eat", (*_FOOD, "health.conditions")),
    ),
    (
        re.compile(r"\b(drinks?|drinking|coffee|tea|alcohol|wine|beer)\b", re.I),
        Topic("what you drink", ("drink.likes", "drink.dislikes", "diet.restrictions")),
    ),
    (
        re.compile(
            r"\bwhere\b.*\b(am i|i'm|i am|will i be|staying|travell?ing)\b|\b(this|next) "
            r"(week|weekend)\b|\btonight\b|\btrip\b|\btravel\w*\b",
            re.I,
        ),
        Topic("where you are", ("whereabouts.current", "schedule.upcoming")),
    ),
    (
        re.compile(r"\bwhere\b.*\blive\b|\bmy home\b|\bmoved?\b|\bmy city\b", re.I),
        Topic("where you live", ("personal.facts",), ("home",)),
    ),
    (
        re.compile(r"\b(job|work|working|profession|career|for a living|employer)\b", re.I),
        Topic("your work", ("personal.facts",), ("work",)),
    ),
    (
        re.compile(r"\bmy name\b|\bcall me\b|\bwho am i\b", re.I),
        Topic("your name", ("personal.facts",), ("name",)),
    ),
    (
        re.compile(r"\b(pets?|dogs?|cats?|puppy|kitten|parrot|rabbit|hamster|horse)\b", re.I),
        Topic("your pets", ("personal.facts",), ("pet",)),
    ),
    (
        re.compile(
            r"\b(family|wife|husband|partner|son|daughter|kids?|children|mom|mum|mother|"
            r"dad|father|sister|brother|parents?)\b",
            re.I,
        ),
        Topic("your family", ("personal.facts",), ("family",)),
    ),
    (
        re.compile(r"\b(medications?|medicines?|pills?|health|conditions?|doctor)\b", re.I),
        Topic("your health", ("health.conditions", "health.medications", "health.allergies")),
    ),
    (
        re.compile(r"\b(exercise|sports?|workouts?|gym|fitness|training)\b", re.I),
        Topic("your exercise", ("fitness.activities", "routine.weekly", "routine.daily")),
    ),
    (
        re.compile(
            r"\b(routine|schedule|morning|evening|wake|bed|weekends?|plans?|appointments?|"
            r"calendar|coming up)\b",
            re.I,
        ),
        Topic("your routine", ("routine.daily", "routine.weekly", "schedule.upcoming")),
    ),
    (
        re.compile(r"\b(answer|reply|replies|respond|talk to me|emojis?)\b", re.I),
        Topic("how to answer you", ("communication.style",)),
    ),
)


def topics_of(question: str) -> list[Topic]:
    """The topics `question` asks about (none: a question about the user in general)."""
    return [topic for pattern, topic in TOPICS if pattern.search(question)]


@dataclass(frozen=True)
class Said:
    """A line the user said, as recall returns it: the words and when (None: unknown)."""

    text: str
    at: datetime | None = None
    day_only: bool = False
    """Only the day is known (an imported line stamped with a date, which is stored as
    midnight exactly): it is compared by day."""

    @classmethod
    def of(cls, text: str, stamp: str | None) -> Said:
        """From a recalled line's `created_at` (ISO 8601, a date or a date-time)."""
        raw = (stamp or "").strip()
        try:
            when = datetime.fromisoformat(raw) if raw else None
        except ValueError:
            return cls(text)
        if when is None:
            return cls(text)
        return cls(text, _aware(when), day_only=_day_only(raw, when))


@dataclass(frozen=True)
class Disagreement:
    """A profile item and a line the user said that would change it."""

    path: str
    item: str
    display: str
    noted: datetime | None
    said: Said
    latest: Literal["profile", "said"] | None
    """Which is clearly later; None: neither (module doc)."""

    def note(self) -> str:
        """What the profile's line adds about it, for the model to read."""
        quoted = _quote(self.said.text)
        when = _day(self.said.at)
        if self.latest == "profile":
            return f"replaces what you said on {when}: {quoted}"
        if self.latest == "said":
            return f"out of date: later, on {when}, you said {quoted}"
        return f"unclear which is latest: on {when} you also said {quoted}"


@dataclass(frozen=True)
class ProfileAnswer:
    """What the profile gives an answer (module doc)."""

    lines: list[str]
    """Live facts, the question's topics first, dated, with what disagrees."""
    disagreements: list[Disagreement] = field(default_factory=list)
    unsure: str | None = None
    """The reply when the question is about a disagreement with no clear latest."""


def _quote(text: str) -> str:
    flat = " ".join(text.split())
    return f'"{flat[:160]}{"…" if len(flat) > 160 else ""}"'


def _day(when: datetime | None) -> str:
    return f"{when.day} {when:%B %Y}" if when is not None else "an unknown day"


def _aware(when: datetime) -> datetime:
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _day_only(raw: str, when: datetime) -> bool:
    return len(raw) <= 10 or when.time() == time(0, 0)


def _stamp(item: Item) -> tuple[datetime | None, bool]:
    """When the item last changed, and whether only its day is known."""
    raw = item.updated or item.added
    try:
        when = datetime.fromisoformat(raw)
    except (TypeError, ValueError):
        return None, False
    return _aware(when), _day_only(raw, when)


def _latest(
    noted: datetime | None, noted_day_only: bool, said: Said
) -> Literal["profile", "said"] | None:
    if noted is None or said.at is None:
        return None
    a: date | datetime = noted
    b: date | datetime = said.at
    if said.day_only or noted_day_only:
        a, b = noted.date(), said.at.date()
    if a == b:
        return None
    return "profile" if a > b else "said"


def disagreements(
    resources: Mapping[str, Resource], said: Sequence[Said], today: date
) -> list[Disagreement]:
    """The profile items that a line in `said` would update or remove if it were
    learned now (the learning screen, rules and planner; no model), each with
    which is latest."""
    found: dict[tuple[str, str], Disagreement] = {}
    for line in said:
        if len(line.text) > MAX_SAID_CHARS:
            continue
        kept = screen(line.text).kept
        facts = rule_facts(kept)
        if not facts:
            continue
        day = line.at.date() if line.at is not None else today
        for op in plan(facts, kept, resources, day).operations:
            if not isinstance(op, UpdateOp | RemoveOp) or op.file is None or op.path is None:
                continue
            res = resources.get(op.file)
            items = (res.items_at(op.path) if res is not None else None) or []
            current = next(
                (i for i in items if match_key(i.item) == match_key(op.value.item)), None
            )
            if current is None or current.expired(today):
                continue
            if isinstance(op, UpdateOp) and _same(op.value.display, current.display):
                continue
            noted, day_only = _stamp(current)
            latest = _latest(noted, day_only, line)
            found.setdefault(
                (op.path, current.item),
                Disagreement(op.path, current.item, current.display, noted, line, latest),
            )
    return list(found.values())


def _same(display: str | None, current: str) -> bool:
    """The two displays say the same thing: one's words are all in the other's
    (a time bound aside), as when the model read more words than the rules."""
    if display is None:
        return True
    bound = re.compile(r"\s*\(until [^)]*\)")
    a, b = (
        {match_key(t) for t in tokens(bound.sub("", x))} - {"work", "works", "as"}
        for x in (display, current)
    )
    return bool(a) and bool(b) and (a <= b or b <= a)


def for_question(
    resources: Mapping[str, Resource],
    today: date,
    question: str,
    said: Sequence[Said] = (),
    *,
    limit: int = MAX_FACT_LINES,
) -> ProfileAnswer:
    """The profile for an answer to `question` (module doc); `said`: the lines
    the user said that recall returned for it."""
    topics = topics_of(question)
    found = disagreements(resources, said, today)
    by_item = {(d.path, d.item): d for d in found}
    rows: list[tuple[bool, str, str]] = []
    for res in resources.values():
        for path, items in res.iter_lists():
            for item in items:
                if item.expired(today):
                    continue
                until = item.expiry.isoformat() if item.expiry else None
                when = (item.updated or item.added or "")[:10]
                extra = [f"noted {when}"] if when else []
                if (d := by_item.get((path, item.item))) is not None:
                    extra.append(d.note())
                line = item_line(path, item.display, until)
                line += f" ({'; '.join(extra)})" if extra else ""
                on_topic = any(t.holds(path, item.item) for t in topics)
                rows.append((on_topic, when, line))
    rows.sort(key=lambda r: (r[0], r[1]), reverse=True)
    unsure = None
    for d in found:
        if d.latest is None and any(t.holds(d.path, d.item) for t in topics):
            topic = next(t for t in topics if t.holds(d.path, d.item))
            unsure = (
                f"I'm not sure: my memory disagrees about {topic.words}, and I can't tell "
                f"which is the latest. Your profile says {_quote(d.display)} (noted "
                f"{_day(d.noted)}), and on {_day(d.said.at)} you said {_quote(d.said.text)}."
            )
            break
    return ProfileAnswer([line for _, _, line in rows[:limit]], found, unsure)
