"""Helpers of the MCP tests: call tools through the SDK's in-process client, and
check that refusals are one plain sentence and that nothing was written."""

from __future__ import annotations

import hashlib
from typing import Any

import anyio
from mcp import Client

from memagent.api import Memory
from memagent.server.mcp_tools import build_mcp_server


def calls(memory: Memory, batch: list[tuple[str, dict[str, Any]]], **backend: Any) -> list[Any]:
    async def run() -> list[Any]:
        async with Client(build_mcp_server(lambda _ctx: memory, **backend)) as client:
            return [await client.call_tool(name, args) for name, args in batch]

    return anyio.run(run)


def snapshot(memory: Memory) -> dict[str, str]:
    """Every file of the vault, chunks and profile, by content hash."""
    root = memory.home.root
    out: dict[str, str] = {}
    for part in ("vault", "chunks", "profile"):
        for path in sorted((root / part).rglob("*")):
            if path.is_file():
                out[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def assert_plain_refusals(results: list[Any], batch: list[tuple[str, dict[str, Any]]]) -> None:
    """Each call failed with one line naming its tool, and no pydantic dump."""
    for result, (name, args) in zip(results, batch, strict=True):
        assert result.is_error, (name, args, result.content)
        text = result.content[0].text
        assert "\n" not in text and len(text) <= 300, text
        assert text.startswith(f"{name}:") or text.startswith("there is no tool"), text
        for leak in ("pydantic", "validation error", "Error executing", "Traceback"):
            assert leak not in text, text
