"""One batch of vault actions is one plan: its shape, its concurrency, its callers."""

from __future__ import annotations

import asyncio
import itertools
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from memagent.actions import (
    ActionList,
    arun_actions,
    plan_actions,
    run_actions,
    run_actions_in_order,
    validate_actions,
)
from memagent.actions._runner import NAMES
from memagent.core import InvalidInput, MemoryHome
from memagent.memory.vault import FileAppended, Vault


@pytest.fixture
def vault(home: MemoryHome) -> Vault:
    v = Vault(home)
    v.create("a.md", "alpha x\n")
    v.create("b.md", "beta x\n")
    v.create("d/x.md", "in d\n")
    return v


def acts(*items: dict[str, Any]) -> list[Any]:
    return validate_actions(list(items))


def edges(vault: Vault, *items: dict[str, Any]) -> set[tuple[str, str]]:
    return {(a, b) for a, b, _ in plan_actions(vault, acts(*items)).edges()}


def test_independent_actions_share_a_level(vault: Vault) -> None:
    plan = plan_actions(
        vault,
        acts(
            {"action": "read_file", "path": "a.md"},
            {"action": "read_file", "path": "b.md"},
            {"action": "update_file", "path": "a.md", "old_content": "x", "new_content": "y"},
            {"action": "get_size", "path": "d/x.md"},
        ),
    )
    assert [s.step_id for s in plan.steps] == [
        "0:read_file",
        "1:read_file",
        "2:update_file",
        "3:get_size",
    ]
    assert plan.levels[0] == ("0:read_file", "1:read_file", "3:get_size")
    assert plan.levels[1] == ("2:update_file",)
    assert plan.dependencies_of("2:update_file") == ["0:read_file"]
    assert plan.max_parallelism == 3


def test_var_is_a_data_edge_to_the_latest_producer(vault: Vault) -> None:
    batch = ActionList.validate_python(
        [
            {"action": "read_file", "path": "a.md", "assign_to": "r"},
            {"action": "read_file", "path": "b.md", "assign_to": "r"},
            {"action": "create_file", "path": "c.md", "content": {"$var": "r"}},
        ]
    )
    plan = plan_actions(vault, batch)
    kinds = {(a, b): k for a, b, k in plan.edges()}
    assert kinds[("1:read_file", "2:create_file")] == "data:v1"
    assert "data:v0" not in kinds.values()
    result = run_actions(vault, batch).to_json()
    assert result["ok"] and vault.read("c.md") == "beta x\n"


def test_conflicts_keep_list_order(vault: Vault) -> None:
    got = edges(
        vault,
        {"action": "create_file", "path": "a", "content": "file named a"},
        {"action": "create_file", "path": "a/b.md", "content": "under a"},
        {"action": "check_file_exists", "path": "d/x.md"},
        {"action": "create_file", "path": "d", "content": "clash"},
    )
    # a file `a` and a file under `a/` are never independent, nor is a folder's
    # content and a write of the folder's own name
    assert ("0:create_file", "1:create_file") in got
    assert ("2:check_file_exists", "3:create_file") in got


def test_names_resource_orders_lookups_and_new_names(vault: Vault) -> None:
    plan = plan_actions(
        vault,
        acts(
            {"action": "read_file", "path": "missing.md"},
            {"action": "create_file", "path": "missin.md", "content": "x"},
        ),
    )
    assert NAMES in plan.reads[0] and NAMES in plan.writes[1]
    # the failed lookup suggests only names that existed at its turn
    result = run_actions(
        vault,
        acts(
            {"action": "read_file", "path": "notes.md"},
            {"action": "create_file", "path": "note.md", "content": "x"},
            {"action": "read_file", "path": "notes.md"},
        ),
    ).to_json()
    errors = [r.get("error") for r in result["results"]]
    assert "note.md" not in errors[0] and "did you mean 'note.md'" in errors[2]


def test_links_make_two_names_one_resource(vault: Vault) -> None:
    os.symlink("a.md", vault.dir / "alias.md")
    os.symlink("d", vault.dir / "dl", target_is_directory=True)
    got = edges(
        vault,
        {"action": "read_file", "path": "alias.md"},
        {"action": "update_file", "path": "a.md", "old_content": "x", "new_content": "y"},
        {"action": "check_file_exists", "path": "dl/new.md"},
        {"action": "create_file", "path": "d/new.md", "content": "n"},
    )
    assert ("0:read_file", "1:update_file") in got
    assert ("2:check_file_exists", "3:create_file") in got


def test_case_variants_are_one_resource(vault: Vault) -> None:
    got = edges(
        vault,
        {"action": "check_file_exists", "path": "A.md"},
        {"action": "append_file", "path": "a.md", "content": "z"},
    )
    assert ("0:check_file_exists", "1:append_file") in got


def test_longest_path_plans_as_whole_vault(vault: Vault) -> None:
    long = "/".join(["n" * 200] * 5)[:1020] + ".md"
    assert len(long.encode()) <= 1024
    batch = acts(
        {"action": "check_file_exists", "path": long},
        {"action": "create_file", "path": long, "content": "deep"},
        {"action": "read_file", "path": "a.md"},
    )
    plan = plan_actions(vault, batch)
    assert plan.reads[0] == ("vault:",) and "vault:" in plan.writes[1]
    result = run_actions(vault, batch).to_json()
    assert result["ok"] and vault.read(long) == "deep"


def test_invalid_paths_plan_safely_and_fail_alone(vault: Vault, home: MemoryHome) -> None:
    batch = acts(
        {"action": "create_file", "path": "../escape.md", "content": "x"},
        {"action": "read_file", "path": "a.md"},
        {"action": "create_file", "path": "a.md/inner.md", "content": "x"},
        {"action": "read_file", "path": "b.md"},
    )
    result = run_actions(vault, batch).to_json()
    assert [r["ok"] for r in result["results"]] == [False, True, False, True]
    assert not (home.root / "escape.md").exists()


def test_not_actions_is_a_clear_error(vault: Vault) -> None:
    with pytest.raises(InvalidInput, match="not a validated action"):
        run_actions(vault, [{"action": "read_file", "path": "a.md"}, "x"])  # type: ignore[list-item]
    with pytest.raises(InvalidInput, match="not a validated action"):
        run_actions(vault, [{"action": "read_file", "path": "a.md"}])  # type: ignore[list-item]
    assert run_actions(vault, []).to_json() == {
        "ok": True,
        "succeeded": 0,
        "failed": 0,
        "results": [],
    }


class BarrierVault(Vault):
    """`read` waits until two reads are in flight at once: only a concurrent
    run of two reads can finish."""

    def __init__(self, home: MemoryHome) -> None:
        super().__init__(home)
        self.barrier = threading.Barrier(2, timeout=10)

    def read(self, path: str) -> str:
        self.barrier.wait()
        return super().read(path)


def test_independent_reads_really_run_at_once(vault: Vault, home: MemoryHome) -> None:
    bv = BarrierVault(home)
    result = run_actions(
        bv, acts({"action": "read_file", "path": "a.md"}, {"action": "read_file", "path": "b.md"})
    ).to_json()
    assert result["ok"], result
    assert [r["value"] for r in result["results"]] == ["alpha x\n", "beta x\n"]


class IntervalVault(Vault):
    """Records when each call on each file ran, and sleeps inside it."""

    def __init__(self, home: MemoryHome) -> None:
        super().__init__(home)
        self.intervals: list[tuple[str, str, float, float]] = []
        self._intervals_lock = threading.Lock()

    def _timed(self, kind: str, path: str, fn: Any, *args: Any) -> Any:
        t0 = time.perf_counter()
        time.sleep(0.01)
        try:
            return fn(path, *args)
        finally:
            with self._intervals_lock:
                self.intervals.append((kind, path, t0, time.perf_counter()))

    def read(self, path: str) -> str:
        return str(self._timed("read", path, super().read))

    def append(self, path: str, content: str) -> FileAppended:
        out: FileAppended = self._timed("write", path, super().append, content)
        return out


def test_conflicting_actions_never_overlap(home: MemoryHome) -> None:
    iv = IntervalVault(home)
    batch: list[dict[str, Any]] = []
    for i in range(4):
        for name in ("p.md", "q.md"):
            batch.append({"action": "append_file", "path": name, "content": f"{i}"})
            batch.append({"action": "read_file", "path": name})
    result = run_actions(iv, acts(*batch)).to_json()
    assert result["ok"], result
    by_file: dict[str, list[tuple[str, float, float]]] = {}
    for kind, path, a, b in iv.intervals:
        by_file.setdefault(path, []).append((kind, a, b))
    for spans in by_file.values():
        spans.sort(key=lambda s: s[1])
        for (_, _, end), (_, start, _) in itertools.pairwise(spans):
            assert end <= start
    assert iv.read("p.md") == "0\n1\n2\n3"
    assert [r["value"] for r in result["results"][1::4]] == ["0", "0\n1", "0\n1\n2", "0\n1\n2\n3"]


class BrokenVault(Vault):
    def size(self, path: str) -> int:
        raise RuntimeError("a bug, not a vault error")


def test_a_bug_in_a_step_is_raised_not_hidden(home: MemoryHome) -> None:
    bv = BrokenVault(home)
    bv.create("a.md", "x")
    batch = acts({"action": "read_file", "path": "a.md"}, {"action": "get_size", "path": "a.md"})
    with pytest.raises(RuntimeError, match="a bug"):
        run_actions(bv, batch)


def test_callable_inside_a_running_event_loop(vault: Vault) -> None:
    batch = acts({"action": "read_file", "path": "a.md"}, {"action": "read_file", "path": "b.md"})

    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        sync = run_actions(vault, batch).to_json()  # a sync caller on the loop thread (MCP tools)
        async_ = (await arun_actions(vault, batch)).to_json()
        return sync, async_

    sync, async_ = asyncio.run(main())
    assert sync == async_ == run_actions_in_order(vault, batch).to_json()


def test_arun_actions_leaves_the_loop_free(home: MemoryHome) -> None:
    bv = BarrierVault(home)
    bv.create("a.md", "x")
    ticks: list[int] = []

    async def main() -> dict[str, Any]:
        async def ticker() -> None:
            for i in range(3):
                ticks.append(i)
                await asyncio.sleep(0)

        task = asyncio.create_task(ticker())
        out = (
            await arun_actions(
                bv,
                acts(
                    {"action": "read_file", "path": "a.md"}, {"action": "read_file", "path": "a.md"}
                ),
            )
        ).to_json()
        await task
        return out

    assert asyncio.run(main())["ok"] and ticks == [0, 1, 2]
    single = asyncio.run(arun_actions(bv, acts({"action": "get_size", "path": "a.md"}))).to_json()
    assert single["results"][0]["value"] == 1


def test_many_threads_at_once(vault: Vault) -> None:
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            batch = acts(
                {"action": "append_file", "path": f"t/{n}.md", "content": "a"},
                {"action": "read_file", "path": "a.md"},
                {"action": "append_file", "path": f"t/{n}.md", "content": "b"},
                {"action": "read_file", "path": f"t/{n}.md"},
            )
            result = run_actions(vault, batch).to_json()
            assert result["ok"], result
            assert result["results"][3]["value"] == "a\nb"
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert sorted(vault.list_dir("t").entries) == sorted(f"t/{n}.md" for n in range(8))


def test_caller_holding_the_home_lock_does_not_deadlock(vault: Vault) -> None:
    batch = acts(
        {"action": "create_file", "path": "l1.md", "content": "1"},
        {"action": "create_file", "path": "l2.md", "content": "2"},
        {"action": "read_file", "path": "a.md"},
    )
    with vault.storage.lock():
        result = run_actions(vault, batch).to_json()
    assert result["ok"] and vault.read("l2.md") == "2"


def test_a_full_batch_matches_one_at_a_time(vault: Vault, tmp_path: Path) -> None:
    batch = acts(
        *(
            {"action": "append_file", "path": f"many/{(i // 10) % 5}.md", "content": f"{i}"}
            if i % 10 == 0
            else {"action": "read_file", "path": f"many/{i % 5}.md"}
            for i in range(200)
        )
    )
    other = MemoryHome.open(tmp_path / "other")
    other.init()
    twin = Vault(other)
    for path in sorted(vault.dir.rglob("*")):
        if path.is_file():
            twin.storage.write_bytes(
                twin.dir / path.relative_to(vault.dir), path.read_bytes(), actor="t", op="seed"
            )
    result = run_actions(vault, batch).to_json()
    assert result == run_actions_in_order(twin, batch).to_json()
    assert result["succeeded"] > 100 and result["failed"] > 0
    assert vault.read("many/0.md") == "\n".join(str(i) for i in range(0, 200, 50))


def test_listings_and_searches_read_the_whole_vault(vault: Vault) -> None:
    # a link inside a listed folder may point anywhere in the vault
    os.symlink("../b.md", vault.dir / "d" / "to_b.md")
    plan = plan_actions(
        vault,
        acts(
            {"action": "list_files", "path": "d"},
            {"action": "search_files", "query": "beta", "path": "d"},
            {"action": "delete_file", "path": "b.md"},
        ),
    )
    assert plan.reads[0] == plan.reads[1] == ("vault:",)
    assert plan.dependencies_of("2:delete_file") == ["0:list_files", "1:search_files"]


def test_writes_keep_list_order_reads_do_not_wait_for_each_other(vault: Vault) -> None:
    plan = plan_actions(
        vault,
        acts(
            {"action": "update_file", "path": "a.md", "old_content": "x", "new_content": "y"},
            {"action": "update_file", "path": "b.md", "old_content": "x", "new_content": "y"},
            {"action": "check_file_exists", "path": "a.md"},
            {"action": "check_dir_exists", "path": "d"},
        ),
    )
    # every write takes the home's write lock anyway: declared, it keeps list order
    assert plan.dependencies_of("1:update_file") == ["0:update_file"]
    assert plan.dependencies_of("3:check_dir_exists") == []


def test_a_cancelled_request_stops_its_batch(vault: Vault) -> None:
    """A batch runs under the sending request's whole budget, its cancel event
    included (not only its time): a cancelled request's batch stops."""
    from memagent.core.deadline import deadline
    from memagent.core.errors import DeadlineExceeded

    cancel = threading.Event()
    cancel.set()  # the server gave up on the request (a 504, the client gone)
    batch = acts(
        {"action": "read_file", "path": "a.md"},
        {"action": "read_file", "path": "b.md"},
    )
    assert plan_actions(vault, batch).max_parallelism > 1  # a plan for the pool threads
    with deadline(None, cancel=cancel), pytest.raises(DeadlineExceeded, match="cancelled"):
        run_actions(vault, batch)
    assert run_actions(vault, batch).ok  # the next request is served
