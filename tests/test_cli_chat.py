"""`memagent chat` niceties: "thinking…" until the first token, and /forget,
/edit, /undo on every id /recall prints, through the CLI with a scripted model."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from memagent.agent import Agent
from memagent.api import Memory
from memagent.cli.app import app
from memagent.cli.commands import chat as chat_cmd
from memagent.core import MemoryHome
from memagent.llm import ScriptedLLM

runner = CliRunner()
FOOD = "resource_user_food_prefs.json"
IDS = re.compile(r"(chunk-\d{8}-[0-9a-f]{12}|note:vault/\S+|fact:\S+)")


def terminal() -> tuple[Console, io.StringIO]:
    buf = io.StringIO()
    return Console(file=buf, force_terminal=True, width=80, color_system=None), buf


def test_thinking_shows_until_the_first_token_then_the_reply() -> None:
    out, buf = terminal()
    with chat_cmd.Thinking(out) as thinking:
        waiting = buf.getvalue()
        thinking.piece("Hel")
        thinking.piece("lo.")
    text = buf.getvalue()
    assert "thinking…" in waiting and "assistant ›" not in waiting
    assert "assistant › Hello." in text
    assert text.index("thinking…") < text.index("assistant ›")


def test_interactive_chat_waits_visibly_and_streams(
    home: MemoryHome, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, buf = terminal()
    lines = iter(["Where do I live?", "/recall Oslo", "/exit"])
    monkeypatch.setattr(chat_cmd, "console", out)
    monkeypatch.setattr(out, "input", lambda *_a, **_k: next(lines))
    llm = ScriptedLLM([json.dumps({"reply": "I don't have that in memory."})])
    with Agent(home, llm, prompt_set="instruct", learn_profile=False, embeddings=False) as agent:
        chat_cmd._interactive(agent, resumed=False)
    text = buf.getvalue()
    first = text.index("thinking…")
    assert first < text.index("assistant › I don't have that in memory.")
    assert text.count("assistant ›") == 1  # the /recall answer has no assistant prefix
    assert "Nothing in memory matches that." in text or "chunk-" in text


def chat(home: MemoryHome, tmp_path: Path, lines: list[str]) -> tuple[int, list[str], str]:
    script = tmp_path / "none.json"
    script.write_text("[]", encoding="utf-8")
    res = runner.invoke(
        app,
        ["chat", "--home", str(home.root), "--model", f"scripted:{script}", "--no-learn"],
        input="\n".join(lines) + "\n",
    )
    return res.exit_code, res.stdout.splitlines(), res.stderr


@pytest.fixture
def stocked(home: MemoryHome) -> MemoryHome:
    cfg = home.layout.config
    text = cfg.read_text().replace("[embeddings]\nenabled = true", "[embeddings]\nenabled = false")
    cfg.write_text(text, encoding="utf-8")
    with Memory.open(home.root, embeddings=False) as mem:
        mem.remember("Jane bakes sourdough on Sundays.")
        mem.write_note("entities/jane.md", "# Jane\nBakes sourdough.\n")
        op = {"operation": "append", "file": FOOD, "path": "food.likes",
              "value": {"item": "sourdough"}}  # fmt: skip
        assert mem.profile_apply([op])["ok"]
    return MemoryHome.open(home.root)


def test_forget_edit_undo_on_every_id_recall_prints(stocked: MemoryHome, tmp_path: Path) -> None:
    code, out, err = chat(stocked, tmp_path, ["/recall sourdough"])
    assert code == 0, err
    found = IDS.findall(out[0])
    kinds = {i.split(":")[0].split("-")[0] for i in found}
    assert kinds == {"chunk", "note", "fact"}, out
    script: list[str] = []
    for ref in found:
        script += [f"/edit {ref} Jane bakes rye.", f"/undo {ref}", f"/forget {ref}", f"/undo {ref}"]
    code, out, err = chat(stocked, tmp_path, script)
    assert code == 0, err
    assert len(out) == len(script)
    for line, sent in zip(out, script, strict=True):
        assert not line.startswith(("Could not", "Usage", "Unknown")), (sent, line)
    with Memory.open(stocked.root, embeddings=False) as mem:
        assert mem.read_note("entities/jane.md") == "# Jane\nBakes sourdough.\n"
        likes = mem.profile_show("user_food_prefs")[FOOD]["food"]["likes"]
        assert [i["display"] for i in likes] == ["Sourdough"]
        assert [r["content"] for r in mem.memories()] == ["Jane bakes sourdough on Sundays."]


HOSTILE = [
    ("/edit", "Usage: /edit ID NEW TEXT"),
    ("/edit chunk-20240101-000000000000", "Usage: /edit ID NEW TEXT"),
    ("/edit chunk-20240101-000000000000 new text", "Could not edit chunk-20240101-000000000000"),
    ("/edit note:vault/entities new text", "Could not edit note:vault/entities: 'entities' is a"),
    ("/forget nope", "Could not forget nope: 'nope' is not an id from /recall"),
    ("/forget note:vault/../../config.toml", "Could not forget note:vault/../../config.toml"),
    ("/undo fact:user_food_prefs:food:likes:caviar", "Could not undo the last change to fact"),
    ("/undo", "Usage: /undo ID"),
    ("/forget " + "z" * 5000, "Could not forget zzzz"),
]


def test_hostile_commands_answer_one_line_and_change_nothing(
    stocked: MemoryHome, tmp_path: Path
) -> None:
    before = {
        p: p.read_bytes()
        for part in ("vault", "chunks", "profile")
        for p in (stocked.root / part).rglob("*")
        if p.is_file()
    }
    code, out, err = chat(stocked, tmp_path, [line for line, _ in HOSTILE])
    assert code == 0, err
    assert len(out) == len(HOSTILE)
    for line, (_, want) in zip(out, HOSTILE, strict=True):
        assert line.startswith(want), (want, line[:200])
        assert len(line) < 700
    after = {
        p: p.read_bytes()
        for part in ("vault", "chunks", "profile")
        for p in (stocked.root / part).rglob("*")
        if p.is_file()
    }
    assert after == before
    code, out, err = chat(stocked, tmp_path, ["/edit note:vault/user.md " + "x" * 30_000])
    assert code == 1 and "the limit is" in err and out == [""]
    assert {p: p.read_bytes() for p in before} == before


class _Closing:
    """An agent stand-in that records how long `close` was asked to wait."""

    def __init__(self, told: int) -> None:
        self.told, self.waits, self.learning_left = told, [], 1
        self.background_errors: list[str] = []
        self.home = None

    def learn_pending(self) -> int:
        return 0

    def close(self, *, learn_wait: float | None = None) -> None:
        self.waits.append(learn_wait)


@pytest.mark.parametrize(
    ("told", "learn_earlier", "wait"),
    [(0, False, 0.0), (1, False, chat_cmd.LEARN_WAIT_S), (0, True, chat_cmd.LEARN_WAIT_S)],
)
def test_an_ask_that_told_nothing_does_not_wait_for_earlier_learning(
    monkeypatch: pytest.MonkeyPatch, told: int, learn_earlier: bool, wait: float
) -> None:
    import memagent.agent as agent_pkg

    monkeypatch.setattr(agent_pkg, "write_hud", lambda home: None)
    fake = _Closing(told)
    chat_cmd._finish(fake, quiet=True, learn_earlier=learn_earlier)  # type: ignore[arg-type]
    assert fake.waits == [wait]
