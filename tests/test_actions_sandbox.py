"""The vault actions as sandbox tools: code reads and edits notes through the
same action functions (path confinement, size caps, ops log), and their errors
are ordinary exceptions the code can catch."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest

from memagent.actions import SPECS, vault_tools
from memagent.core import MemoryHome, read_ops
from memagent.memory.vault import Vault
from memagent.sandbox import Limits, Session


@pytest.fixture
def vault(home: MemoryHome) -> Vault:
    v = Vault(home, actor="code")
    v.create("people/ann.md", "# Ann\n\n## Job\nChef\n")
    return v


def run(vault: Vault, code: str, limits: Limits | None = None) -> Any:
    return Session(tools=vault_tools(vault), limits=limits).run(code)


def test_one_tool_per_action_with_the_fields_as_parameters() -> None:
    tools = vault_tools(Vault.__new__(Vault))
    assert set(tools) == set(SPECS)
    for name, fn in tools.items():
        params = list(inspect.signature(fn).parameters)
        fields = [f for f in SPECS[name].model.model_fields if f not in ("action", "assign_to")]
        assert params == fields, name


def test_read_and_update_notes_with_code(vault: Vault, home: MemoryHome) -> None:
    r = run(
        vault,
        "text = read_file('people/ann.md')\n"
        "job = text.split('## Job\\n')[1].strip()\n"
        "update_file('people/ann.md', job, 'Head ' + job.lower())\n"
        "append_file('people/ann.md', 'Likes figs')\n"
        "create_file('people/bob.md', '# Bob\\n')\n"
        "names = [e for e in list_files('people')['entries']]\n"
        "print(len(names))\n"
        "{'names': names, 'size': get_size('people/ann.md'), "
        "'exists': check_file_exists('people/bob.md'), 'dir': check_dir_exists('people'), "
        "'hits': search_files('figs')['matches'], 'link': go_to_link('[[Ann#Job]]')['content']}",
    )
    assert r.error is None, r.error
    assert r.output == "2\n"
    assert r.result["names"] == ["people/ann.md", "people/bob.md"]
    assert vault.read("people/ann.md") == "# Ann\n\n## Job\nHead chef\nLikes figs"
    assert r.result["size"] == vault.size("people/ann.md")
    assert r.result["exists"] is True and r.result["dir"] is True
    assert r.result["hits"][0]["path"] == "people/ann.md"
    assert r.result["link"] == "## Job\nHead chef\nLikes figs"
    ops = [(o.actor, o.op, o.path) for o in read_ops(home.layout.ops_log)][-3:]
    assert ops == [
        ("code", "update", "vault/people/ann.md"),
        ("code", "append", "vault/people/ann.md"),
        ("code", "create", "vault/people/bob.md"),
    ]


def test_keyword_arguments_and_defaults(vault: Vault) -> None:
    r = run(
        vault,
        "create_dir(path='notes/a')\n"
        "create_file(path='notes/a/x.md', content='alpha')\n"
        "update_file('notes/a/x.md', new_content='beta', old_content='alpha')\n"
        "[list_files(recursive=True)['entries'], delete_file('notes/a/x.md'), "
        "search_files('beta', max_results=1)]",
    )
    assert r.error is None, r.error
    entries, deleted, search = r.result
    assert "notes/a/x.md" in entries and deleted == {"path": "notes/a/x.md", "deleted": True}
    assert search == {"matches": [], "truncated": False}


@pytest.mark.parametrize(
    ("call", "exc", "words"),
    [
        ("read_file('nope.md')", "FileNotFoundError", "does not exist"),
        ("create_file('people/ann.md', 'x')", "FileExistsError", "already exists"),
        ("read_file('../../etc/passwd')", "PermissionError", "'..'"),
        ("read_file('/etc/passwd')", "PermissionError", "absolute"),
        ("update_file('people/ann.md', 'absent', 'x')", "FileNotFoundError", "not found"),
        ("update_file('people/ann.md', '', 'x')", "ValueError", "non-empty"),
        ("read_file('people')", "ValueError", "is a folder"),
        ("search_files('(', regex=True)", "ValueError", "regex"),
        ("read_file(5)", "TypeError", 'field "path"'),
        ("list_files(recursive='yes')", "TypeError", 'field "recursive"'),
        ("read_file()", "TypeError", "path"),
        ("go_to_link('[[nobody]]')", "FileNotFoundError", "no note matches"),
    ],
)
def test_tool_errors_are_catchable_builtin_exceptions(
    vault: Vault, call: str, exc: str, words: str
) -> None:
    r = run(
        vault,
        f"try:\n    {call}\n    out = 'no error'\n"
        f"except {exc} as e:\n    out = ['{exc}', str(e)]\nout",
    )
    assert r.error is None, r.error
    assert r.result[0] == exc and words in r.result[1], r.result


def test_uncaught_tool_error_reports_type_message_and_line(vault: Vault) -> None:
    r = run(vault, "x = 1\nread_file('missing.md')\n")
    assert r.error is not None
    assert r.error.startswith("FileNotFoundError: 'missing.md' does not exist")
    assert r.error.endswith("(line 2)")


def test_hostile_paths_touch_nothing_outside(
    vault: Vault, home: MemoryHome, tmp_path: Path
) -> None:
    canary = tmp_path / "canary.txt"
    canary.write_text("untouched")
    before = sorted(p.relative_to(home.root) for p in home.root.rglob("*"))
    r = run(
        vault,
        "bad = ['../canary.txt', '../../canary.txt', '/" + str(canary).lstrip("/") + "', "
        "'~/x.md', 'a/../../b.md', 'a\\\\b.md', 'x\\x00y.md', '.tmp-1.md', 'a/' * 40 + 'x.md', "
        "'n' * 300 + '.md', '../config.toml', '../log/ops.jsonl']\n"
        "refused = 0\n"
        "for p in bad:\n"
        "    for f in (lambda: create_file(p, 'pwned'), lambda: append_file(p, 'pwned'),\n"
        "              lambda: delete_file(p), lambda: read_file(p), lambda: create_dir(p)):\n"
        "        try:\n"
        "            f()\n"
        "        except (PermissionError, ValueError, FileNotFoundError):\n"
        "            refused += 1\n"
        "refused",
    )
    assert r.error is None, r.error
    assert r.result == 12 * 5
    assert canary.read_text() == "untouched"
    assert sorted(p.relative_to(home.root) for p in home.root.rglob("*")) == before


def test_symlink_out_of_the_vault_is_refused(vault: Vault, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("secret")
    (vault.dir / "leak.md").symlink_to(outside)
    r = run(
        vault, "try:\n    read_file('leak.md')\nexcept PermissionError as e:\n    m = str(e)\nm"
    )
    assert "outside the vault" in r.result
    r = run(
        vault, "try:\n    append_file('leak.md', 'x')\nexcept PermissionError:\n    m = 'no'\nm"
    )
    assert r.result == "no" and outside.read_text() == "secret"


def test_tools_cannot_be_rebound_or_inspected(vault: Vault) -> None:
    session = Session(tools=vault_tools(vault))
    for code in (
        "read_file = print",
        "def read_file(p):\n    return 'fake'",
        "del read_file",
        "import json as read_file",
        "for read_file in range(2):\n    pass",
    ):
        r = session.run(code)
        assert r.error is not None and "SecurityError" in r.error, (code, r.error)
    assert session.run("read_file('people/ann.md')").result.startswith("# Ann")
    for code in ("read_file.__globals__", "read_file._fn", "getattr(read_file, '__closure__')"):
        r = session.run(code)
        assert r.error is not None, code


def test_limits_still_apply(vault: Vault) -> None:
    r = run(
        vault, "while True:\n    check_file_exists('people/ann.md')", Limits(max_operations=2000)
    )
    assert r.error is not None and r.error.startswith("LimitExceeded")
    r = run(vault, "while True:\n    get_size('people/ann.md')", Limits(timeout_s=0.2))
    assert r.error is not None and "LimitExceeded" in r.error
    r = run(vault, "create_file('big.md', 'a' * 10**10)")
    assert r.error is not None and r.error.startswith("LimitExceeded")
    big = vault.max_bytes + 1
    r = run(vault, f"create_file('big.md', 'a' * {big})")
    assert r.error is not None and r.error.startswith("ValueError") and "limit" in r.error
    assert not vault.exists("big.md")


def test_values_are_plain_data(vault: Vault) -> None:
    r = run(vault, "[type(list_files()).__name__, type(read_file('people/ann.md')).__name__]")
    assert r.error is not None  # dunder access is denied, whatever the value
    r = run(vault, "x = list_files()\nx['entries'].append('fake')\nlist_files()['entries']")
    assert "fake" not in r.result
