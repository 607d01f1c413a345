from __future__ import annotations

import asyncio
import inspect
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from memagent.actions import (
    MODELS_BY_NAME,
    SPECS,
    WHOLE_VAULT,
    VarRef,
    arun_actions,
    overlaps,
    plan_actions,
    resources_of,
    run_action,
    run_actions,
    validate_actions,
)
from memagent.core import InvalidInput, MemoryHome, read_ops
from memagent.memory.vault import Vault


@pytest.fixture(params=["files", "postgres"])
def vault(request: pytest.FixtureRequest, home: MemoryHome) -> Iterator[Vault]:
    """Every runner test runs on both backends: a home's files, and one user's
    notes in PostgreSQL holding the same starting notes."""
    local = Vault(home)
    if request.param == "files":
        yield local
        return
    from memagent.postgres import Database, PgVault

    db = Database.open(request.getfixturevalue("pg_url"), max_size=4)
    pg = PgVault(db, f"r-{uuid.uuid4().hex[:10]}")
    for rel, kind in list(local._walk("")):
        if kind == "dir":
            pg.mkdir(rel)
        else:
            pg.create(rel, local.read(rel))
    yield pg
    db.close()


def run(vault: Vault, actions: list[dict[str, Any]]) -> dict[str, Any]:
    result = run_actions(vault, validate_actions(actions)).to_json()
    json.dumps(result)
    return result


def values(result: dict[str, Any]) -> list[Any]:
    return [r.get("value", r.get("error")) for r in result["results"]]


def test_every_action_end_to_end(vault: Vault) -> None:
    result = run(
        vault,
        [
            {"action": "create_dir", "path": "people"},
            {"action": "check_dir_exists", "path": "people"},
            {
                "action": "create_file",
                "path": "people/ann.md",
                "content": "# Ann\n\n## Job\nChef\n",
            },
            {"action": "check_file_exists", "path": "people/ann.md"},
            {
                "action": "update_file",
                "path": "people/ann.md",
                "old_content": "Chef",
                "new_content": "Head chef",
            },
            {"action": "append_file", "path": "people/ann.md", "content": "Likes figs"},
            {"action": "read_file", "path": "people/ann.md"},
            {"action": "get_size", "path": "people/ann.md"},
            {"action": "list_files", "path": "people"},
            {"action": "go_to_link", "link": "[[Ann#Job]]"},
            {"action": "search_files", "query": "figs"},
            {"action": "delete_file", "path": "people/ann.md"},
            {"action": "check_file_exists", "path": "people/ann.md"},
        ],
    )
    assert result["ok"] and result["failed"] == 0 and result["succeeded"] == 13
    v = values(result)
    assert v[0] == {"path": "people/", "created": True}
    assert v[1] is True and v[3] is True
    assert v[6] == "# Ann\n\n## Job\nHead chef\nLikes figs"
    assert v[7] == len(v[6].encode())
    assert v[8]["entries"] == ["people/ann.md"]
    assert v[9]["content"] == "## Job\nHead chef\nLikes figs"
    assert v[10]["matches"][0]["path"] == "people/ann.md"
    assert v[11] == {"path": "people/ann.md", "deleted": True}
    assert v[12] is False
    assert [r["action"] for r in result["results"]][:2] == ["create_dir", "check_dir_exists"]


def test_failures_do_not_stop_independent_actions(vault: Vault, home: MemoryHome) -> None:
    result = run(
        vault,
        [
            {"action": "read_file", "path": "missing.md"},
            {"action": "create_file", "path": "../escape.md", "content": "x"},
            {"action": "create_file", "path": "ok.md", "content": "fine"},
        ],
    )
    assert not result["ok"] and result["failed"] == 2 and result["succeeded"] == 1
    r0, r1, r2 = result["results"]
    assert r0 == {"index": 0, "action": "read_file", "ok": False, "error": r0["error"]}
    assert "does not exist" in r0["error"] and "'..'" in r1["error"]
    assert r2["ok"] and vault.read("ok.md") == "fine"
    assert not (home.root / "escape.md").exists()


def test_var_passes_values_and_keys(vault: Vault) -> None:
    result = run(
        vault,
        [
            {"action": "read_file", "path": "user.md", "assign_to": "me"},
            {"action": "create_file", "path": "backup.md", "content": {"$var": "me"}},
            {"action": "list_files", "assign_to": "ls"},
            {"action": "get_size", "path": {"$var": "ls.entries.0"}},
            {"action": "create_file", "path": "p.md", "content": "x", "assign_to": "made"},
            {"action": "read_file", "path": {"$var": "made.path"}},
        ],
    )
    assert result["ok"], result
    assert vault.read("backup.md") == vault.read("user.md")
    assert result["results"][0]["assign_to"] == "me"
    assert values(result)[3] == vault.size("backup.md")
    assert values(result)[5] == "x"


def test_var_of_failed_action_fails_and_says_why(vault: Vault) -> None:
    result = run(
        vault,
        [
            {"action": "read_file", "path": "nope.md", "assign_to": "src"},
            {"action": "create_file", "path": "copy.md", "content": {"$var": "src"}},
            {"action": "create_file", "path": "other.md", "content": "independent"},
        ],
    )
    err = result["results"][1]["error"]
    assert '$var "src" comes from action 0 (read_file), which failed' in err
    assert "does not exist" in err
    assert not vault.exists("copy.md") and vault.exists("other.md")


def test_var_with_wrong_type_or_missing_key(vault: Vault) -> None:
    result = run(
        vault,
        [
            {"action": "list_files", "assign_to": "ls"},
            {"action": "create_file", "path": "a.md", "content": {"$var": "ls"}},
            {"action": "read_file", "path": {"$var": "ls.nothing"}},
            {"action": "read_file", "path": {"$var": "ls.entries.99"}},
        ],
    )
    errs = values(result)[1:]
    assert 'field "content": Input should be a valid string (got an object)' in errs[0]
    assert 'has no "nothing"' in errs[1] and 'has no "99"' in errs[2]
    assert not vault.exists("a.md")


def test_run_action_is_one_plan_step(vault: Vault) -> None:
    assert run_action(vault, "get_size", {"path": "user.md"}) == vault.size("user.md")
    with pytest.raises(InvalidInput, match="unknown action"):
        run_action(vault, "format_disk", {})
    with pytest.raises(ValidationError):
        run_action(vault, "read_file", {"path": 5})


def test_bad_max_results(vault: Vault) -> None:
    result = run(vault, [{"action": "search_files", "query": "x", "max_results": 0}])
    assert "at least 1" in result["results"][0]["error"]


def test_runner_writes_go_through_storage_log(home: MemoryHome) -> None:
    run(Vault(home), [{"action": "create_file", "path": "logged.md", "content": "x"}])
    assert [r.path for r in read_ops(home.layout.ops_log)][-1] == "vault/logged.md"


def test_each_spec_function_matches_its_model() -> None:
    assert set(SPECS) == set(MODELS_BY_NAME)
    for name, spec in SPECS.items():
        params = list(inspect.signature(spec.func).parameters)
        fields = [f for f in spec.model.model_fields if f not in ("action", "assign_to")]
        assert params[0] == "vault" and sorted(params[1:]) == sorted(fields), name


def test_resources() -> None:
    assert resources_of("read_file", {"path": "./user.md"}) == (("vault:user.md",), ())
    assert resources_of("update_file", {"path": "a/b.md"}) == ((), ("vault:a/b.md",))
    assert resources_of("list_files", {"path": "entities"}) == (
        ("vault:entities", "vault:entities/"),
        (),
    )
    assert resources_of("list_files", {"path": ""}) == ((WHOLE_VAULT,), ())
    assert resources_of("search_files", {"query": "x"}) == ((WHOLE_VAULT,), ())
    assert resources_of("go_to_link", {"link": "[[x]]"}) == ((WHOLE_VAULT,), ())
    assert resources_of("create_dir", {"path": "p"}) == ((), ("vault:p", "vault:p/"))
    assert resources_of("read_file", {"path": "../x"}) == ((WHOLE_VAULT,), ())
    assert resources_of("delete_file", {"path": VarRef(var="r")}) == ((), (WHOLE_VAULT,))


PAIRS = [
    ("vault:a.md", "vault:a.md", True),
    ("vault:a.md", "vault:b.md", False),
    ("vault:entities/", "vault:entities/x.md", True),
    ("vault:entities/", "vault:entities2/x.md", False),
    ("vault:e/", "vault:e/f/", True),
    ("vault:", "vault:anything", True),
    ("vault:x.md", "vault:", True),
    ("vault:", "profile:x", False),
]


@pytest.mark.parametrize(("a", "b", "want"), PAIRS)
def test_overlaps(a: str, b: str, want: bool) -> None:
    assert overlaps(a, b) is want and overlaps(b, a) is want


def test_overlaps_agrees_with_the_planner() -> None:
    from memagent.plan import resources_overlap

    for a, b, _ in PAIRS:
        assert overlaps(a, b) is resources_overlap(a, b)


def test_conflicting_actions_overlap_and_independent_ones_do_not() -> None:
    def conflict(x: tuple[str, dict[str, Any]], y: tuple[str, dict[str, Any]]) -> bool:
        rx, wx = resources_of(*x)
        ry, wy = resources_of(*y)
        return any(overlaps(a, b) for a in wx for b in (*ry, *wy)) or any(
            overlaps(a, b) for a in wy for b in rx
        )

    create = ("create_file", {"path": "entities/x.md", "content": ""})
    assert conflict(create, ("list_files", {"path": "entities"}))
    assert conflict(create, ("go_to_link", {"link": "[[x]]"}))
    assert conflict(create, ("read_file", {"path": "./entities//x.md"}))
    assert conflict(("create_dir", {"path": "p"}), ("create_file", {"path": "p", "content": ""}))
    assert not conflict(create, ("read_file", {"path": "user.md"}))
    assert not conflict(("read_file", {"path": "a.md"}), ("list_files", {"path": "entities"}))


def test_a_batch_of_independent_actions_runs_in_parallel_on_either_backend(vault: Vault) -> None:
    """Two independent reads plan as two parallel steps, so they go through the
    shared pool, which asks the vault who owns the batch (not a file attribute)."""
    vault.create("a.md", "alpha")
    vault.create("b.md", "beta")
    actions = validate_actions(
        [{"action": "read_file", "path": "a.md"}, {"action": "read_file", "path": "b.md"}]
    )
    assert plan_actions(vault, actions).max_parallelism == 2
    assert values(run(vault, [a.model_dump(exclude_none=True) for a in actions])) == [
        "alpha",
        "beta",
    ]
    assert asyncio.run(arun_actions(vault, actions)).ok


def test_owner_keys_separate_homes_and_database_users(vault: Vault, tmp_path: Path) -> None:
    other = MemoryHome.open(tmp_path / "other")
    assert vault.owner_key() == type(vault).owner_key(vault)
    assert vault.owner_key() != Vault(other).owner_key()


def test_a_batch_rolls_back_on_either_backend(vault: Vault, home: MemoryHome) -> None:
    from memagent.agent.memory import JournaledVault, journaled_vault
    from memagent.postgres import PgVault
    from memagent.stores import Stores

    journal: JournaledVault = (
        journaled_vault(Stores(None, user=vault.user, db=vault.db), "agent")
        if isinstance(vault, PgVault)
        else JournaledVault(home)
    )
    journal.begin()
    before = journal.read("user.md")
    result = run(
        journal,
        [
            {"action": "create_file", "path": "x.md", "content": "one"},
            {"action": "create_file", "path": "y.md", "content": "two"},
            {
                "action": "update_file",
                "path": "user.md",
                "old_content": before[:5],
                "new_content": "Z",
            },
            {"action": "read_file", "path": "x.md", "assign_to": "x"},
            {"action": "create_file", "path": "z.md", "content": {"$var": "x"}},
        ],
    )
    assert result["ok"] and journal.read("z.md") == "one"
    assert sorted(journal.rollback()) == ["user.md", "x.md", "y.md", "z.md"]
    assert journal.read("user.md") == before
    assert not any(journal.exists(p) for p in ("x.md", "y.md", "z.md"))
