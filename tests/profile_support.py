"""Helpers shared by the profile-learning tests (import as `from profile_support import …`):
a store on a fixed Wednesday, items seeded through the real planner, the profile's
lines, and a scripted model for the extraction and one yes/no question."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

from memagent.core import MemoryHome
from memagent.llm import Message, ScriptedLLM
from memagent.memory.profile import ProfileStore, apply_operations
from memagent.memory.profile.facts import Extracted, plan
from memagent.memory.profile.revise import REWRITE_SCHEMA

WED = date(2026, 3, 4)


def store_of(home: MemoryHome) -> ProfileStore:
    return ProfileStore(home, today=lambda: WED)


def seed(home: MemoryHome, text: str, *facts: tuple[str, str, str]) -> None:
    """Facts `(kind, value, name)` read from `text`, planned and applied as learning would."""
    store = store_of(home)
    extracted = [Extracted(kind=k, value=v, name=n) for k, v, n in facts]  # type: ignore[arg-type]
    result = apply_operations(store, plan(extracted, [text], store.load_all(), WED).operations)
    assert result.ok, result.error


def profile_lines(home: MemoryHome) -> list[str]:
    """Every stored item as `path: display`, sorted."""
    return sorted(
        f"{path}: {i.display}"
        for res in store_of(home).load_all().values()
        for path, items in res.iter_lists()
        for i in items
    )


def learner(
    facts: list[dict[str, str]] | None,
    *,
    question_schema: dict[str, Any],
    verdicts: list[str] | None,
    answer: str,
    now: str | None = None,
) -> ScriptedLLM:
    """The extraction answered with `facts`; a yes/no question asked for
    `question_schema` answered with `verdicts` (P(yes)), or, without them, as text
    (`answer`); the question what an ended line says now (`revise.rewritten`) with
    `now` (None: an empty reply, so the line is only removed)."""

    def fn(messages: list[Message], schema: dict[str, Any] | None) -> str:
        if schema == question_schema:
            return answer
        if schema == REWRITE_SCHEMA:
            return json.dumps({"now": now}) if now is not None else "{}"
        return json.dumps({"facts": facts or []})

    return ScriptedLLM(fn=fn, verdicts=verdicts)


def lines_on(store: ProfileStore, today: date) -> list[str]:
    """Every live item on `today` as `path: display @expiry`, sorted."""
    out = []
    for res in store.load_all().values():
        for path, items in res.iter_lists():
            for i in items:
                if not i.expired(today):
                    until = f" @{i.expiry.isoformat()}" if i.expiry else ""
                    out.append(f"{path}: {i.display}{until}")
    return sorted(out)


def said_on(
    home: MemoryHome, text: str, *facts: tuple[str, str, str], today: date = WED
) -> list[str]:
    """Facts `(kind, value, name)` read from `text` on `today`, planned and applied; the
    profile's lines after."""
    store = ProfileStore(home, today=lambda: today)
    extracted = [Extracted(kind=k, value=v, name=n) for k, v, n in facts]  # type: ignore[arg-type]
    planned = plan(extracted, [text], store.load_all(), today)
    result = apply_operations(store, planned.operations, op="learn")
    assert result.ok, result.error
    return lines_on(store, today)
