from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memagent.cli import app
from memagent.core import CorruptFile, MemoryHome

runner = CliRunner()


def test_init_then_log_json(tmp_path: Path) -> None:
    home = tmp_path / "h"
    res = runner.invoke(app, ["init", "--home", str(home)])
    assert res.exit_code == 0, res.output
    assert "vault/user.md" in res.output
    res = runner.invoke(app, ["log", "--home", str(home), "--json"])
    lines = [json.loads(x) for x in res.stdout.splitlines()]
    user_md = [x for x in lines if x["path"] == "vault/user.md"]
    assert len(user_md) == 1
    assert user_md[0]["op"] == "create" and user_md[0]["actor"] == "init"
    assert user_md[0].get("before") is None and user_md[0]["after"].startswith("sha256:")


def test_log_without_home_is_clean_error(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "memagent", "log", "--home", str(tmp_path / "none")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1
    assert "memagent init" in proc.stderr
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr


def test_env_home_is_used(tmp_path: Path) -> None:
    home = tmp_path / "envhome"
    res = runner.invoke(app, ["init"], env={"MEMAGENT_HOME": str(home)})
    assert res.exit_code == 0
    assert (home / "vault" / "user.md").exists()


def test_corrupt_config_reported(tmp_path: Path) -> None:
    home = tmp_path / "h"
    runner.invoke(app, ["init", "--home", str(home)])
    (home / "config.toml").write_text("[[[")
    with pytest.raises(CorruptFile, match=r"config\.toml"):
        _ = MemoryHome.open(home).config
    assert (home / "config.toml").read_text() == "[[["


def test_every_command_takes_home() -> None:
    import typer.main

    missing: list[str] = []

    def walk(command: object, path: list[str]) -> None:
        subcommands = getattr(command, "commands", None)
        if subcommands:
            for name, sub in subcommands.items():
                walk(sub, [*path, name])
            return
        options = [o for p in command.params for o in getattr(p, "opts", [])]  # type: ignore[attr-defined]
        if "--home" not in options:
            missing.append(" ".join(path))

    walk(typer.main.get_command(app), [])
    assert missing == []
