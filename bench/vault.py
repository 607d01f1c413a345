"""Vault action runner speed: `python -m bench.vault [--n 10000]`.

N mixed actions (40% read_file, 40% update_file, 20% create_file), each sent
through the real path an LLM batch takes (`validate_actions` + `run_actions`:
schema validation, `$var` resolution, path confinement, size caps, locking,
`Storage`), against the same operations as direct Python calls that do the same
fsyncs (plain `read_text`, and `Storage.write_text` under `Storage.lock()`),
in one run on two identical memory homes. Target: runner <= 1.5x direct.
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


def via_runner(home: MemoryHome, ops: list[tuple[str, str, int]]) -> Callable[[], None]:
    vault = Vault(home, actor="bench")

    def run() -> None:
        for kind, path, i in ops:
            if kind == "read":
                action: dict[str, Any] = {"action": "read_file", "path": path}
            elif kind == "update":
                action = {
                    "action": "update_file",
                    "path": path,
                    "old_content": "counter: ",
                    "new_content": f"counter: {i} ",
                }
            else:
                action = {"action": "create_file", "path": path, "content": f"# C {i}\n"}
            result = run_actions(vault, validate_actions([action]))
            if not result["ok"]:
                raise RuntimeError(result)

    return run


def direct(home: MemoryHome, ops: list[tuple[str, str, int]]) -> Callable[[], None]:
    storage = home.storage
    vault_dir = home.layout.vault

    def run() -> None:
        for kind, path, i in ops:
            target = vault_dir / path
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

    return run


def timed(fn: Callable[[], None]) -> float:
    gc.collect()
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000, help="number of actions")
    parser.add_argument("--dir", type=Path, default=None, help="where to put the temp homes")
    args = parser.parse_args(argv)
    console = Console()
    ops = make_ops(args.n, random.Random(SEED))
    with tempfile.TemporaryDirectory(prefix="bench-vault-", dir=args.dir) as tmp:
        runner_home = seed_home(Path(tmp) / "runner")
        direct_home = seed_home(Path(tmp) / "direct")
        # Warm both paths (imports, caches) on a throwaway prefix of the same mix.
        warm = [(k, p, i) for k, p, i in make_ops(50, random.Random(1)) if k != "create"]
        via_runner(runner_home, warm)()
        direct(direct_home, warm)()
        t_direct = timed(direct(direct_home, ops))
        t_runner = timed(via_runner(runner_home, ops))
        same = all(
            (runner_home.layout.vault / p).read_bytes()
            == (direct_home.layout.vault / p).read_bytes()
            for _, p, _ in ops
        )
    counts = {k: sum(1 for o in ops if o[0] == k) for k in ("read", "update", "create")}
    table = Table(title=f"{args.n} mixed vault actions ({counts})")
    table.add_column("contender")
    table.add_column("seconds", justify="right")
    table.add_column("ops/s", justify="right")
    table.add_row("direct Storage calls", f"{t_direct:.3f}", f"{args.n / t_direct:,.0f}")
    table.add_row("action runner", f"{t_runner:.3f}", f"{args.n / t_runner:,.0f}")
    console.print(table)
    ratio = t_runner / t_direct
    verdict = "[green]within target[/]" if ratio <= TARGET else "[red]over target[/]"
    console.print(f"ratio runner/direct: {ratio:.2f}x (target <= {TARGET}x) {verdict}")
    overhead_us = (t_runner - t_direct) / args.n * 1e6
    console.print(f"runner overhead per action: {overhead_us:,.0f} us")
    console.print(f"final files identical in both homes: {same}")


if __name__ == "__main__":
    main()
