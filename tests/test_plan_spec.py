"""Tool specs: the decorator, resources, prefix overlap and templates."""

from __future__ import annotations

import pytest

from memagent.plan import LatencyClass, ResourceSpec, ToolSpec, resources_overlap, tool_spec


def test_decorator_returns_the_same_function_with_its_spec() -> None:
    def f(path: str) -> str:
        return path

    g = tool_spec(reads=["vault:{path}"], idempotent=True, concurrency_cap=2, timeout=1.5)(f)
    assert g is f and g("x") == "x"
    spec = ToolSpec.of(f)
    assert spec.name == "f"
    assert spec.reads == (ResourceSpec.parse("vault:{path}"),)
    assert spec.idempotent and spec.concurrency_cap == 2 and spec.timeout == 1.5
    assert spec.isolation == "thread" and not spec.is_async


def test_bare_decorator_and_async_detection() -> None:
    @tool_spec
    async def a() -> None:
        return None

    assert ToolSpec.of(a).is_async
    assert ToolSpec.of(a).latency_class is LatencyClass.FAST


def test_plain_callable_gets_a_safe_default_spec() -> None:
    spec = ToolSpec.of(len)
    assert spec.reads == () and spec.writes == ()
    assert not spec.idempotent


@pytest.mark.parametrize(
    "kwargs",
    [
        {"concurrency_cap": 0},
        {"concurrency_cap": True},
        {"timeout": 0},
        {"timeout": -1},
        {"reads": "vault:user.md"},
        {"reads": [""]},
        {"writes": ["x\ny"]},
        {"writes": ["a" * 2000]},
        {"reads": ["{path}"]},
        {"reads": ["vault:{path.__class__}"]},
        {"reads": ["vault:{path!r}"]},
        {"isolation": "fork"},
        {"isolation": "inline", "timeout": 1},
        {"latency_class": "glacial"},
    ],
)
def test_bad_specs_are_refused(kwargs: dict[str, object]) -> None:
    def f(path: str = "") -> None:
        return None

    with pytest.raises((ValueError, TypeError)):
        tool_spec(**kwargs)(f)  # type: ignore[arg-type]
    assert not hasattr(f, "__tool_spec__")


def test_async_tools_cannot_choose_isolation() -> None:
    async def a() -> None:
        return None

    with pytest.raises(ValueError, match="async"):
        tool_spec(isolation="process")(a)


def test_process_isolation_needs_a_module_level_function() -> None:
    def local() -> None:
        return None

    with pytest.raises(ValueError, match="module-level"):
        tool_spec(isolation="process")(local)


@pytest.mark.parametrize(
    ("a", "b", "overlap"),
    [
        ("vault:user.md", "vault:user.md", True),
        ("vault:user.md", "vault:user.md.bak", False),
        ("vault:entities/", "vault:entities/jane.md", True),
        ("vault:entities/jane.md", "vault:entities/", True),
        ("vault:entities/", "vault:entities2/x.md", False),
        ("vault:", "vault:entities/jane.md", True),
        ("vault:", "profile:food", False),
        ("chunks", "chunks/x", False),
    ],
)
def test_prefix_resources_overlap_everything_under_them(a: str, b: str, overlap: bool) -> None:
    assert resources_overlap(a, b) is overlap


def test_templates_render_per_step_and_widen_when_unknown() -> None:
    spec = ResourceSpec.parse("vault:{path}")
    assert spec.render({"path": "entities/jane.md"}) == "vault:entities/jane.md"
    assert spec.render({"path": {"$artifact": "p"}}) == "vault:"
    assert spec.render({}) == "vault:"
    assert spec.render({"path": "a\x00b"}) == "vault:"
    for sneaky in ["entities/../user.md", "./user.md", "/user.md", "a//b", "a\\b", "", "/", "a//"]:
        assert spec.render({"path": sneaky}) == "vault:", sneaky
    assert spec.render({"path": "entities/"}) == "vault:entities/"
    nested = ResourceSpec.parse("vault:entities/{name}.md")
    assert nested.render({"name": 3}) == "vault:entities/3.md"
    assert nested.render({"name": None}) == "vault:entities/"
