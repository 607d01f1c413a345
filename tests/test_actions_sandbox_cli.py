"""`memagent vault run --python`: code from stdin drives the vault, end to end."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from typer.testing import CliRunner

from memagent.cli import app
from memagent.core import MemoryHome, read_ops

runner = CliRunner()


def invoke(home: MemoryHome, *args: str, stdin: str | bytes | None = None) -> tuple[int, Any]:
    res = runner.invoke(app, ["vault", "run", *args, "--home", str(home.root)], input=stdin)
    return res.exit_code, json.loads(res.stdout) if res.stdout.strip() else res.stdout


def ops_count(home: MemoryHome) -> int:
    return sum(1 for _ in read_ops(home.layout.ops_log))


def test_code_reads_and_edits_notes(home: MemoryHome) -> None:
    code = (
        "me = read_file('user.md')\n"
        "update_file('user.md', '## Preferences\\n', '## Preferences\\n- Tea\\n')\n"
        "create_file('entities/jane.md', '# Jane\\n')\n"
        "print('done')\n"
        "{'had_prefs': '## Preferences' in me, 'files': list_files('entities')['entries']}"
    )
    status, out = invoke(home, "--python", stdin=code)
    assert status == 0, out
    assert out["error"] is None and out["output"] == "done\n"
    assert out["result"]["had_prefs"] is True and "entities/jane.md" in out["result"]["files"]
    assert "- Tea" in (home.layout.vault / "user.md").read_text()
    last = list(read_ops(home.layout.ops_log))[-1]
    assert last.actor == "vault-python" and last.path == "vault/entities/jane.md"


def test_code_error_exits_1_with_the_message(home: MemoryHome) -> None:
    status, out = invoke(home, "--python", stdin="read_file('../config.toml')")
    assert status == 1
    assert out["error"].startswith("PermissionError:") and "(line 1)" in out["error"]
    status, out = invoke(
        home,
        "--python",
        stdin="try:\n    read_file('x.md')\nexcept FileNotFoundError:\n    r = 1\nr",
    )
    assert status == 0 and out["result"] == 1


def test_session_keeps_state_between_calls(home: MemoryHome) -> None:
    status, out = invoke(
        home,
        "--python",
        "--session",
        "notes",
        stdin="def title(p):\n    return read_file(p).splitlines()[0]\nseen = []",
    )
    assert status == 0, out
    status, out = invoke(
        home, "--python", "-s", "notes", stdin="seen.append(title('user.md'))\nseen"
    )
    assert status == 0 and out["result"] == ["# User"] and out["session"] == "notes"
    status, out = invoke(home, "--python", "-s", "notes", stdin="len(seen)")
    assert out["result"] == 1


def test_limits_from_flags(home: MemoryHome) -> None:
    status, out = invoke(
        home, "--python", "--max-ops", "500", stdin="while True:\n    check_file_exists('user.md')"
    )
    assert status == 1 and out["error"].startswith("LimitExceeded")
    status, out = invoke(
        home, "--python", "--timeout", "0.2", stdin="while True:\n    get_size('user.md')"
    )
    assert status == 1 and "LimitExceeded" in out["error"]


def test_malformed_and_oversized_stdin_write_nothing(home: MemoryHome) -> None:
    before = ops_count(home)
    for stdin, words in (
        (b"\xff\xfe create_file('a.md', 'x')", "not UTF-8"),
        ("", "no code"),
        ("   \n", "no code"),
        ("create_file('a.md', 'x')\n#" + "x" * 1_000_001, "code over"),
    ):
        status, out = invoke(home, "--python", stdin=stdin)
        assert status == 2, (stdin[:20], out)
        assert out["result"] is None and words in out["error"]
    status, out = invoke(home, "--python", stdin="create_file('a.md', 'x'\n")
    assert status == 1 and out["error"].startswith("SyntaxError")
    assert ops_count(home) == before
    assert not (home.layout.vault / "a.md").exists()


def test_bad_session_name_and_stray_flags(home: MemoryHome) -> None:
    status, out = invoke(home, "--python", "--session", "../x", stdin="1")
    assert status == 2 and "invalid session name" in out["error"]
    status, out = invoke(home, "--session", "s", stdin="[]")
    assert status == 2 and "--python" in out["error"]


def test_missing_home_is_a_clear_error(tmp_path: Any) -> None:
    res = runner.invoke(
        app, ["vault", "run", "--python", "--home", str(tmp_path / "none")], input="1"
    )
    assert res.exit_code == 2
    assert json.loads(res.stdout)["error"].startswith("NotFound")


def test_as_a_subprocess(home: MemoryHome) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "memagent", "vault", "run", "--python", "--home", str(home.root)],
        input="append_file('log.md', 'one')\nread_file('log.md')",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"output": "", "result": "one", "error": None, "final": False}
