from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from memagent.cli import app
from memagent.core import MemoryHome

FIXTURES = Path(__file__).parent / "fixtures" / "profile"
FOOD = "resource_user_food_prefs.json"
runner = CliRunner()


def cli(home: MemoryHome, *args: str, input: str | None = None) -> Any:
    return runner.invoke(app, ["profile", *args, "--home", str(home.root)], input=input)


def snapshot(home: MemoryHome) -> dict[str, bytes]:
    files = {p.name: p.read_bytes() for p in home.layout.profile.iterdir()}
    files["ops"] = home.layout.ops_log.read_bytes()
    return files


def test_apply_show_history_undo(home: MemoryHome) -> None:
    res = cli(home, "apply", "--file", str(FIXTURES / "ops_basic.json"))
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["ok"] and [o["status"] for o in out["outcomes"]] == [
        "applied",
        "applied",
        "no_change",
    ]
    shown = json.loads(cli(home, "show", "--json").stdout)
    assert shown[FOOD]["food"]["likes"][0]["item"] == "kung_pao_chicken"
    assert shown["resource_user_routine.json"]["whereabouts"]["current"][0]["expiry"]
    one = json.loads(cli(home, "show", "user_food_prefs", "--json").stdout)
    assert list(one) == [FOOD]
    text = cli(home, "show").stdout
    assert "  Likes: Kung pao chicken\n" in text and "food.likes" not in text
    assert "food.likes (1)" in cli(home, "show", "--tags").stdout
    hist = [
        json.loads(x)
        for x in cli(home, "history", "Kung Pao Chicken", "--json").stdout.splitlines()
    ]
    assert [h["change"] for h in hist] == ["append"]
    res = cli(home, "undo", "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["undoes"] == out["batch"]
    assert json.loads(cli(home, "show", "--json").stdout)[FOOD]["food"]["likes"] == []
    res = cli(home, "undo")
    assert res.exit_code == 1 and "nothing to undo" in res.stderr


def test_apply_from_stdin_and_dry_run(home: MemoryHome) -> None:
    ops = (FIXTURES / "ops_basic.json").read_text()
    before = snapshot(home)
    res = cli(home, "apply", "--file", "-", "--dry-run", input=ops)
    assert res.exit_code == 0 and json.loads(res.stdout)["batch"] is None
    assert snapshot(home) == before
    res = cli(home, "apply", "-f", "-", input=ops)
    assert res.exit_code == 0 and json.loads(res.stdout)["written"]


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ("{not json", "not valid JSON"),
        ('{"a": 1}', "expected a JSON list"),
        (
            '[{"operation": "append", "file": "resource_nope.json", "path": "a.b", '
            '"value": {"item": "x"}}]',
            "no profile resource",
        ),
        (
            '[{"operation": "append", "file": "resource_user_food_prefs.json", '
            '"path": "food.missing", "value": {"item": "x"}}]',
            "no section",
        ),
        (
            '[{"operation": "append", "file": "resource_user_food_prefs.json", '
            '"path": "food.likes", "value": {"item": 5}}]',
            "value.item",
        ),
        (
            '[{"operation": "append", "file": "resource_user_food_prefs.json", '
            '"path": "food.likes", "value": {"item": "x", "added": "2020-01-01"}}]',
            "added",
        ),
        (
            '[{"operation": "append", "file": "resource_user_food_prefs.json", '
            '"path": "food.likes", "value": {"item": "ok"}}, {"operation": "wat"}]',
            "operation 1",
        ),
        ("[" + ",".join(['{"operation": "no_change"}'] * 1001) + "]", "limit is 1000"),
    ],
)
def test_bad_batches_change_nothing(home: MemoryHome, payload: str, message: str) -> None:
    before = snapshot(home)
    res = cli(home, "apply", "-f", "-", input=payload)
    assert res.exit_code == 1
    out = json.loads(res.stdout)
    assert out["ok"] is False
    assert message in out["error"] and message in res.stderr
    assert snapshot(home) == before


def test_oversized_and_missing_ops_files(home: MemoryHome, tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    big.write_text("[" + " " * home.config.limits.max_file_bytes + "]")
    before = snapshot(home)
    res = cli(home, "apply", "-f", str(big))
    assert res.exit_code == 1 and "limits.max_file_bytes" in res.stderr
    res = cli(home, "apply", "-f", str(tmp_path / "none.json"))
    assert res.exit_code == 1 and "cannot read" in res.stderr
    assert snapshot(home) == before


def test_corrupt_resource_is_reported_not_overwritten(home: MemoryHome) -> None:
    path = home.layout.profile / FOOD
    path.write_text('{\n  "_metadata": {"resource_id": "user_food_prefs",\n')
    for args in (["show"], ["apply", "-f", str(FIXTURES / "ops_basic.json")], ["prune"]):
        res = cli(home, *args)
        assert res.exit_code == 1, args
        assert "profile/resource_user_food_prefs.json, line" in res.stderr
        assert "Traceback" not in res.output
    assert path.read_text().endswith('"user_food_prefs",\n')


def test_learn_with_a_scripted_model(home: MemoryHome) -> None:
    spec = f"scripted:{FIXTURES / 'learn_peanuts.json'}"
    res = cli(home, "learn", "I'm allergic to peanuts", "--model", spec, "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["ok"] and out["facts"][0] == {"kind": "allergy", "value": "peanuts", "name": ""}
    assert out["operations"][0]["file"] == "resource_user_health.json"
    shown = json.loads(cli(home, "show", "user_health", "--json").stdout)
    assert shown["resource_user_health.json"]["health"]["allergies"][0]["item"] == "peanuts"
    res = cli(home, "learn", "I'm allergic to peanuts", "--model", spec)
    assert res.exit_code == 0 and "no_change" in res.stdout


def test_learn_says_what_the_kind_check_did_not_write(home: MemoryHome, tmp_path: Path) -> None:
    script = tmp_path / "promoted.json"
    extraction = {"facts": [{"kind": "medication", "value": "shift manager", "name": ""}]}
    script.write_text(json.dumps([json.dumps(extraction), json.dumps({"is": "no"})]))
    said = "I take shift manager duties seriously."
    res = cli(home, "learn", said, "--model", f"scripted:{script}")
    assert res.exit_code == 0, res.output
    assert "fact: medication: shift manager" in res.stdout
    assert "not written: Takes shift manager — the check: not a thing of its kind" in res.stdout
    assert "shift" not in json.dumps(json.loads(cli(home, "show", "--json").stdout))


def test_learn_files_a_taste_that_is_no_food_with_general_dislikes(
    home: MemoryHome, tmp_path: Path
) -> None:
    script = tmp_path / "horror.json"
    extraction = {"facts": [{"kind": "food_dislike", "value": "horror films", "name": ""}]}
    script.write_text(json.dumps([json.dumps(extraction), json.dumps({"is": "no"})]))
    res = cli(home, "learn", "I can't stand horror films.", "--model", f"scripted:{script}")
    assert res.exit_code == 0, res.output
    assert "not written" not in res.stdout
    shown = json.loads(cli(home, "show", "--json").stdout)
    prefs = shown["resource_user_general_prefs.json"]["preferences"]
    assert [i["display"] for i in prefs["dislikes"]] == ["Dislikes horror films"]
    assert "horror" not in json.dumps(shown.get("resource_user_food.json", {}))


def test_learn_says_which_held_line_it_changed(home: MemoryHome, tmp_path: Path) -> None:
    seed = tmp_path / "seed.json"
    extraction = {"facts": [{"kind": "medication", "value": "sertraline 50mg", "name": ""}]}
    seed.write_text(json.dumps([json.dumps(extraction), json.dumps({"is": "yes"})]))
    said = "I take sertraline 50mg every morning."
    assert cli(home, "learn", said, "--model", f"scripted:{seed}").exit_code == 0
    script = tmp_path / "upped.json"
    replies = [{"facts": []}, {"ended": "yes"}, {"now": "Takes sertraline 100mg"}]
    script.write_text(json.dumps([json.dumps(r) for r in replies]))
    said = "GP upped my sertraline to 100mg today, we'll see how it goes"
    res = cli(home, "learn", said, "--model", f"scripted:{script}")
    assert res.exit_code == 0, res.output
    assert "nothing to remember" not in res.stdout
    assert "changed: Takes sertraline 50mg → Takes sertraline 100mg" in res.stdout
    shown = json.loads(cli(home, "show", "--json").stdout)
    held = shown["resource_user_health.json"]["health"]["medications"]
    assert [i["display"] for i in held] == ["Takes sertraline 100mg"]


def test_learn_errors_are_clean(home: MemoryHome, tmp_path: Path) -> None:
    script = tmp_path / "bad.json"
    script.write_text(json.dumps(["nope", "still nope"]))
    before = snapshot(home)
    res = cli(home, "learn", "I like tea", "--model", f"scripted:{script}")
    assert res.exit_code == 1 and "does not fit the schema" in res.stderr
    res = cli(home, "learn", "   ", "--model", f"scripted:{script}")
    assert res.exit_code == 1 and "empty" in res.stderr
    res = cli(home, "learn", "hi", "--model", "bogus-spec")
    assert res.exit_code == 1
    assert snapshot(home) == before


def test_prune_create_and_schema(home: MemoryHome) -> None:
    res = cli(home, "prune", "--json")
    assert res.exit_code == 0 and json.loads(res.stdout) == {"pruned": {}}
    res = cli(
        home,
        "create",
        "user_travel",
        "--tag",
        "travel",
        "--section",
        "trips.planned",
        "--section",
        "trips.done",
        "--exclusive",
        "trips.planned,trips.done",
    )
    assert res.exit_code == 0, res.output
    shown = json.loads(cli(home, "show", "user_travel", "--json").stdout)
    assert shown["resource_user_travel.json"]["trips"] == {"planned": [], "done": []}
    res = cli(home, "create", "user_travel", "--section", "x")
    assert res.exit_code == 1 and "already exists" in res.stderr
    for which in ("resource", "operation", "batch", "switchboard"):
        res = runner.invoke(app, ["profile", "schema", which])
        assert res.exit_code == 0
        assert json.loads(res.stdout)["$defs"]
    res = runner.invoke(app, ["profile", "schema", "nope"])
    assert res.exit_code == 1


def test_show_escapes_markup_and_unknown_resource(home: MemoryHome) -> None:
    payload = json.dumps(
        [
            {
                "operation": "append",
                "file": FOOD,
                "path": "food.likes",
                "value": {"item": "x", "display": "[bold red]boom[/]"},
            }
        ]
    )
    cli(home, "apply", "-f", "-", input=payload)
    assert "[bold red]boom[/]" in cli(home, "show", "user_food_prefs").stdout
    res = cli(home, "show", "nope")
    assert res.exit_code == 1 and "no profile resource" in res.stderr
    res = cli(home, "show", "../../etc")
    assert res.exit_code == 1 and "not a resource name" in res.stderr


def test_profile_without_home_is_clean(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "memagent", "profile", "show", "--home", str(tmp_path / "x")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1 and "memagent init" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_show_reads_like_a_profile(home: MemoryHome) -> None:
    assert "Your profile is empty" in cli(home, "show").stdout
    spec = f"scripted:{FIXTURES / 'learn_peanuts.json'}"
    assert cli(home, "learn", "I'm allergic to peanuts", "--model", spec).exit_code == 0
    text = cli(home, "show").stdout
    assert text.splitlines() == ["Health", "  Allergic to peanuts"]


def test_the_cli_loads_the_learning_rules_only_to_learn() -> None:
    """Start-up (every command) leaves the profile's learning rules unloaded: they
    compile hundreds of regexes; the first use of `learn` loads them."""
    code = (
        "import sys, memagent.cli.app, memagent.memory.profile as p\n"
        "rules = 'memagent.memory.profile.changes'\n"
        "print(rules in sys.modules)\n"
        "p.learn\n"
        "print(rules in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True"]
