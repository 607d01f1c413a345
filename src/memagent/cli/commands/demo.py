"""`memagent demo`: a short, non-interactive guided tour of the vault and actions.

It never writes into an existing memory home (yours): the tour runs in a scratch
home that is removed afterwards, or, with `--home DIR`, in DIR only when DIR does
not exist yet or is an empty folder (so you can look around after the tour)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import typer
from rich.markdown import Markdown
from rich.panel import Panel
from rich.rule import Rule
from rich.syntax import Syntax
from rich.table import Table

from memagent.cli._common import HomeOption, console

DEMO_NOTE = "entities/jane_doe.md"
SAMPLE_RESPONSE = """\
<think>The user said they now work with Jane Doe on the Atlas project. I will
record Jane as an entity note, link her from user.md, and note the project.</think>
<actions>
[
  {"action": "check_file_exists", "path": "entities/jane_doe.md", "assign_to": "known"},
  {"action": "create_file", "path": "entities/jane_doe.md",
   "content": "# Jane Doe\\n\\nColleague of the user.\\n\\n## Work\\n- Leads the Atlas project\\n"},
  {"action": "update_file", "path": "user.md", "old_content": "## People\\n",
   "new_content": "## People\\n- [[Jane Doe]]: colleague on the Atlas project\\n"},
  {"action": "append_file", "path": "user.md", "content": "- Atlas project with [[Jane Doe]]\\n"},
  {"action": "go_to_link", "link": "[[Jane Doe#Work]]", "assign_to": "work"},
  {"action": "search_files", "query": "atlas"},
  {"action": "read_file", "path": "../config.toml"}
]
</actions>
<reply>Noted: Jane Doe is your colleague on Atlas.</reply>
"""


def _step(n: int, title: str, text: str) -> None:
    console.print()
    console.print(Rule(f"[bold]Step {n}: {title}"))
    console.print(text, highlight=False)


def _short(value: Any, limit: int = 90) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = text.replace("\n", "⏎")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _target(action: Any) -> str:
    fields = action.fields()
    for key in ("path", "link", "query"):
        if key in fields and fields[key] != "":
            return str(fields[key])
    return ""


def _tour(home_dir: Path | None, scratch: bool) -> None:
    from memagent.actions import parse_response, run_actions
    from memagent.core import MemoryHome, read_ops
    from memagent.memory.vault import Vault
    from memagent.setup import init_home

    mh = MemoryHome.open(home_dir)
    init_home(mh)
    vault = Vault(mh, actor="demo")
    if scratch:
        console.print(
            f"[dim]The tour runs in a scratch home ({mh.root}) that is removed afterwards; "
            f"your memory home is not touched.[/]",
            highlight=False,
        )

    _step(
        1,
        "the vault",
        f"Memory lives in plain markdown under [cyan]{vault.dir}[/]. "
        "This is the starter note [cyan]user.md[/]:",
    )
    console.print(Panel(Markdown(vault.read("user.md")), title="user.md", expand=False))

    _step(
        2,
        "an LLM response",
        "An LLM acts on the vault by answering with <think>, <actions> (a JSON array) "
        "and <reply>. Here is one such response:",
    )
    console.print(Syntax(SAMPLE_RESPONSE, "xml", word_wrap=True))

    _step(3, "parsing", "The parser validates every action against its schema:")
    parsed = parse_response(SAMPLE_RESPONSE)
    if parsed.error is not None:
        raise RuntimeError(f"demo response does not parse: {parsed.error}")
    table = Table("#", "action", "target", "assign_to")
    for i, action in enumerate(parsed.actions):
        table.add_row(str(i), action.example["action"], _target(action), action.assign_to or "")
    console.print(table)

    _step(
        4,
        "running",
        "The runner executes them in order. Each result is ok+value or an error; a "
        "failure does not stop the others. The last action tries to leave the vault:",
    )
    ops_before = sum(1 for _ in read_ops(mh.layout.ops_log))
    result = run_actions(vault, parsed.actions)
    table = Table("#", "action", "ok", "value / error")
    for r in result.results:
        ok = "[green]ok[/]" if r.ok else "[red]error[/]"
        table.add_row(str(r.index), r.action, ok, _short(r.value if r.ok else r.error))
    console.print(table)
    console.print(
        f"{result.succeeded} succeeded, {result.failed} failed. The whole result is "
        "one JSON object, which goes back to the LLM on its next turn."
    )

    _step(5, "the changed notes", "user.md now links to the new entity note:")
    console.print(Panel(Markdown(vault.read("user.md")), title="user.md", expand=False))
    console.print(Panel(Markdown(vault.read(DEMO_NOTE)), title=DEMO_NOTE, expand=False))

    _step(
        6,
        "the ops log",
        "Every write was atomic (temp file, fsync, rename) and is recorded in "
        "log/ops.jsonl with content hashes:",
    )
    table = Table("time", "actor", "op", "path", "before → after")
    for rec in list(read_ops(mh.layout.ops_log))[ops_before:]:
        before = (rec.before or "∅").removeprefix("sha256:")[:8]
        after = (rec.after or "∅").removeprefix("sha256:")[:8]
        table.add_row(rec.ts[11:19], rec.actor, rec.op, rec.path, f"{before} → {after}")
    console.print(table)

    _step(7, "try it yourself", "")
    home_opt = "" if scratch else f" --home {mh.root}"
    console.print(
        f"  memagent vault ls -r{home_opt}\n"
        f"  memagent vault show '[[Jane Doe]]'{home_opt}\n"
        f'  echo \'[{{"action": "read_file", "path": "user.md"}}]\' | '
        f"memagent vault run{home_opt}\n"
        f"  memagent vault schema\n"
        f"  memagent log{home_opt}",
        highlight=False,
        markup=False,
    )


def demo(home: HomeOption = None) -> None:
    """A guided tour: an LLM-style <actions> batch edits the vault, step by step.

    Runs in a scratch home; --home DIR keeps it in DIR, which must not exist yet
    or be empty (an existing memory home is never written to)."""
    from memagent.core import InvalidInput

    target: Path | None = None
    if home is not None:
        target = home.expanduser().absolute()
        if target.exists() and (not target.is_dir() or any(target.iterdir())):
            raise InvalidInput(
                f"{target} is not empty: the demo never writes into an existing home; "
                "give a new folder, or no --home for a scratch one"
            )
    console.print(
        Panel(
            "memagent keeps an LLM's memory in files you can read. This tour shows the "
            "markdown vault and the JSON actions an LLM uses to edit it.",
            title="memagent demo",
            expand=False,
        )
    )
    if target is None:
        with tempfile.TemporaryDirectory(prefix="memagent-demo-") as tmp:
            _tour(Path(tmp) / "home", scratch=True)
    else:
        _tour(target, scratch=False)


def register(app: typer.Typer) -> None:
    app.command()(demo)
