"""The profile-learning bench: its sets load, the fresh held-out part runs only
when asked for, matching folds word endings, and a scripted run scores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench import profile_learn as pl

from memagent.memory.profile.models import Item
from memagent.memory.profile.revise import question


def test_the_sets_load_with_unique_ids_and_three_splits() -> None:
    scenarios = pl.load_set()
    ids = [s.id for s in scenarios]
    assert len(ids) == len(set(ids))
    by_split = {split: [s for s in scenarios if s.split == split] for split in pl.SPLITS}
    assert sum(len(s.steps) for s in by_split["fresh"]) >= 60
    assert sum(len(s.steps) for s in by_split["dev"] + by_split["held"]) >= 150
    assert set(pl.DEFAULT_SPLITS) == {"dev", "held"}  # fresh: only by name


def test_matching_folds_word_endings() -> None:
    item = pl.Stored("fitness.activities", "swimming", "Swimming", None)
    assert pl.matches(pl.Entry.parse("fitness.activities|routine.daily=swim"), item)
    assert not pl.matches(pl.Entry.parse("routine.daily=swim"), item)
    assert not pl.matches(pl.Entry.parse("fitness.activities=swim team"), item)


def test_a_scripted_run_on_two_dev_scenarios(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "figures.json"
    assert (
        pl.main(["--model", "scripted", "--split", "dev", "--limit", "2", "--json", str(out)]) == 0
    )
    rows = json.loads(out.read_text())
    assert rows[0]["model"] == "scripted" and "held" not in rows[0] and "fresh" not in rows[0]
    assert rows[0]["dev"]["statements"] >= 2
    assert "precision" in capsys.readouterr().out


BLIND_SET = """
- id: b-secret-1
  split: blind
  steps:
    - say: "I keep a zebra named Quixotic."
      tag: fact
      expect: ["personal.facts=pet zebra Quixotic"]
- id: b-secret-2
  split: blind
  steps:
    - say: "Hello there!"
      tag: none
"""


def test_a_blind_set_prints_figures_only_whatever_is_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "blind.yaml"
    path.write_text(BLIND_SET)
    log, out = tmp_path / "log.jsonl", tmp_path / "figures.json"
    argv = ["--set", str(path), "--split", "blind", "--verbose", "--log", str(log)]
    assert pl.main([*argv, "--json", str(out)]) == 0
    printed = capsys.readouterr()
    text = printed.out + printed.err + (log.read_text() if log.exists() else "")
    text += out.read_text()
    assert "blind" in printed.out and "precision" in printed.out
    for secret in ("zebra", "Quixotic", "Hello there", "b-secret"):
        assert secret not in text
    assert json.loads(out.read_text())[0]["blind"]["statements"] == 2


def test_a_blind_run_refuses_the_prompt_cache_and_a_set_without_that_split(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "blind.yaml"
    path.write_text(BLIND_SET)
    with pytest.raises(SystemExit):
        pl.main(["--set", str(path), "--split", "blind", "--cache", str(tmp_path / "c.jsonl")])
    with pytest.raises(SystemExit):
        pl.main(["--set", str(path), "--split", "dev"])
    bad = tmp_path / "bad.yaml"
    bad.write_text("- id: x\n  split: blind\n  steps: []\n")
    with pytest.raises(SystemExit):
        pl.main(["--set", str(bad), "--split", "blind"])
    err = capsys.readouterr().err
    assert "cache" in err and "no scenarios" in err and "cannot load" in err
    assert not (tmp_path / "c.jsonl").exists()


def test_the_check_option_and_the_stand_in_answer_it(tmp_path: Path) -> None:
    """`--keep-at` turns the per-line check on; the scripted stand-in says yes to a
    line the expected profile holds, so nothing expected is lost to it."""
    out = tmp_path / "figures.json"
    argv = ["--model", "scripted", "--split", "dev", "--limit", "3", "--json", str(out)]
    assert pl.main([*argv, "--keep-at", "0.5"]) == 0
    rows = json.loads(out.read_text())[0]
    assert rows["reading"]["keep_at"] == 0.5
    assert rows["dev"]["recall"][0] == 1.0
    with pytest.raises(SystemExit):
        pl.main([*argv, "--keep-at", "1.5"])


def test_the_check_bench_labels_lines_and_chooses_leaving_a_set_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bench import profile_factcheck as fc

    sets = []
    for name, say in (("one", "I keep a zebra named Quixotic."), ("two", "I live in Porto.")):
        path = tmp_path / f"{name}.yaml"
        path.write_text(
            f'- id: s-{name}\n  split: dev\n  steps:\n    - say: "{say}"\n      tag: fact\n'
            '      expect: ["personal.facts=pet zebra Quixotic", "personal.facts=home Porto"]\n'
        )
        sets.append(path)
    pairs = tmp_path / "pairs.jsonl"
    argv = ["--model", "scripted", "--pairs", str(pairs), "--wording", "true"]
    assert fc.main([*argv, *(a for p in sets for a in ("--set", str(p)))]) == 0
    got = [json.loads(line) for line in pairs.read_text().splitlines()]
    assert [(r["set"], r["line"], r["good"]) for r in got] == [
        ("one", "Zebra named Quixotic", True),
        ("two", "Lives in Porto", True),
    ]
    assert all(r["true"] == 1.0 for r in got)
    assert "leave one set out" in capsys.readouterr().out


def test_the_check_bench_asks_the_kind_question_only_of_typed_lists(tmp_path: Path) -> None:
    from bench import profile_factcheck as fc

    path = tmp_path / "one.yaml"
    path.write_text(
        '- id: s-1\n  split: dev\n  steps:\n    - say: "I love sushi. I live in Porto."\n'
        '      tag: fact\n      expect: ["food.likes=sushi", "personal.facts=home Porto"]\n'
    )
    pairs = tmp_path / "pairs.jsonl"
    argv = ["--model", "scripted", "--pairs", str(pairs), "--wording", "kind", "--set", str(path)]
    assert fc.main(argv) == 0
    got = {r["line"]: r["kind"] for r in map(json.loads, pairs.read_text().splitlines())}
    assert got == {"Likes sushi": 1.0, "Lives in Porto": None}  # homes are not asked


def test_the_stand_in_ends_a_like_whose_dislike_the_step_allows() -> None:
    """A "maybe" dislike of X does not keep the held "Likes X": the stand-in answers the
    stored-line question as a capable model would, by the line's taste as well as its words."""
    step = {"say": "I'm done with beetroot juice", "tag": "negation"}
    scn = pl.Scenario.model_validate(
        {
            "id": "neg",
            "split": "dev",
            "given": ["drink.likes=beetroot juice"],
            "steps": [{**step, "maybe": ["drink.dislikes=beetroot"]}],
        }
    )
    llm = pl.oracle_llm([scn])
    liked = Item(item="beetroot_juice", display="Likes beetroot juice", added="x")
    disliked = Item(item="beetroot_juice", display="Dislikes beetroot juice", added="x")
    assert llm.yes_probability(question(step["say"], liked)).p_yes == 1.0
    assert llm.yes_probability(question(step["say"], disliked)).p_yes == 0.0


def test_wrong_items_are_counted_once_per_scenario_by_the_list_they_went_to() -> None:
    def step(scenario: str, tag: str, wrong: list[str]) -> pl.StepOutcome:
        return pl.StepOutcome(scenario, "dev3", tag, 0, 0, 0, len(wrong), True, False, 0, 0,
                              0.1, 1, wrong=wrong)  # fmt: skip

    outcomes = [
        step("s1", "none", ["food.likes: Likes crisps"]),
        step("s1", "none", ["food.likes: Likes crisps"]),  # still stored: counted once
        step("s2", "hostile", ["personal.facts: Name: Jenna", "food.likes: Likes toffee"]),
        step("s3", "fact", ["routine.daily: Turn on focus mode"]),
    ]
    assert pl._wrong_lists(outcomes, none_lines=True) == "food.likes 2, personal.facts 1"
    assert pl._wrong_lists(outcomes, none_lines=False) == "routine.daily 1"
    assert pl._wrong_lists([], none_lines=True) == "-"
    assert "crisps" not in pl._digest("food.likes: Likes crisps")
