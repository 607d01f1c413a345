"""`memagent serve` as a real subprocess, and `memagent openapi`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
from bench.serving import start_serve, stop
from typer.testing import CliRunner

from memagent.cli import app as cli_app
from memagent.server.testing import assert_problem


def test_serve_subprocess_end_to_end(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {**os.environ, "MEMAGENT_HOME": str(home)}
    made = subprocess.run(
        [sys.executable, "-m", "memagent", "keys", "create", "--user", "alice"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    key = made.stdout.strip().splitlines()[-1]
    assert key.startswith("mak_") and "created" in made.stderr
    proc, url = start_serve(
        [
            "--keyword-only",
            "--max-body",
            "5000",
            "--in-flight",
            "model=2",
            "--in-flight",
            "keyless=2",
        ],
        env=env,
    )
    try:
        headers = {"Authorization": f"Bearer {key}"}
        made_memory = httpx.post(
            f"{url}/v1/memories", json={"text": "Ana likes jazz"}, headers=headers
        )
        assert made_memory.status_code == 201
        hits = httpx.get(f"{url}/v1/memories/search", params={"q": "jazz"}, headers=headers)
        assert hits.json()["hits"][0]["id"] == made_memory.json()["id"]
        assert_problem(httpx.post(f"{url}/v1/memories", content=b"x" * 6000, headers=headers), 413)
        assert_problem(httpx.get(f"{url}/v1/memories"), 401)
        mcp = httpx.post(f"{url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert mcp.status_code == 401
    finally:
        stop(proc)
    # The server root defaulted to <home>/server; alice's memory lives there.
    assert list((home / "server" / "users" / "alice" / "chunks").rglob("*.json"))


def test_serve_as_user_serves_the_cli_home_itself(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {**os.environ, "MEMAGENT_HOME": str(home)}

    def cli(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "memagent", *args],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout

    cli("init")
    cli("remember", "Ana plays the oboe on Sundays", "--keyword-only")
    key = cli("keys", "create", "--user", "me").strip().splitlines()[-1]
    proc, url = start_serve(["--as-user", "me", "--keyword-only"], env=env)
    try:
        headers = {"Authorization": f"Bearer {key}"}
        hits = httpx.get(f"{url}/v1/memories/search", params={"q": "oboe"}, headers=headers)
        assert hits.status_code == 200, hits.text
        assert "oboe" in hits.json()["hits"][0]["content"]  # made with the CLI, in the home
    finally:
        stop(proc)
    assert not (home / "server" / "users" / "me").exists()


def test_openapi_command_writes_the_document(tmp_path: Path) -> None:
    out = tmp_path / "openapi.json"
    result = CliRunner().invoke(cli_app, ["openapi", "--out", str(out)])
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text())
    assert doc["info"]["title"] == "memagent"
    assert "/v1/memories/search" in doc["paths"]
    printed = CliRunner().invoke(cli_app, ["openapi"])
    assert json.loads(printed.stdout) == doc


def test_commands_refuse_a_file_as_root_or_home(tmp_path: Path) -> None:
    a_file = tmp_path / "file.txt"
    a_file.write_text("not a folder")
    runner = CliRunner()
    for args in (
        ["serve", "--root", str(a_file), "--port", "1"],
        ["keys", "create", "--user", "alice", "--root", str(a_file)],
        ["keys", "ls", "--root", str(a_file)],
        ["mcp", "--home", str(a_file)],
        ["serve", "--port", "70000"],
    ):
        result = runner.invoke(cli_app, args)
        assert result.exit_code != 0, args
        assert result.exception is None or isinstance(result.exception, SystemExit), args
    assert a_file.read_text() == "not a folder"


def test_in_flight_caps_from_the_command_line(tmp_path: Path) -> None:
    from memagent.cli.commands.serve import _settings

    settings = _settings(["model=2", "KEYLESS=3", "auth=1"])
    assert (settings.model_in_flight, settings.anon_in_flight, settings.auth_in_flight) == (2, 3, 1)
    assert settings.search_in_flight == 8  # the others keep their defaults
    runner = CliRunner()
    root = tmp_path / "root"
    for bad, says in (
        (["bogus=3"], "give CLASS=N"),
        (["model"], "give CLASS=N"),
        (["model=x"], "whole number"),
        (["model=0"], "greater than or equal to 1"),
        (["model=30", "search=20"], "add up to"),
    ):
        args = ["serve", "--root", str(root), "--port", "1"]
        for spec in bad:
            args += ["--in-flight", spec]
        result = runner.invoke(cli_app, args)
        assert result.exit_code != 0, bad
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and says in lines[0], (bad, result.stderr)
    assert not root.exists()  # nothing written
