"""The profile as a person reads it: one short line per fact.

`item_line` is what `memagent profile show` prints for an item; `fact_lines`
is what the agent puts in its context before answering a question about the
user ("What can't I eat?", "Where am I this week?"): each live fact with the
day it was learned and, for a temporary one, the day it ends.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date

from memagent.memory.profile.models import Resource

TITLES = {
    "user_food_prefs": "Food and drink",
    "user_health": "Health",
    "user_routine": "Routine, plans and whereabouts",
    "user_general_prefs": "About you",
}
LABELS = {
    "food.likes": "Likes",
    "food.dislikes": "Dislikes",
    "drink.likes": "Likes",
    "drink.dislikes": "Dislikes",
    "diet.restrictions": "Diet",
    "health.allergies": "Allergic to",
    "health.conditions": "Condition",
    "health.medications": "Takes",
    "fitness.activities": "Exercise",
    "routine.daily": "Daily",
    "routine.weekly": "Weekly",
    "schedule.upcoming": "Coming up",
    "whereabouts.current": "Now",
    "preferences.likes": "Likes",
    "preferences.dislikes": "Dislikes",
    "communication.style": "When answering",
}
_SELF_DESCRIBED = ("likes ", "dislikes ", "allergic ", "takes ", "lives ", "works ", "in ", "no ")
MAX_FACT_LINES = 15


def item_line(path: str, display: str, expiry: str | None) -> str:
    """One short line for an item: its display, with what list it is on where
    the display does not say it ("Allergic to: Peanuts"), and until when."""
    label = LABELS.get(path) or path.rsplit(".", 1)[-1].replace("_", " ").capitalize()
    lowered = display.lower()
    said = lowered.startswith(_SELF_DESCRIBED) or ":" in display or " named " in lowered
    line = display if said or path == "personal.facts" else f"{label}: {display}"
    if expiry and expiry not in display:
        line += f" (until {expiry})"
    return line


def fact_lines(
    resources: Mapping[str, Resource], today: date, limit: int = MAX_FACT_LINES
) -> list[str]:
    """Live facts, newest first, each with the day it was learned."""
    dated: list[tuple[str, str]] = []
    for res in resources.values():
        for path, items in res.iter_lists():
            for item in items:
                if item.expired(today):
                    continue
                until = item.expiry.isoformat() if item.expiry else None
                when = (item.updated or item.added or "")[:10]
                noted = f" (noted {when})" if when else ""
                dated.append((when, item_line(path, item.display, until) + noted))
    dated.sort(key=lambda x: x[0], reverse=True)
    return [line for _, line in dated[:limit]]
