"""Each action is declared once, and every registered action is available
everywhere the declaration promises: in the JSON Schema, as JSON (parsed and
run), in Python mode (a sandbox function giving the same value), and in the
journal that rolls a failed batch back, on files and in PostgreSQL.

The tests walk `SPECS`, so an action added later is checked with no new test:
its model's `example` must run on `world` (below) from a fresh copy.
"""

from __future__ import annotations

import inspect
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar, Literal

import pytest

from memagent.actions import (
    ACTION_MODELS,
    MODELS_BY_NAME,
    SPECS,
    ActionList,
    BaseAction,
    PathField,
    action,
    action_json_schema,
    parse_response,
    run_actions,
    vault_tools,
)
from memagent.actions._models import NOT_ARGUMENTS
from memagent.agent.acting import run_action_batch
from memagent.agent.memory import MemoryAccess, journaled_vault
from memagent.agent.tools import ToolRegistry
from memagent.core import MemoryHome
from memagent.memory.vault import JournaledVault, Vault
from memagent.sandbox import Session
from memagent.stores import Stores

NAMES = list(SPECS)
JANE = "# Jane Doe\n\nColleague.\n\n## Work\nLeads Atlas.\n"


def world(vault: Vault) -> Vault:
    """The notes every action's example runs on: `user.md` with a People
    section, a note titled Jane Doe (not where create_file's example writes),
    and an old note to delete."""
    vault.update("user.md", vault.read("user.md"), "# Me\n\n## People\n")
    vault.create("people/jane.md", JANE)
    vault.create("entities/old.md", "gone soon\n")
    return vault


def snapshot(vault: Vault) -> dict[str, str | None]:
    """Every entry of the vault: a file's text, None for a folder."""
    entries = vault.list_dir("", recursive=True).entries
    return {e: None if e.endswith("/") else vault.read(e) for e in entries}


@pytest.fixture
def fresh(home: MemoryHome) -> Vault:
    return world(Vault(home))


@pytest.fixture(params=["files", "postgres"])
def journaled(request: pytest.FixtureRequest, home: MemoryHome) -> Iterator[JournaledVault]:
    """A journaled vault holding `world`, on a home's files or in PostgreSQL."""
    if request.param == "files":
        yield world(JournaledVault(home))
        return
    from memagent.postgres import Database

    db = Database.open(request.getfixturevalue("pg_url"), max_size=4)
    vault = journaled_vault(Stores(None, user=f"g-{uuid.uuid4().hex[:10]}", db=db), "agent")
    vault.ensure_starters()  # type: ignore[attr-defined]
    yield world(vault)  # type: ignore[misc]
    db.close()


def args_of(name: str) -> dict[str, Any]:
    example = dict(SPECS[name].model.example)
    return {k: v for k, v in example.items() if k not in NOT_ARGUMENTS}


def test_the_registry_is_the_one_list_of_actions() -> None:
    assert NAMES == list(MODELS_BY_NAME) == [SPECS[n].model.example["action"] for n in NAMES]
    assert [SPECS[n].model for n in NAMES] == list(ACTION_MODELS)
    assert set(vault_tools(Vault.__new__(Vault))) == set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_every_action_is_in_the_json_schema(name: str) -> None:
    schema = action_json_schema()
    mapping = schema["items"]["discriminator"]["mapping"]
    model = SPECS[name].model
    assert mapping[name] == f"#/$defs/{model.__name__}"
    props = schema["$defs"][model.__name__]["properties"]
    assert props["action"]["const"] == name
    assert set(props) == set(model.model_fields)
    assert ActionList.validate_python([model.example])[0] == model.model_validate(model.example)


@pytest.mark.parametrize("name", NAMES)
def test_every_action_parses_and_runs_as_json(name: str, fresh: Vault) -> None:
    example = SPECS[name].model.example
    parsed = parse_response(f"<actions>[{SPECS[name].model.example_json()}]</actions>")
    assert parsed.error is None and [type(a) for a in parsed.actions] == [SPECS[name].model]
    result = run_actions(fresh, parsed.actions).to_json()
    assert result["ok"], (example, result)
    assert result["results"][0]["action"] == name


@pytest.mark.parametrize("name", NAMES)
def test_every_action_is_a_python_function_with_the_same_value(
    name: str, home: MemoryHome, tmp_path: Path
) -> None:
    spec = SPECS[name]
    twin = world(Vault(_init(tmp_path / "twin")))
    example = spec.model.model_validate(spec.model.example)
    expected = run_actions(twin, [example]).to_json()["results"][0]["value"]
    vault = world(Vault(home))
    call = f"{name}({', '.join(f'{k}={v!r}' for k, v in args_of(name).items())})"
    ran = Session(tools=vault_tools(vault)).run(call)
    assert ran.error is None, (call, ran.error)
    assert ran.result == expected
    assert snapshot(vault) == snapshot(twin)
    fn = vault_tools(vault)[name]
    fields = [f for f in spec.model.model_fields if f not in NOT_ARGUMENTS]
    assert list(inspect.signature(fn).parameters) == fields
    assert fn.__doc__ == spec.doc


def _init(path: Path) -> MemoryHome:
    from memagent.setup import init_home

    home = MemoryHome.open(path)
    init_home(home)
    return home.require()


@pytest.mark.parametrize("name", NAMES)
def test_every_action_rolls_back_in_a_failed_batch(name: str, journaled: JournaledVault) -> None:
    before = snapshot(journaled)
    journaled.begin()
    batch = parse_response(
        f"<actions>[{SPECS[name].model.example_json()}, "
        '{"action": "read_file", "path": "missing.md"}]</actions>'
    ).actions
    result = run_actions(journaled, batch).to_json()
    assert result["results"][0]["ok"] and not result["results"][1]["ok"]
    journaled.rollback()
    assert snapshot(journaled) == before


def test_folders_made_on_the_way_are_removed_by_rollback(journaled: JournaledVault) -> None:
    before = snapshot(journaled)
    journaled.begin()
    journaled.create("new/deep/x.md", "x")
    journaled.mkdir("people/made/inner")
    journaled.append("entities/more/y.md", "y")
    assert {"new/", "new/deep/", "people/made/", "entities/more/"} <= set(snapshot(journaled))
    assert sorted(journaled.rollback()) == ["entities/more/y.md", "new/deep/x.md"]
    assert snapshot(journaled) == before


def test_the_agents_batch_of_every_action_is_undone_whole(home: MemoryHome) -> None:
    memory = MemoryAccess(home, embeddings=False)
    try:
        world(memory.vault)
        before = snapshot(memory.vault)
        # what only reads first: go_to_link's [[Jane Doe]] before create_file's jane_doe.md
        # (an example may fail after another's change; the batch is undone all the same)
        raw = [dict(SPECS[n].model.example) for n in sorted(NAMES, key=lambda n: SPECS[n].changes)]
        raw.append({"action": "read_file", "path": "missing.md"})
        result = run_action_batch(raw, ToolRegistry(), memory)
        assert not result.ok and result.writes and result.results is not None
        assert len(result.results) == len(NAMES) + 1 and not result.results[-1].ok
        assert set(result.rolled_back) >= {"user.md", "entities/jane_doe.md", "entities/old.md"}
        assert snapshot(memory.vault) == before
        doc = result.to_json()
        assert list(doc) == ["ok", "applied", "rolled_back", "error", "results", "writes"]
    finally:
        memory.close()


def test_an_operation_added_later_is_journaled_through_the_hooks(home: MemoryHome) -> None:
    """The journal knows no public method: an operation written only against the
    storage hooks (here, removing an empty folder) is undone like the rest."""

    class WithRmdir(JournaledVault):
        def rmdir(self, path: str) -> None:
            with self._lock():
                self._remove_dir(self.locate(path), "rmdir")

    vault = WithRmdir(home)
    vault.mkdir("empty/inner")
    before = snapshot(vault)
    vault.begin()
    vault.rmdir("empty/inner")
    vault.create("empty/new.md", "x")
    assert "empty/inner/" not in snapshot(vault)
    assert vault.rollback() == ["empty/new.md"]
    assert snapshot(vault) == before


class _Toy(BaseAction):
    """Not registered: used to check the declaration rules."""

    example: ClassVar[dict[str, str]] = {"action": "toy", "path": "user.md"}
    action: Literal["toy"]
    path: PathField


def test_a_declaration_must_match_its_model() -> None:
    def not_toy(vault: Vault, *, path: str) -> str:
        return path

    def toy(vault: Vault, *, wrong: str) -> str:
        return wrong

    def toy_resources(vault: Vault, *, path: str) -> str:
        return path

    toy_resources.__name__ = "toy"
    with pytest.raises(TypeError, match="named 'not_toy'"):
        action(_Toy)(not_toy)
    with pytest.raises(TypeError, match=r"takes the fields \['path'\]"):
        action(_Toy)(toy)
    with pytest.raises(TypeError, match="resource 'file:nope'"):
        action(_Toy, reads=("file:nope",))(toy_resources)
    with pytest.raises(TypeError, match="declared twice"):
        action(MODELS_BY_NAME["read_file"])(_renamed("read_file"))
    assert "toy" not in SPECS


def _renamed(name: str) -> Any:
    def fn(vault: Vault, *, path: str) -> str:
        return path

    fn.__name__ = name
    return fn
