"""Hostile paths at every action; the file system around the vault must not change."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memagent.actions import SPECS, run_actions, validate_actions
from memagent.core import MemoryHome, read_ops
from memagent.memory.vault import Vault
from memagent.setup import init_home

SECRET = "CANARY-SECRET-7f3a"


def snapshot(root: Path, skip: set[Path]) -> dict[str, tuple[str, int, str]]:
    """Every entry under root (not following links), with type, mode and content hash."""
    out: dict[str, tuple[str, int, str]] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        d = Path(dirpath)
        dirnames[:] = [n for n in dirnames if d / n not in skip]
        for name in dirnames + filenames:
            p = d / name
            if p in skip:
                continue
            st_ = os.lstat(p)
            if os.path.islink(p):
                digest = "link:" + os.readlink(p)
            elif p.is_file():
                digest = hashlib.sha256(p.read_bytes()).hexdigest()
            else:
                digest = "dir"
            out[str(p.relative_to(root))] = (digest, st_.st_mode, str(st_.st_mtime_ns))
    return out


class World:
    def __init__(self, base: Path) -> None:
        self.base = base
        self.canary = base / "canary"
        self.canary.mkdir()
        (self.canary / "secret.md").write_text(SECRET)
        (base / "home2").mkdir()
        (base / "home2" / "secret.md").write_text(SECRET)
        self.home = MemoryHome.open(base / "home")
        init_home(self.home)
        (self.home.root / "config.toml").write_text(
            (self.home.root / "config.toml").read_text() + f"# {SECRET}\n"
        )
        v = self.home.layout.vault
        os.symlink(self.canary, v / "out_dir")
        os.symlink(self.canary / "secret.md", v / "out_file.md")
        os.symlink(base / "home2", v / "sibling")
        os.symlink("../config.toml", v / "cfg.md")
        self.vault = Vault(self.home)
        self.ops_len = sum(1 for _ in read_ops(self.home.layout.ops_log))
        self.skip = {self.home.layout.vault, self.home.layout.ops_log, self.home.layout.lock_file}
        self.before = snapshot(base, self.skip)

    def check(self, result: dict[str, Any]) -> None:
        assert SECRET not in json.dumps(result, ensure_ascii=False)
        assert snapshot(self.base, self.skip) == self.before
        for rec in list(read_ops(self.home.layout.ops_log))[self.ops_len :]:
            assert rec.path.startswith("vault/"), rec
        for link in ("out_dir", "out_file.md", "sibling", "cfg.md"):
            assert (self.home.layout.vault / link).is_symlink()


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    with tempfile.TemporaryDirectory() as tmp:
        yield World(Path(tmp))


SEGMENTS = st.sampled_from(
    [
        "..",
        ".",
        "",
        "canary",
        "secret.md",
        "out_dir",
        "out_file.md",
        "sibling",
        "cfg.md",
        "home",
        "home2",
        "vault",
        "config.toml",
        "log",
        "ops.jsonl",
        "entities",
        "user.md",
        "~",
        "\x00",
        "a\x00b",
        "日本語",
        "ünï",
        "\udcff",
        ".tmp-x",
        "x" * 300,
        "C:",
        "\\..\\",
        "new.md",
        "../canary",
        "/",
        "//",
        "%2e%2e",
    ]
)
PATHS = st.one_of(
    st.lists(SEGMENTS | st.text(max_size=12), max_size=8).map("/".join),
    st.lists(SEGMENTS, max_size=5).map(lambda p: "/" + "/".join(p)),
    st.sampled_from(["/etc/passwd", "/tmp", "../../../../etc/passwd", "a/" * 600]),
    st.text(max_size=40),
)


def action_for(name: str, path: str) -> dict[str, Any]:
    fields: dict[str, Any] = {"action": name}
    if name == "go_to_link":
        fields["link"] = f"[[{path}]]"
    elif name == "search_files":
        fields.update(query="CANARY", path=path)
    else:
        fields["path"] = path
    if name in ("create_file", "append_file"):
        fields["content"] = "pwned"
    if name == "update_file":
        fields.update(old_content="CANARY", new_content="pwned")
    return fields


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(path=PATHS)
def test_hostile_paths_touch_nothing_outside(world: World, path: str) -> None:
    actions = validate_actions([action_for(name, path) for name in SPECS])
    result = run_actions(world.vault, actions).to_json()
    assert len(result["results"]) == len(SPECS)
    world.check(result)


@pytest.mark.parametrize(
    "path",
    [
        "out_dir/secret.md",
        "out_file.md",
        "sibling/secret.md",
        "cfg.md",
        "out_dir/new.md",
        "out_dir",
        "sibling",
    ],
)
def test_planted_symlinks_fail_every_action(world: World, path: str) -> None:
    result = run_actions(
        world.vault, validate_actions([action_for(name, path) for name in SPECS])
    ).to_json()
    by_name = {r["action"]: r for r in result["results"]}
    for name in (
        "read_file",
        "create_file",
        "update_file",
        "append_file",
        "delete_file",
        "get_size",
        "create_dir",
        "check_file_exists",
        "check_dir_exists",
    ):
        assert not by_name[name]["ok"], (name, by_name[name])
        assert "outside the vault" in by_name[name]["error"]
    world.check(result)


def test_recursive_listing_and_search_skip_outside_links(world: World) -> None:
    listing = world.vault.list_dir("", recursive=True).entries
    assert not any(e.startswith(("out_dir", "out_file", "sibling", "cfg")) for e in listing)
    assert world.vault.search("CANARY").to_json()["matches"] == []
