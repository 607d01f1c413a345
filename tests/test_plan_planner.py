"""Planner: validation, inferred edges, levels, critical path, hostile input."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memagent.plan import PlanError, Planner, PlanStep, tool_spec


@tool_spec(reads=["vault:{path}"], latency_class="fast")
def read(path: str) -> str:
    return path


@tool_spec(writes=["vault:{path}"], latency_class="medium")
def write(path: str, content: Any = None) -> int:
    return 0


@tool_spec(reads=["vault:entities/"])
def list_entities() -> list[str]:
    return []


def use(x: Any = None, y: Any = None) -> Any:
    return x


def plan_of(steps: list[PlanStep], **kw: Any) -> Any:
    return Planner().create_plan(steps, **kw)


def edges(plan: Any) -> set[tuple[str, str]]:
    return {(a, b) for a, b, _ in plan.edges()}


# The seed's four examples.


def test_data_flow_chain() -> None:
    plan = plan_of(
        [
            PlanStep("c", use, {"x": {"$artifact": "b"}}, produces="c"),
            PlanStep("a", use, {"x": 1}, produces="a"),
            PlanStep("b", use, {"x": [{"$artifact": "a"}]}, produces="b"),
        ]
    )
    assert edges(plan) == {("a", "b"), ("b", "c")}
    assert [list(level) for level in plan.levels] == [["a"], ["b"], ["c"]]
    assert plan.max_parallelism == 1
    assert plan.critical_path == ("a", "b", "c")


def test_resource_conflict_keeps_list_order() -> None:
    plan = plan_of(
        [
            PlanStep("r1", read, {"path": "user.md"}),
            PlanStep("w1", write, {"path": "user.md"}),
            PlanStep("r2", read, {"path": "user.md"}),
            PlanStep("r3", read, {"path": "user.md"}),
            PlanStep("w2", write, {"path": "user.md"}),
        ]
    )
    assert ("r1", "w1") in edges(plan)
    assert ("w1", "r2") in edges(plan) and ("w1", "r3") in edges(plan)
    assert ("r2", "w2") in edges(plan) and ("r3", "w2") in edges(plan)
    assert ("r2", "r3") not in edges(plan)
    assert [sorted(level) for level in plan.levels] == [["r1"], ["w1"], ["r2", "r3"], ["w2"]]
    assert dict(plan.edge_kinds)[(0, 1)] == "resource:vault:user.md"


def test_fully_parallel() -> None:
    plan = plan_of([PlanStep(f"w{i}", write, {"path": f"n{i}.md"}) for i in range(6)])
    assert edges(plan) == set()
    assert plan.max_parallelism == 6 and len(plan.levels) == 1


def test_diamond() -> None:
    plan = plan_of(
        [
            PlanStep("top", use, {"x": 1}, produces="t"),
            PlanStep("left", use, {"x": {"$artifact": "t"}}, produces="l", estimate=2.0),
            PlanStep("right", use, {"x": {"$artifact": "t"}}, produces="r", estimate=5.0),
            PlanStep("bottom", use, {"x": {"$artifact": "l"}, "y": {"$artifact": "r"}}),
        ]
    )
    expected = {("top", "left"), ("top", "right"), ("left", "bottom"), ("right", "bottom")}
    assert edges(plan) == expected
    assert [sorted(level) for level in plan.levels] == [["top"], ["left", "right"], ["bottom"]]
    assert plan.max_parallelism == 2
    assert plan.critical_path == ("top", "right", "bottom")
    assert plan.critical_path_seconds == pytest.approx(0.01 + 5.0 + 0.01)


def test_prefix_resource_conflicts_with_everything_under_it() -> None:
    plan = plan_of(
        [
            PlanStep("w_jane", write, {"path": "entities/jane.md"}),
            PlanStep("w_user", write, {"path": "user.md"}),
            PlanStep("ls", list_entities),
            PlanStep("w_bob", write, {"path": "entities/bob.md"}),
        ]
    )
    assert edges(plan) == {("w_jane", "ls"), ("ls", "w_bob")}


def test_step_level_resources_add_to_the_spec() -> None:
    plan = plan_of(
        [
            PlanStep("a", use, writes=["profile:food"]),
            PlanStep("b", use, reads=["profile:"]),
        ]
    )
    assert edges(plan) == {("a", "b")}


def test_unknown_resource_argument_widens_conservatively() -> None:
    plan = plan_of(
        [
            PlanStep("p", use, {"x": "x.md"}, produces="p"),
            PlanStep("w", write, {"path": {"$artifact": "p"}}),
            PlanStep("r", read, {"path": "other.md"}),
        ]
    )
    assert ("w", "r") in edges(plan)
    assert plan.writes[1] == ("vault:",)


def test_explicit_depends_on_and_tool_names_from_a_registry() -> None:
    planner = Planner({"use": use})
    plan = planner.create_plan(
        [PlanStep("a", "use", {"x": 1}), PlanStep("b", "use", depends_on=["a"])]
    )
    assert plan.dependencies_of("b") == ["a"]
    assert plan.summary()["levels"] == [["a"], ["b"]]


def test_initial_artifacts_satisfy_consumers() -> None:
    plan = plan_of([PlanStep("a", use, {"x": {"$artifact": "seed"}})], initial_artifacts=["seed"])
    assert plan.initial_artifacts == {"seed"}


# Errors.


def test_cycle_is_named() -> None:
    with pytest.raises(PlanError, match=r"a → b → c → a|b → c → a → b|c → a → b → c"):
        plan_of(
            [
                PlanStep("a", use, {"x": {"$artifact": "c"}}, produces="a"),
                PlanStep("b", use, {"x": {"$artifact": "a"}}, produces="b"),
                PlanStep("c", use, {"x": {"$artifact": "b"}}, produces="c"),
            ]
        )


def test_self_dependency_is_a_cycle() -> None:
    with pytest.raises(PlanError, match="a → a"):
        plan_of([PlanStep("a", use, depends_on="a")])


def test_cycle_through_data_and_resources() -> None:
    with pytest.raises(PlanError, match=r"cycle.*resource:vault:f\.md"):
        plan_of(
            [
                PlanStep("r", read, {"path": "f.md"}, consumes=["x"]),
                PlanStep("w", write, {"path": "f.md"}, produces="x"),
            ]
        )


def test_missing_artifact() -> None:
    with pytest.raises(PlanError, match="'nope', which no step produces"):
        plan_of([PlanStep("a", use, {"x": {"$artifact": "nope"}})])


def test_two_producers() -> None:
    with pytest.raises(PlanError, match="two producers: steps 'a' and 'b'"):
        plan_of([PlanStep("a", use, produces="x"), PlanStep("b", use, produces="x")])


def test_producing_an_initial_artifact_is_refused() -> None:
    with pytest.raises(PlanError, match="initial artifact"):
        plan_of([PlanStep("a", use, produces="x")], initial_artifacts=["x"])


def test_duplicate_ids_and_unknown_dependency() -> None:
    with pytest.raises(PlanError, match="duplicate step id 'a'"):
        plan_of([PlanStep("a", use), PlanStep("a", use)])
    with pytest.raises(PlanError, match="unknown step 'zz'"):
        plan_of([PlanStep("a", use, depends_on="zz")])


def test_unknown_tool_name() -> None:
    with pytest.raises(PlanError, match="unknown tool 'rm_rf'"):
        plan_of([PlanStep("a", "rm_rf")])


def test_arguments_must_fit_the_tool() -> None:
    with pytest.raises(PlanError, match="do not fit tool read"):
        plan_of([PlanStep("a", read, {"path": "x", "evil": 1})])
    with pytest.raises(PlanError, match="do not fit tool read"):
        plan_of([PlanStep("a", read, {})])


@pytest.mark.parametrize(
    "make",
    [
        lambda: PlanStep("", use),
        lambda: PlanStep("x" * 500, use),
        lambda: PlanStep("a\nb", use),
        lambda: PlanStep(3, use),  # type: ignore[arg-type]
        lambda: PlanStep("a", 42),  # type: ignore[arg-type]
        lambda: PlanStep("a", use, args=[1, 2]),  # type: ignore[arg-type]
        lambda: PlanStep("a", use, args={1: 2}),  # type: ignore[dict-item]
        lambda: PlanStep("a", use, produces=["x", "x"]),
        lambda: PlanStep("a", use, produces={"x": 1}),  # type: ignore[arg-type]
        lambda: PlanStep("a", use, depends_on=[None]),  # type: ignore[list-item]
        lambda: PlanStep("a", use, writes="vault:x"),  # type: ignore[arg-type]
        lambda: PlanStep("a", use, writes=["a\x00"]),
        lambda: PlanStep("a", use, estimate=-1),
        lambda: PlanStep("a", use, estimate=float("nan")),
    ],
)
def test_malformed_steps_are_refused(make: Any) -> None:
    with pytest.raises(PlanError):
        make()


@pytest.mark.parametrize(
    "args",
    [
        {"x": {"$artifact": 5}},
        {"x": {"$artifact": ""}},
        {"x": {"$artifact": "a", "also": 1}},
    ],
)
def test_malformed_artifact_references(args: dict[str, Any]) -> None:
    with pytest.raises(PlanError, match="artifact"):
        plan_of([PlanStep("a", use, args)])


def test_hostile_nesting_and_size_are_refused() -> None:
    deep: Any = 1
    for _ in range(200):
        deep = [deep]
    with pytest.raises(PlanError, match="nested deeper"):
        plan_of([PlanStep("a", use, {"x": deep})])
    with pytest.raises(PlanError, match="at most 10 steps"):
        Planner(max_steps=10).create_plan(PlanStep(f"s{i}", use) for i in range(11))
    with pytest.raises(PlanError, match="list of PlanStep"):
        Planner().create_plan("abc")  # type: ignore[arg-type]
    with pytest.raises(PlanError, match="PlanStep"):
        Planner().create_plan([{"step_id": "a"}])  # type: ignore[list-item]


def test_empty_plan() -> None:
    plan = plan_of([])
    assert len(plan) == 0 and plan.max_parallelism == 0 and plan.critical_path == ()


# Property: conflicting steps always keep list order (directly or transitively).

RESOURCES = ["vault:a.md", "vault:b.md", "vault:d/", "vault:d/x.md", "vault:"]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(st.sampled_from(RESOURCES), max_size=2),
            st.lists(st.sampled_from(RESOURCES), max_size=2),
        ),
        max_size=12,
    )
)
def test_every_conflicting_pair_is_ordered(accesses: list[tuple[list[str], list[str]]]) -> None:
    from memagent.plan import resources_overlap

    steps = [
        PlanStep(f"s{i}", use, reads=sorted(set(r)), writes=sorted(set(w)))
        for i, (r, w) in enumerate(accesses)
    ]
    plan = plan_of(steps)
    n = len(steps)
    reach = [set(plan.dependencies[i]) for i in range(n)]
    for i in range(n):  # dependencies only point backwards here, so one pass suffices
        for d in list(reach[i]):
            reach[i] |= reach[d]
    for j in range(n):
        for i in range(j):
            ri, wi = set(accesses[i][0]), set(accesses[i][1])
            rj, wj = set(accesses[j][0]), set(accesses[j][1])
            conflict = any(resources_overlap(a, b) for a in wi for b in rj | wj) or any(
                resources_overlap(a, b) for a in wj for b in ri
            )
            if conflict:
                assert i in reach[j], (steps[i], steps[j])


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["$artifact", "k", "x"]), inner, max_size=2)
    ),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.text(max_size=4),
            st.dictionaries(st.sampled_from(["x", "y", "z"]), json_values, max_size=3),
            st.lists(st.text(max_size=3), max_size=2),
            st.lists(st.text(max_size=3), max_size=2),
        ),
        max_size=6,
    )
)
def test_junk_steps_give_a_plan_or_a_plan_error(
    raw: list[tuple[str, dict[str, Any], list[str], list[str]]],
) -> None:
    """Whatever an LLM emits, the planner answers with a plan or a clear PlanError."""
    try:
        steps = [
            PlanStep(sid, use, args, produces=prod, depends_on=dep) for sid, args, prod, dep in raw
        ]
        plan = Planner().create_plan(steps)
    except PlanError as exc:
        assert str(exc)
    else:
        assert len(plan) == len(raw)
