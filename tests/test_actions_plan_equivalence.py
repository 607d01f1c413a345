"""A batch run as a plan gives exactly the results and files of running it one
action at a time.

Random batches over a small vault with clashing names (a file `d` and folder
`d/`, a link to a file and a link to a folder, case variants), `$var`
references (to failed actions, to reused names, to names never assigned) are
run twice on identical vaults: by `run_actions` (the plan, concurrently) and by
`run_actions_in_order`. The planned vault sleeps a random moment around every
file read and write, so a missing ordering edge shows up as a different result
or file.
"""

from __future__ import annotations

import os
import random
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memagent.actions import ActionList, run_actions, run_actions_in_order
from memagent.core import MemoryHome
from memagent.memory.vault import Vault

PATHS = [
    "a.md",
    "A.md",
    "b.md",
    "alias.md",
    "d",
    "d/x.md",
    "d/e/z.md",
    "dl/x.md",
    "dl/new.md",
    "new.md",
    "new",
    "new/n.md",
]
TEXTS = ["x", "y", "x\ny", "# T\n"]
VARS = ["r", "s"]

path_or_var = st.one_of(
    st.sampled_from(PATHS),
    st.sampled_from(VARS).map(lambda v: {"$var": f"{v}.path"}),
)
text_or_var = st.one_of(st.sampled_from(TEXTS), st.sampled_from(VARS).map(lambda v: {"$var": v}))


def _with(action: str, **fields: Any) -> dict[str, Any]:
    return {"action": action, **fields}


action = st.one_of(
    st.builds(lambda p: _with("read_file", path=p), path_or_var),
    st.builds(lambda p: _with("get_size", path=p), st.sampled_from(PATHS)),
    st.builds(lambda p: _with("check_file_exists", path=p), st.sampled_from(PATHS)),
    st.builds(lambda p: _with("check_dir_exists", path=p), st.sampled_from(PATHS)),
    st.builds(lambda p: _with("delete_file", path=p), st.sampled_from(PATHS)),
    st.builds(lambda p, c: _with("create_file", path=p, content=c), path_or_var, text_or_var),
    st.builds(
        lambda p, c: _with("append_file", path=p, content=c), st.sampled_from(PATHS), text_or_var
    ),
    st.builds(
        lambda p, o, n: _with("update_file", path=p, old_content=o, new_content=n),
        st.sampled_from(PATHS),
        st.sampled_from(["x", "y", "#"]),
        st.sampled_from(["y", "xx", ""]),
    ),
    st.builds(lambda p: _with("create_dir", path=p), st.sampled_from(["d", "new", "d/e", "q"])),
    st.builds(
        lambda p, r: _with("list_files", path=p, recursive=r),
        st.sampled_from(["", "d", "dl", "new"]),
        st.booleans(),
    ),
    st.builds(lambda q: _with("search_files", query=q), st.sampled_from(["x", "y"])),
    st.builds(
        lambda link: _with("go_to_link", link=link), st.sampled_from(["[[a]]", "[[x]]", "[[d/x]]"])
    ),
)
assigned = st.tuples(action, st.one_of(st.none(), st.sampled_from(VARS))).map(
    lambda t: t[0] if t[1] is None else {**t[0], "assign_to": t[1]}
)
batches = st.lists(assigned, min_size=2, max_size=8)


class JitterVault(Vault):
    """A vault that dawdles around its file reads and writes."""

    def __init__(self, home: MemoryHome, rng: random.Random) -> None:
        super().__init__(home)
        self.rng = rng

    def _nap(self) -> None:
        time.sleep(self.rng.random() * 0.002)

    def _read_bytes(self, loc: Any) -> bytes:
        self._nap()
        data = super()._read_bytes(loc)
        self._nap()
        return data

    def _write(self, loc: Any, data: bytes, op: str, meta: dict[str, Any] | None) -> None:
        self._nap()
        super()._write(loc, data, op, meta)

    def locate(self, path: object) -> Any:
        self._nap()
        return super().locate(path)


def _seed(root: Path) -> MemoryHome:
    home = MemoryHome.open(root)
    home.init()
    vault_dir = home.layout.vault
    for rel, text in (("a.md", "# A\nx\n"), ("b.md", "y\nx"), ("d/x.md", "x in d\n")):
        home.storage.write_text(vault_dir / rel, text, actor="test", op="seed")
    os.symlink("a.md", vault_dir / "alias.md")
    os.symlink("d", vault_dir / "dl", target_is_directory=True)
    return home


def _tree(vault_dir: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for dirpath, dirnames, filenames in os.walk(vault_dir):
        for name in dirnames + filenames:
            full = Path(dirpath) / name
            rel = full.relative_to(vault_dir).as_posix()
            if full.is_symlink():
                out[rel] = ("link", os.readlink(full))
            elif full.is_dir():
                out[rel] = ("dir",)
            else:
                out[rel] = ("file", full.read_bytes())
    return out


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(batch=batches, seed=st.integers(0, 2**16))
def test_plan_equals_one_action_at_a_time(
    batch: list[dict[str, Any]], seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "fsync", lambda fd: None)  # durability is not what is tested
    actions = ActionList.validate_python(batch)
    with tempfile.TemporaryDirectory() as tmp:
        planned_home = _seed(Path(tmp) / "planned")
        serial_home = _seed(Path(tmp) / "serial")
        planned = run_actions(JitterVault(planned_home, random.Random(seed)), actions).to_json()
        serial = run_actions_in_order(Vault(serial_home), actions).to_json()
        assert planned == serial
        assert _tree(planned_home.layout.vault) == _tree(serial_home.layout.vault)
