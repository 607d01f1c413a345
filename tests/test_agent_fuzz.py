"""A fuzzing scripted model: whatever it emits, the agent never crashes, never
half-applies a batch, never writes outside the vault, and ends with a reply."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memagent.agent import Agent, Traces
from memagent.core import MemoryHome
from memagent.llm import ScriptedLLM
from memagent.setup import init_home

PATHS = st.sampled_from(
    [
        "user.md",
        "../config.toml",
        "/etc/passwd",
        "entities/x.md",
        "",
        "a/../../b",
        "nope.md",
        "dir/",
    ]
)
ACTION_NAMES = st.sampled_from(
    [
        "read_file",
        "create_file",
        "update_file",
        "append_file",
        "delete_file",
        "list_files",
        "recall",
        "remember",
        "forget",
        "calculate",
        "load_tools",
        "rm_rf",
        None,
        7,
    ]
)
SCALARS = st.one_of(st.text(max_size=40), st.integers(), st.none(), st.booleans())
ACTION = st.fixed_dictionaries(
    {"action": ACTION_NAMES},
    optional={
        "path": PATHS,
        "content": st.text(max_size=60),
        "old_content": st.text(max_size=20),
        "new_content": st.text(max_size=20),
        "query": st.text(max_size=20),
        "memory_id": st.text(max_size=30),
        "names": st.lists(st.text(max_size=10), max_size=3),
        "assign_to": st.text(max_size=10),
        "extra": SCALARS,
    },
)
STEP = st.fixed_dictionaries(
    {},
    optional={
        "think": st.one_of(st.text(max_size=30), st.integers()),
        "actions": st.one_of(st.lists(ACTION, max_size=4), ACTION, SCALARS),
        "python": st.text(max_size=30),
        "reply": st.one_of(st.text(max_size=30), st.none(), st.integers()),
    },
)
RESPONSE = st.one_of(
    st.text(max_size=120),
    STEP.map(json.dumps),
    STEP.map(lambda d: json.dumps(d)[: max(1, len(json.dumps(d)) // 2)]),
    st.lists(ACTION, max_size=3).map(lambda a: f"<actions>{json.dumps(a)}</actions>"),
    st.binary(max_size=40).map(lambda b: b.decode("latin-1")),
)


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
        and "state" not in p.parts
        and "log" not in p.parts
        and "chunks" not in p.parts
        and p.name != "index.sqlite"
        and not p.name.startswith("index.sqlite")
        and p.name != ".lock"
    }


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    responses=st.lists(RESPONSE, min_size=1, max_size=4), mode=st.sampled_from(["json", "python"])
)
def test_garbage_never_crashes_and_never_half_applies(
    tmp_path_factory: Any, responses: list[str], mode: str
) -> None:
    home = MemoryHome.open(tmp_path_factory.mktemp("fuzz") / "home")
    init_home(home)
    outside = home.root.parent / "outside.txt"
    outside.write_text("keep")
    llm = ScriptedLLM(responses)
    with Agent(home, llm, mode=mode, max_steps=4, learn_profile=False, embeddings=False) as a:
        before = snapshot(home.root)
        vault_before = {k: v for k, v in before.items() if k.startswith("vault/")}
        result = a.turn("Please do what you must.")
        assert isinstance(result.reply, str) and result.reply
        assert result.steps <= 4
        after = {k: v for k, v in snapshot(home.root).items() if k.startswith("vault/")}
        a.flush()
        steps = Traces(home).last()["steps"]
    applied = [
        s
        for s in steps
        if "result" in s
        and (
            s["result"].get("ok") is True
            or ("output" in s["result"] and s["result"]["error"] is None)
        )
    ]
    if not applied:  # every batch failed: each was undone whole
        assert after == vault_before
    for rel in after:
        assert (home.root / rel).resolve().is_relative_to(home.layout.vault.resolve())
    assert outside.read_text() == "keep"
    assert not (home.root / "config.toml").read_text().startswith("x")
