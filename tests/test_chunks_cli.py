"""The episodic-memory commands end to end: remember, import, recall, chunks, links, reindex."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from memagent.cli import app
from memagent.core import MemoryHome

runner = CliRunner()


def _run(*args: str, input: str | None = None) -> object:
    return runner.invoke(app, list(args), input=input)


def _hits(*args: str) -> list[dict[str, Any]]:
    """`recall --json` prints {"hits": [...]}, the shape of HTTP /v1/memories/search."""
    res = _run("recall", *args)
    assert res.exit_code == 0, res.output
    hits: list[dict[str, Any]] = json.loads(res.stdout)["hits"]
    return hits


@pytest.fixture
def h(home: MemoryHome) -> str:
    return str(home.root)


def _chunk_count(home: MemoryHome) -> int:
    return len(list(home.layout.chunks.rglob("*.json")))


def test_remember_then_recall_json(h: str) -> None:
    res = _run(
        "remember",
        "We decided to use Postgres for billing.",
        "--home",
        h,
        "-t",
        "db",
        "--keyword-only",
    )
    assert res.exit_code == 0, res.output
    assert "remembered chunk-" in res.stdout
    res = _run("recall", "postgres", "--home", h, "--json", "--keyword-only")
    hits = json.loads(res.stdout)["hits"]  # the shape of HTTP /v1/search
    assert hits[0]["content"] == "We decided to use Postgres for billing."
    assert hits[0]["tags"] == ["db"] and hits[0]["type"] == "decision"
    assert {"id", "content", "score", "tags", "created_at", "source", "why"} <= hits[0].keys()
    assert hits[0]["why"]["mode"].startswith("keyword-only")


def test_remember_from_stdin(h: str) -> None:
    res = _run("remember", "--home", h, "--json", "--keyword-only", input="I prefer oat milk.\n")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)[0]["type"] == "preference"


def test_import_keeps_source_id_and_recall_returns_it(h: str, tmp_path: Path) -> None:
    f = tmp_path / "conv.jsonl"
    f.write_text(
        "\n".join(
            json.dumps(m)
            for m in [
                {
                    "id": "m1",
                    "role": "user",
                    "content": "My sister lives in Lisbon.",
                    "timestamp": "2024-05-01T10:00:00Z",
                    "conversation_id": "c1",
                },
                {
                    "id": "m2",
                    "role": "assistant",
                    "content": "Lisbon is lovely in spring.",
                    "timestamp": "2024-05-01T10:01:00Z",
                    "conversation_id": "c1",
                },
                {"content": "No metadata at all."},
            ]
        ),
        encoding="utf-8",
    )
    res = _run("import", str(f), "--home", h, "--keyword-only")
    assert res.exit_code == 0, res.output
    assert "imported 3 messages as 3 chunks" in res.stdout
    hits = _hits("sister", "--home", h, "--json", "--keyword-only")
    assert hits[0]["source"]["id"] == "m1" and hits[0]["source"]["role"] == "user"
    assert hits[0]["created_at"].startswith("2024-05-01T10:00:00")
    ls = json.loads(_run("chunks", "ls", "--home", h, "--json", "--conversation", "c1").stdout)
    assert len(ls) == 2
    links = json.loads(_run("links", ls[0]["id"], "--home", h, "--json").stdout)
    assert {"type": "context_of", "target": ls[1]["id"]} in links["outgoing"]


def test_import_openai_messages_array_with_merge(h: str, home: MemoryHome, tmp_path: Path) -> None:
    f = tmp_path / "chat.json"
    f.write_text(
        json.dumps({"messages": [
            {"role": "user", "content": "Plan a trip to Kyoto."},
            {"role": "assistant", "content": [{"type": "text", "text": "Visit Inari early."}]},
        ]}),
        encoding="utf-8",
    )  # fmt: skip
    res = _run("import", str(f), "--home", h, "--merge", "--keyword-only")
    assert res.exit_code == 0, res.output
    assert _chunk_count(home) == 1
    hits = _hits("Kyoto Inari", "--home", h, "--json", "--keyword-only")
    assert "user: Plan a trip to Kyoto." in hits[0]["content"]


@pytest.mark.parametrize(
    "body",
    [
        '{"content": "fine"}\n{not json}\n',
        '{"content": "fine"}\n{"role": "user"}\n',
        '{"content": "fine"}\n{"content": "x", "timestamp": "last tuesday"}\n',
        '{"content": "fine"}\n["a list"]\n',
        '{"content": "fine"}\n{"content": "   "}\n',
        "",
        '{"content": "fine", "tags": ["bad tag"]}\n',
    ],
)
def test_malformed_import_writes_nothing(
    h: str, home: MemoryHome, tmp_path: Path, body: str
) -> None:
    f = tmp_path / "bad.jsonl"
    f.write_text(body, encoding="utf-8")
    res = _run("import", str(f), "--home", h, "--keyword-only")
    assert res.exit_code == 1
    assert "error:" in res.stderr
    assert _chunk_count(home) == 0


def test_import_binary_and_missing_files(h: str, tmp_path: Path) -> None:
    f = tmp_path / "bin.jsonl"
    f.write_bytes(b"\xff\xfe\x00garbage")
    assert _run("import", str(f), "--home", h).exit_code == 1
    assert _run("import", str(tmp_path / "nope.jsonl"), "--home", h).exit_code == 1


def test_recall_batch(h: str, tmp_path: Path) -> None:
    _run("remember", "The dog is called Biscuit.", "--home", h, "--keyword-only")
    _run("remember", "The car is a blue Volvo.", "--home", h, "--keyword-only")
    q = tmp_path / "q.jsonl"
    q.write_text(
        '{"id": 1, "query": "dog name"}\n{"id": "b", "query": "what car"}\n', encoding="utf-8"
    )
    res = _run("recall", "--batch", str(q), "--home", h, "-k", "1", "--json", "--keyword-only")
    assert res.exit_code == 0, res.output
    lines = [json.loads(x) for x in res.stdout.splitlines()]
    assert [x["id"] for x in lines] == [1, "b"]
    assert "Biscuit" in lines[0]["hits"][0]["content"] and "Volvo" in lines[1]["hits"][0]["content"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1}\n', encoding="utf-8")
    res = _run("recall", "--batch", str(bad), "--home", h, "--json")
    assert res.exit_code == 1 and "query" in res.stderr


def test_recall_argument_errors(h: str) -> None:
    assert _run("recall", "--home", h).exit_code == 1
    assert _run("recall", "x", "--home", h, "-k", "100000", "--keyword-only").exit_code == 1
    assert _run("recall", "x" * 5000, "--home", h, "--keyword-only").exit_code == 1
    assert _run("recall", "x", "--home", h, "--kind", "secrets").exit_code == 1
    assert _run("recall", "x", "--home", h, "--since", "soon").exit_code == 1


def test_chunks_show_rm_restore_hard(h: str, home: MemoryHome) -> None:
    out = json.loads(
        _run(
            "remember", "Secret lair is under the volcano.", "--home", h, "--json", "--keyword-only"
        ).stdout
    )
    cid = out[0]["id"]
    shown = json.loads(_run("chunks", "show", cid, "--home", h).stdout)
    assert shown["metadata"]["access_count"] == 1
    assert _run("chunks", "rm", cid, "--home", h).exit_code == 0
    assert _hits("volcano", "--home", h, "--json", "--keyword-only") == []
    assert len(json.loads(_run("chunks", "ls", "--home", h, "--json", "--deleted").stdout)) == 1
    assert _run("chunks", "restore", cid, "--home", h).exit_code == 0
    assert len(_hits("volcano", "--home", h, "--json", "--keyword-only")) == 1
    assert _run("chunks", "rm", cid, "--home", h, "--hard").exit_code == 0
    assert _chunk_count(home) == 0
    res = _run("chunks", "show", cid, "--home", h)
    assert res.exit_code == 1 and "no chunk" in res.stderr
    res = _run("chunks", "show", "../../../etc/passwd", "--home", h)
    assert res.exit_code == 1 and "not a chunk id" in res.stderr


def test_manual_link_command(h: str) -> None:
    a = json.loads(
        _run("remember", "Coffee helps me focus.", "--home", h, "--json", "--keyword-only").stdout
    )[0]["id"]
    b = json.loads(
        _run("remember", "Coffee makes me jittery.", "--home", h, "--json", "--keyword-only").stdout
    )[0]["id"]
    assert _run("chunks", "link", b, "contradicts", a, "--home", h).exit_code == 0
    got = json.loads(_run("links", a, "--home", h, "--json").stdout)
    assert {"type": "contradicts", "source": b} in got["incoming"]
    assert _run("chunks", "link", b, "follows", a, "--home", h).exit_code == 1


def test_reindex_rebuilds_from_files(h: str, home: MemoryHome) -> None:
    _run("remember", "Rebuilt memories survive.", "--home", h, "--keyword-only")
    for s in ("-wal", "-shm"):
        Path(str(home.layout.index) + s).unlink(missing_ok=True)
    home.layout.index.write_bytes(b"garbage" * 1000)
    # A broken index is a broken cache: recall drops it and rebuilds from files.
    hits = _hits("survive", "--home", h, "--json", "--keyword-only")
    assert hits[0]["content"] == "Rebuilt memories survive."
    home.layout.index.unlink()
    res = _run("reindex", "--home", h, "--keyword-only")
    assert res.exit_code == 0, res.output
    assert "1 chunks" in res.stdout
    hits = _hits("survive", "--home", h, "--json", "--keyword-only")
    assert hits[0]["content"] == "Rebuilt memories survive."


def test_hybrid_recall_with_embeddings(h: str) -> None:
    from memagent.embeddings import embeddings_unavailable_reason

    if embeddings_unavailable_reason() is not None:
        pytest.skip("embeddings not installed")
    _run("remember", "I adopted a golden retriever last spring.", "--home", h)
    _run("remember", "The quarterly report is due Friday.", "--home", h)
    hits = _hits("what pet do I have", "--home", h, "--json", "--kind", "chunk")
    assert "retriever" in hits[0]["content"]
    assert hits[0]["why"]["mode"] == "hybrid" and "dense" in hits[0]["why"]


def test_commands_without_home_fail_cleanly(tmp_path: Path) -> None:
    res = _run("recall", "x", "--home", str(tmp_path / "none"))
    assert res.exit_code == 1 and "memagent init" in res.stderr


def test_oversized_input_is_refused_and_nothing_written(
    h: str, home: MemoryHome, tmp_path: Path
) -> None:
    huge = "word " * (4 * 1024 * 1024)  # 20 MB on stdin
    res = _run("remember", "--home", h, "--keyword-only", input=huge)
    assert res.exit_code == 1 and "larger than" in res.stderr
    f = tmp_path / "big.jsonl"
    lines = [json.dumps({"content": "fine"}), json.dumps({"content": "x" * (2 * 1024 * 1024)})]
    f.write_text("\n".join(lines), encoding="utf-8")
    res = _run("import", str(f), "--home", h, "--keyword-only")
    assert res.exit_code == 1 and "limit" in res.stderr
    assert _chunk_count(home) == 0


def test_chunks_edit_history_undo(h: str, home: MemoryHome) -> None:
    res = _run("remember", "The boiler code is 1234.", "--home", h, "--json", "--keyword-only")
    cid = json.loads(res.stdout)[0]["id"]
    res = _run(
        "chunks", "edit", cid, "--home", h, "--text", "The boiler code is 9876.", "-t", "house"
    )
    assert res.exit_code == 0, res.output
    assert "undo with" in res.stdout
    hits = _hits("boiler 9876", "--home", h, "--json", "--keyword-only")
    assert hits[0]["id"] == cid and hits[0]["tags"] == ["house"]
    res = _run("chunks", "history", cid, "--home", h)
    assert res.exit_code == 0 and "1234" in res.stdout and "9876" in res.stdout
    res = _run("chunks", "undo", cid, "--home", h, "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["after"]["content"] == "The boiler code is 1234."
    edits = json.loads(_run("chunks", "history", cid, "--home", h, "--json").stdout)
    assert [e["op"] for e in edits] == ["update", "undo"] and edits[0]["undone"] is True


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--text", ""],
        ["--tag", "two words"],
        ["--tag", "a", "--no-tags"],
        ["--type", "rumour"],
        ["--text", "x" * 600_000],
    ],
)
def test_chunks_edit_refuses_bad_input(h: str, home: MemoryHome, args: list[str]) -> None:
    res = _run("remember", "Keep me.", "--home", h, "--json", "--keyword-only")
    cid = json.loads(res.stdout)[0]["id"]
    path = next(home.layout.chunks.rglob(f"{cid}.json"))
    before = path.read_bytes()
    res = _run("chunks", "edit", cid, "--home", h, *args)
    assert res.exit_code != 0
    assert "Traceback" not in res.output
    assert path.read_bytes() == before


def test_chunks_edit_and_undo_hostile_ids(h: str) -> None:
    for args in (
        ["chunks", "edit", "../../etc/passwd", "--text", "x"],
        ["chunks", "undo", "--edit", "../x"],
        ["chunks", "undo", "chunk-20240101-000000000000"],
        ["chunks", "history", "chunk-../x"],
    ):
        res = _run(*args, "--home", h)
        assert res.exit_code != 0 and "Traceback" not in res.output, args


def _messages(n: int, *, ids: bool) -> str:
    return "".join(
        json.dumps(
            {"content": f"Fact number {i} about the garden.", "timestamp": "2024-05-01T10:00:00Z"}
            | ({"id": f"m{i}"} if ids else {"conversation_id": "c9"})
        )
        + "\n"
        for i in range(n)
    )


def _chunk_files(h: str) -> list[Path]:
    return list((Path(h) / "chunks").rglob("chunk-*.json"))


@pytest.mark.parametrize("ids", [True, False])
def test_import_is_idempotent(home: MemoryHome, tmp_path: Path, ids: bool) -> None:
    h = str(home.root)
    f = tmp_path / "m.jsonl"
    f.write_text(_messages(5, ids=ids) + _messages(5, ids=ids), encoding="utf-8")  # dupes too
    res = _run("import", str(f), "--home", h, "--keyword-only")
    assert res.exit_code == 0, res.output
    assert "as 5 chunks (5 already imported, skipped)" in res.stdout
    res = _run("import", str(f), "--home", h, "--keyword-only")
    assert res.exit_code == 0 and "as 0 chunks (10 already imported" in res.stdout
    f.write_text(_messages(7, ids=ids), encoding="utf-8")  # two new ones
    res = _run("import", str(f), "--home", h, "--keyword-only")
    assert "as 2 chunks (5 already imported" in res.stdout
    assert len(_chunk_files(h)) == 7
    merged = tmp_path / "merged.jsonl"
    merged.write_text(_messages(3, ids=ids), encoding="utf-8")
    for _ in range(2):
        assert _run("import", str(merged), "--home", h, "--keyword-only", "--merge").exit_code == 0
    assert len(_chunk_files(h)) == 8  # one merged chunk, once


def test_interrupted_import_says_how_far_and_a_rerun_completes(
    home: MemoryHome, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memagent.memory.chunks import ChunkStore

    h = str(home.root)
    f = tmp_path / "m.jsonl"
    f.write_text(_messages(600, ids=False), encoding="utf-8")
    real = ChunkStore.create_many
    calls = {"n": 0}

    def interrupted(self: ChunkStore, drafts: Any, **kw: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 2:  # the second batch: 10 written, then Ctrl-C
            real(self, list(drafts)[:10], **kw)
            raise KeyboardInterrupt
        return real(self, drafts, **kw)

    monkeypatch.setattr(ChunkStore, "create_many", interrupted)
    res = _run("import", str(f), "--home", h, "--keyword-only")
    assert res.exit_code == 130
    assert "imported 266 of 600" in res.stderr  # 256 + 10, counted from the store
    monkeypatch.setattr(ChunkStore, "create_many", real)
    res = _run("import", str(f), "--home", h, "--keyword-only")
    assert res.exit_code == 0 and "as 334 chunks (266 already imported" in res.stdout
    contents = [json.loads(p.read_text())["content"] for p in _chunk_files(h)]
    assert len(contents) == 600 == len(set(contents))


@pytest.mark.slow
def test_import_killed_mid_way_then_rerun_has_no_duplicates(
    home: MemoryHome, tmp_path: Path
) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    h = str(home.root)
    f = tmp_path / "m.jsonl"
    f.write_text(_messages(3000, ids=True), encoding="utf-8")
    cmd = [sys.executable, "-m", "memagent", "import", str(f), "--home", h, "--keyword-only"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while len(_chunk_files(h)) < 50 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    first = len(_chunk_files(h))
    assert first >= 50
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    contents = [json.loads(p.read_text())["content"] for p in _chunk_files(h)]
    assert len(contents) == 3000 == len(set(contents))
