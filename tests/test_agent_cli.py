"""`memagent chat`, `ask`, `persona`, `hud` and `trace` from the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memagent.cli.app import app
from memagent.core import MemoryHome

runner = CliRunner()


@pytest.fixture
def cli_home(home: MemoryHome) -> MemoryHome:
    cfg = home.layout.config
    cfg.write_text(cfg.read_text() + "\n", encoding="utf-8")
    text = cfg.read_text().replace("[embeddings]\nenabled = true", "[embeddings]\nenabled = false")
    cfg.write_text(text, encoding="utf-8")
    return MemoryHome.open(home.root)


def script(tmp_path: Path, replies: list[str], name: str = "s.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(replies), encoding="utf-8")
    return f"scripted:{path}"


def invoke(*args: str, input: str | None = None) -> tuple[int, str, str]:
    res = runner.invoke(app, list(args), input=input)
    return res.exit_code, res.stdout, res.stderr


def test_chat_piped_one_message_a_line_then_resume(cli_home: MemoryHome, tmp_path: Path) -> None:
    h = str(cli_home.root)
    model = script(tmp_path, ['{"reply": "Hi Sam."}', '{"reply": "Noted."}'])
    code, out, err = invoke(
        "chat", "--home", h, "--model", model, "--no-learn", input="I'm Sam.\n\nI like tea.\n"
    )
    assert code == 0, err
    assert out.splitlines() == ["Hi Sam.", "Noted."]
    model2 = script(tmp_path, ['{"reply": "You are Sam."}'], "s2.json")
    code, out, err = invoke(
        "chat", "--home", h, "--model", model2, "--resume", "--no-learn", input="Who am I?\n"
    )
    assert code == 0, err
    assert out.strip() == "You are Sam."
    convs = list((cli_home.layout.state / "conversations").glob("c-*.json"))
    assert len(convs) == 1
    assert len(json.loads(convs[0].read_text())["messages"]) == 6
    assert (cli_home.layout.gauges / "LIVEHUD.md").exists()


def test_ask_prints_only_the_answer_and_trace_last(cli_home: MemoryHome, tmp_path: Path) -> None:
    h = str(cli_home.root)
    model = script(tmp_path, ["nonsense", '{"reply": "Forty-two."}'])
    code, out, err = invoke(
        "ask", "What is the answer?", "--home", h, "--model", model, "--no-learn"
    )
    assert code == 0, err
    assert out == "Forty-two.\n"
    code, out, _ = invoke("trace", "last", "--home", h, "--json")
    doc = json.loads(out)
    assert doc["message"] == "What is the answer?" and len(doc["steps"]) == 2
    code, out, _ = invoke("trace", "last", "--home", h)
    assert code == 0 and "not a JSON object" in out and "Forty-two." in out


def test_ask_json_and_honest_failure(cli_home: MemoryHome, tmp_path: Path) -> None:
    model = script(tmp_path, ["x", "y"])
    code, out, _ = invoke(
        "ask",
        "Q?",
        "--home",
        str(cli_home.root),
        "--model",
        model,
        "--max-steps",
        "2",
        "--json",
        "--no-learn",
    )
    assert code == 1  # no answer: a non-zero exit, never a made-up reply
    doc = json.loads(out)
    assert doc["ok"] is False and doc["reply"].startswith("I couldn't finish that within 2 steps")


def test_model_failure_exits_non_zero_with_the_message_on_stderr(
    cli_home: MemoryHome, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = str(cli_home.root)
    monkeypatch.setenv("MEMAGENT_LLM_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens
    for args in (["ask", "What is my cat called?"], ["ask", "--deep", "What is my cat called?"]):
        code, out, err = invoke(*args, "--home", h, "--model", "openai:m", "--no-learn")
        assert code == 1, (args, out, err)
        assert out == ""
        assert "error:" in err
    code, out, err = invoke(
        "chat", "--home", h, "--model", "openai:m", "--no-learn", input="Hello there.\n"
    )
    assert code == 1 and out.strip() == "" and "the model failed" in err
    empty = script(tmp_path, [])  # a model with nothing to say fails too
    code, out, err = invoke("ask", "Hi?", "--home", h, "--model", empty, "--no-learn")
    assert code == 1 and out == "" and "the model failed" in err


def test_chat_commands_are_local_never_sent_or_stored(cli_home: MemoryHome, tmp_path: Path) -> None:
    h = str(cli_home.root)
    model = script(tmp_path, ['{"reply": "Noted."}'])
    lines = "/help\nMy cat is Pixel.\n/history\n/frobnicate\n/recall cat\n/exit\nnever sent\n"
    code, out, err = invoke("chat", "--home", h, "--model", model, "--no-learn", input=lines)
    assert code == 0, err
    rows = out.splitlines()
    assert rows[0].startswith("Commands (handled here") and "/forget" in rows[0]
    assert rows[1] == "Noted."
    assert "you: My cat is Pixel." in rows[2] and "assistant: Noted." in rows[2]
    assert rows[3].startswith("Unknown command /frobnicate")
    assert "My cat is Pixel." in rows[4]
    assert len(rows) == 5  # /exit ended it: "never sent" was not read
    (chunk,) = list(cli_home.layout.chunks.rglob("chunk-*.json"))
    assert json.loads(chunk.read_text())["content"] == "My cat is Pixel."
    (conv,) = list((cli_home.layout.state / "conversations").glob("c-*.json"))
    said = [m["content"] for m in json.loads(conv.read_text())["messages"]]
    assert said == ["My cat is Pixel.", "Noted."]
    chunk_id = json.loads(chunk.read_text())["id"]
    model2 = script(tmp_path, [], "s2.json")  # a model call would fail: there is none
    code, out, err = invoke(
        "chat", "--home", h, "--model", model2, "--no-learn", input=f"/forget {chunk_id}\n"
    )
    assert code == 0, err
    assert out.startswith(f"Forgot {chunk_id}")
    assert json.loads(chunk.read_text())["deleted_at"]


def test_ask_deep(cli_home: MemoryHome, tmp_path: Path) -> None:
    h = str(cli_home.root)
    code, _, err = invoke("remember", "My dog is called Rex.", "--home", h)
    assert code == 0, err
    model = script(
        tmp_path,
        [
            '{"python": "hits = search_chunks(\\"dog\\")\\nprint(hits[0][\\"content\\"])"}',
            '{"python": "FINAL(\\"Rex\\")"}',
        ],
    )
    code, out, err = invoke(
        "ask", "--deep", "What is my dog called?", "--home", h, "--model", model
    )
    assert code == 0, err
    assert out == "Rex\n"
    code, out, _ = invoke("trace", "last", "--home", h, "--json")
    doc = json.loads(out)
    assert doc["mode"] == "deep" and doc["reply"] == "Rex" and len(doc["steps"]) == 2


@pytest.mark.parametrize(
    "args",
    [
        ["ask", "", "--model", "scripted:x.json"],
        ["ask", "hi", "--model", "nonsense"],
        ["ask", "hi", "--model", "scripted:/no/such.json"],
        ["ask", "hi", "--mode", "yaml", "--model", "scripted:{script}"],
        ["ask", "hi", "--prompt-set", "nope", "--model", "scripted:{script}"],
        ["chat", "--prompt-set", "../x", "--model", "scripted:{script}"],
        ["ask", "x" * 20_001, "--model", "scripted:{script}"],
        ["chat", "--conversation", "../../etc", "--model", "scripted:{script}"],
        ["chat", "--resume", "--model", "scripted:{script}"],
        ["persona", "use", "NOPE"],
        ["persona", "use", "../x"],
        ["persona", "set", "humor", "101"],
        ["persona", "set", "charm", "10"],
    ],
)
def test_bad_input_is_a_clean_error_and_writes_nothing(
    cli_home: MemoryHome, tmp_path: Path, args: list[str]
) -> None:
    s = script(tmp_path, ['{"reply": "no"}'])
    args = [a.replace("scripted:{script}", s) for a in args]
    ops = cli_home.layout.ops_log.read_bytes()
    code, out, err = invoke(*args, "--home", str(cli_home.root), input="hello\n")
    assert code != 0
    assert "Traceback" not in err and "Traceback" not in out
    assert "error" in err.lower() or "invalid" in err.lower()
    assert cli_home.layout.ops_log.read_bytes() == ops


def test_persona_and_hud_commands(cli_home: MemoryHome) -> None:
    h = str(cli_home.root)
    code, out, _ = invoke("persona", "ls", "--home", h, "--json")
    rows = json.loads(out)
    assert {r["name"] for r in rows} >= {
        "BASE",
        "RESEARCH_ANALYST",
        "CREATIVE_DIRECTOR",
        "TECHNICAL_COPILOT",
    }
    assert [r["name"] for r in rows if r["active"]] == ["BASE"]
    assert invoke("persona", "use", "RESEARCH_ANALYST", "--home", h)[0] == 0
    assert invoke("persona", "set", "humor", "80", "--home", h)[0] == 0
    code, out, _ = invoke("persona", "show", "--home", h)
    assert "research analyst" in out and "Humor 80/100" in out
    code, out, _ = invoke("hud", "--home", h, "--json")
    assert code == 0
    status = json.loads(out)
    assert status["persona"] == "RESEARCH_ANALYST"
    assert (cli_home.layout.gauges / "LIVEHUD.md").read_text().startswith("# LIVE HUD")


def test_trace_last_without_traces(cli_home: MemoryHome) -> None:
    code, _, err = invoke("trace", "last", "--home", str(cli_home.root))
    assert code == 1 and "no traces yet" in err


def test_piped_chat_skips_a_bad_line_and_exits_1(cli_home: MemoryHome, tmp_path: Path) -> None:
    model = script(tmp_path, ['{"reply": "One."}', '{"reply": "Two."}'])
    lines = "first\n" + "x" * 20_001 + "\nsecond\n"
    code, out, err = invoke(
        "chat", "--home", str(cli_home.root), "--model", model, "--no-learn", input=lines
    )
    assert code == 1
    assert out.split("\n")[:3] == ["One.", "", "Two."]
    assert "line 2: the message is 20001 characters" in err


def test_prompt_set_option_picks_the_set(cli_home: MemoryHome, tmp_path: Path) -> None:
    model = script(tmp_path, ['{"reply": "Done."}'])
    code, out, err = invoke(
        "ask", "Note that I like tea.", "--home", str(cli_home.root), "--model", model,
        "--prompt-set", "json", "--no-learn", "--json",
    )  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["reply"] == "Done."
    model = script(tmp_path, ['{"reply": "Tea."}'], "s2.json")
    code, out, err = invoke(
        "ask", "What do I like?", "--home", str(cli_home.root), "--model", model,
        "--prompt-set", "instruct", "--no-learn",
    )  # fmt: skip
    assert code == 0 and out == "Tea.\n", err
