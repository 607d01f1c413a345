"""The generated reference pages (scripts/mkdocs_hooks.py) cover what the code has: every
CLI command, every HTTP route, every config key, every MCP tool; and a page naming a
generator that does not exist fails the build instead of rendering a bare marker."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest
import typer

ROOT = Path(__file__).resolve().parents[1]


def _hooks() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "mkdocs_hooks", ROOT / "scripts" / "mkdocs_hooks.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HOOKS = _hooks()


def _commands(group: object, prefix: str) -> list[str]:
    names: list[str] = []
    ctx = group.context_class(group)  # type: ignore[attr-defined]
    for name in group.list_commands(ctx):  # type: ignore[attr-defined]
        sub = group.get_command(ctx, name)  # type: ignore[attr-defined]
        if sub is None or sub.hidden:
            continue
        names.append(f"{prefix} {name}")
        if hasattr(sub, "list_commands"):
            names.extend(_commands(sub, f"{prefix} {name}"))
    return names


def test_the_cli_reference_has_every_command_with_its_help() -> None:
    from memagent.cli.app import app

    page = HOOKS.cli_page()
    commands = _commands(typer.main.get_command(app), "memagent")
    assert len(commands) > 20
    for name in commands:
        assert f" {name}\n" in page, f"{name} is missing from the CLI reference"
    assert "Usage: memagent recall [OPTIONS]" in page


def test_the_http_reference_has_every_route_and_schema() -> None:
    spec = json.loads((ROOT / "docs" / "openapi.json").read_text(encoding="utf-8"))
    page = HOOKS.http_page()
    for path, methods in spec["paths"].items():
        for method in methods:
            assert f"## `{method.upper()} {path}`" in page
    for name in spec["components"]["schemas"]:
        assert f"{{ #schema-{name.lower()} }}" in page


def test_the_config_reference_has_every_key() -> None:
    from memagent.core.config import Config
    from memagent.server.app import ServerSettings

    page = HOOKS.config_page()
    for section, field in Config.model_fields.items():
        assert f"### `[{section}]`" in page
        model = field.annotation
        assert model is not None
        for key in model.model_fields:  # type: ignore[union-attr]
            assert f"| `{key}` |" in page
    for key in ServerSettings.model_fields:
        assert f"| `{key}` |" in page
    assert "Context window of the embedded model." in page  # an attribute docstring


def test_the_mcp_listing_has_every_tool() -> None:
    import asyncio

    from memagent.server.mcp_tools import build_mcp_server

    tools = asyncio.run(build_mcp_server(lambda _ctx: None).list_tools())
    page = HOOKS.mcp_page()
    assert tools
    for tool in tools:
        assert f"| `{tool.name}` |" in page


def test_the_front_page_links_into_the_site() -> None:
    page = HOOKS.readme_page()
    assert "](docs/" not in page and "](benchmarks.md)" in page


def test_markers_are_filled_and_an_unknown_one_fails() -> None:
    page = SimpleNamespace(file=SimpleNamespace(src_uri="x.md"))
    filled = HOOKS.on_page_markdown("# T\n\n<!-- generated: config -->\n", page, None, None)
    assert "<!-- generated" not in filled and "### `[llm]`" in filled
    with pytest.raises(ValueError, match="no generator named 'nope'"):
        HOOKS.on_page_markdown("<!-- generated: nope -->\n", page, None, None)
