"""Vault action runner speed: `python -m bench.vault [--n 10000]`.

N mixed actions (40% read_file, 40% update_file, 20% create_file), each sent
through the real path an LLM batch takes (`validate_actions` + `run_actions`:
schema validation, `$var` resolution, path confinement, size caps, locking,
`Storage`), against the same operations as direct Python calls that do the same
fsyncs (plain `read_text`, and `Storage.write_text` under `Storage.lock()`),
in one run on two identical memory homes. Target: runner <= 1.5x direct.
`--batch 8` sends 8 actions per `run_actions` call, so each batch runs as a plan
(reads concurrently, writes in list order) and the figure includes planning and
scheduling.
"""

from __future__ import annotations

import argparse
import gc
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from memagent.actions import run_actions, validate_actions
from memagent.core import MemoryHome
from memagent.memory.vault import Vault

SEED = 11
INITIAL_NOTES = 200
TARGET = 1.5
KINDS = ("read", "update", "create")


def make_ops(n: int, rng: random.Random) -> list[tuple[str, str, int]]:
    """(kind, path, serial): the same sequence for both contenders."""
    ops: list[tuple[str, str, int]] = []
    created = 0
    for i in range(n):
        r = rng.random()
        if r < 0.4:
            ops.append(("read", f"notes/n{rng.randrange(INITIAL_NOTES)}.md", i))
        elif r < 0.8:
            ops.append(("update", f"notes/n{rng.randrange(INITIAL_NOTES)}.md", i))
        else:
            ops.append(("create", f"new/c{created}.md", i))
            created += 1
    return ops


def seed_home(root: Path) -> MemoryHome:
    home = MemoryHome.open(root)
    home.init()
    for i in range(INITIAL_NOTES):
        home.storage.write_text(
            f"vault/notes/n{i}.md", f"# Note {i}\n\ncounter: 0\n", actor="bench", op="create"
        )
    return home


Op = tuple[str, str, int]
Times = dict[str, float]
CHUNK = 250


def to_action(kind: str, path: str, i: int) -> dict[str, Any]:
    if kind == "read":
        return {"action": "read_file", "path": path}
    if kind == "update":
        return {
            "action": "update_file",
            "path": path,
            "old_content": "counter: ",
            "new_content": f"counter: {i} ",
        }
    return {"action": "create_file", "path": path, "content": f"# C {i}\n"}


def via_runner(home: MemoryHome, batch: int = 1) -> Callable[[list[Op], Times], None]:
    """One `run_actions` call per `batch` actions (a batch's time is shared out
    among its actions' kinds by count; only the total is reported for batch > 1)."""
    vault = Vault(home, actor="bench")

    def run(ops: list[Op], times: Times) -> None:
        for lo in range(0, len(ops), batch):
            group = ops[lo : lo + batch]
            actions = [to_action(*op) for op in group]
            t0 = time.perf_counter()
            result = run_actions(vault, validate_actions(actions)).to_json()
            took = time.perf_counter() - t0
            for kind, _, _ in group:
                times[kind] += took / len(group)
            if not result["ok"]:
                raise RuntimeError(result)

    return run


def direct(home: MemoryHome) -> Callable[[list[Op], Times], None]:
    storage = home.storage
    vault_dir = home.layout.vault

    def run(ops: list[Op], times: Times) -> None:
        for kind, path, i in ops:
            target = vault_dir / path
            t0 = time.perf_counter()
            if kind == "read":
                target.read_text(encoding="utf-8")
            elif kind == "update":
                with storage.lock():
                    text = target.read_text(encoding="utf-8")
                    new = text.replace("counter: ", f"counter: {i} ", 1)
                    storage.write_text(target, new, actor="bench", op="update")
            else:
                with storage.lock():
                    if target.exists():
                        raise RuntimeError(f"{path} exists")
                    storage.write_text(target, f"# C {i}\n", actor="bench", op="create")
            times[kind] += time.perf_counter() - t0

    return run


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000, help="number of actions")
    parser.add_argument("--dir", type=Path, default=None, help="where to put the temp homes")
    parser.add_argument(
        "--batch",
        type=int,
        default=1,
        help="actions per run_actions call (a batch runs as one plan)",
    )
    args = parser.parse_args(argv)
    console = Console()
    ops = make_ops(args.n, random.Random(SEED))
    with tempfile.TemporaryDirectory(prefix="bench-vault-", dir=args.dir) as tmp:
        runner_home = seed_home(Path(tmp) / "runner")
        direct_home = seed_home(Path(tmp) / "direct")
        run_r, run_d = via_runner(runner_home, max(1, args.batch)), direct(direct_home)
        warm = [o for o in make_ops(50, random.Random(1)) if o[0] != "create"]
        scratch: Times = dict.fromkeys(KINDS, 0.0)
        run_r(warm, scratch)
        run_d(warm, scratch)
        t_r: Times = dict.fromkeys(KINDS, 0.0)
        t_d: Times = dict.fromkeys(KINDS, 0.0)
        # Interleave chunks (alternating who goes first) so both contenders see the
        # same disk and machine load; the fsyncs dominate and the load drifts.
        gc.disable()
        for n, lo in enumerate(range(0, len(ops), CHUNK)):
            chunk = ops[lo : lo + CHUNK]
            pair = [(run_r, t_r), (run_d, t_d)]
            for fn, times in pair if n % 2 == 0 else pair[::-1]:
                fn(chunk, times)
        gc.enable()
        same = all(
            (runner_home.layout.vault / p).read_bytes()
            == (direct_home.layout.vault / p).read_bytes()
            for _, p, _ in ops
        )
    counts = {k: sum(1 for o in ops if o[0] == k) for k in KINDS}
    per = "one action per batch" if args.batch <= 1 else f"{args.batch} actions per batch"
    table = Table(title=f"{args.n} mixed vault actions, {per}")
    for col in ("kind", "count", "direct ops/s", "runner ops/s", "runner/direct"):
        table.add_column(col, justify="right" if col != "kind" else "left")
    # a batch's time cannot be split among its actions: per kind only for batch 1
    for kind in (*KINDS, "all") if args.batch <= 1 else ("all",):
        d = sum(t_d.values()) if kind == "all" else t_d[kind]
        r = sum(t_r.values()) if kind == "all" else t_r[kind]
        count = args.n if kind == "all" else counts[kind]
        if count:
            table.add_row(
                kind, str(count), f"{count / d:,.0f}", f"{count / r:,.0f}", f"{r / d:.2f}x"
            )
    console.print(table)
    total_d, total_r = sum(t_d.values()), sum(t_r.values())
    ratio = total_r / total_d
    verdict = "[green]within target[/]" if ratio <= TARGET else "[red]over target[/]"
    console.print(f"direct: {total_d:.2f}s ({args.n / total_d:,.0f} ops/s)")
    console.print(f"runner: {total_r:.2f}s ({args.n / total_r:,.0f} ops/s)")
    console.print(f"ratio runner/direct: {ratio:.2f}x (target <= {TARGET}x) {verdict}")
    overhead_us = (total_r - total_d) / args.n * 1e6
    console.print(f"runner overhead per action: {overhead_us:,.0f} us")
    console.print(f"final files identical in both homes: {same}")


if __name__ == "__main__":
    main()
