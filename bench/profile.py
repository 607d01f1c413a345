"""Profile handler speed: `python -m bench.profile`.

Operations per second applied by the handler (`apply_operations`: lock, load and
validate the resource, dedupe, prune, atomic fsynced write, ops-log record with
item-level before/after) vs, in the same run:

1. the bare baseline: `json.load` → `list.append` → `json.dump` on the same file
   (no validation, no dedupe, no lock, no fsync, no log);
2. the same bare baseline made durable (temp file + fsync + rename + fsync of
   the folder), which is the floor for a write that survives a crash.

Each starts from a resource that already holds `PRELOAD` items and applies `N`
appends of new items, one operation per batch; the handler is also measured with
`BATCH` operations per batch.

Then learning speed: every statement of the profile set's dev and first
held-out parts (`bench.profile_learn`) learned one at a time, statements/s and p50/p95 seconds
per statement, cold (the first, which loads the model) and warm (the rest).
`--learn-model scripted` (the default) times the pipeline around a model that
answers at once (screen, planning, handler); `--learn-model embedded` the 1.5B
model on this machine (slow: minutes on a busy machine; `--every N` samples).
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from memagent.core import MemoryHome
from memagent.memory.profile import AnyOp, ProfileStore, apply_operations, parse_operation
from memagent.setup import init_home

N = 300
PRELOAD = 200
BATCH = 50
FOOD = "resource_user_food_prefs.json"


def _op(i: int, prefix: str = "dish") -> AnyOp:
    return parse_operation(
        {
            "operation": "append",
            "file": FOOD,
            "path": "food.likes",
            "value": {"item": f"{prefix} number {i}", "display": f"{prefix} number {i}"},
        }
    )


def _home(root: Path) -> ProfileStore:
    home = MemoryHome.open(root / "home")
    init_home(home)
    store = ProfileStore(home)
    result = apply_operations(store, [_op(i, "old dish") for i in range(PRELOAD)])
    assert result.ok
    return store


def handler_ops_per_s(root: Path, batch: int) -> float:
    store = _home(root)
    ops = [_op(i) for i in range(N)]
    start = time.perf_counter()
    for k in range(0, N, batch):
        result = apply_operations(store, ops[k : k + batch])
        assert result.ok and all(o.status == "applied" for o in result.outcomes)
    return N / (time.perf_counter() - start)


def _bare_file(root: Path) -> Path:
    path = root / "bare.json"
    root.mkdir()
    items = [
        {"item": f"old_dish_number_{i}", "display": "d", "added": "x", "expiry": None}
        for i in range(PRELOAD)
    ]
    path.write_text(json.dumps({"_metadata": {}, "food": {"likes": items}}, indent=2))
    return path


def bare_ops_per_s(root: Path, *, durable: bool) -> float:
    path = _bare_file(root)
    start = time.perf_counter()
    for i in range(N):
        with path.open(encoding="utf-8") as fh:
            data = json.load(fh)
        data["food"]["likes"].append(
            {
                "item": f"dish_number_{i}",
                "display": f"Dish number {i}",
                "added": "x",
                "expiry": None,
            }
        )
        if not durable:
            with path.open("w", encoding="utf-8") as fh:
                json.dump(data, fh, indent=2)
            continue
        tmp = path.with_suffix(".tmp")
        with tmp.open("w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        fd = os.open(root, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    return N / (time.perf_counter() - start)


def learning_speed(model: str, every: int, threads: int = 0) -> dict[str, float]:
    """Statements/s and per-statement p50/p95 (warm), and the cold first statement,
    on the dev and first held-out parts (the fresh held-out part is left alone)."""
    import statistics

    from bench.profile_learn import DEFAULT_SPLITS, load_set, oracle_llm, percentile, run
    from memagent.llm import LLM

    scenarios = [s for s in load_set() if s.split in DEFAULT_SPLITS][::every]
    if model == "scripted":
        llm: LLM = oracle_llm(scenarios)
    elif threads > 0 and model.startswith("embedded"):
        from memagent.llm.embedded import EmbeddedLLM

        name = model.partition(":")[2]
        llm = EmbeddedLLM(model=name, threads=threads) if name else EmbeddedLLM(threads=threads)
    else:
        from memagent.llm import load_llm

        llm = load_llm(model)
    outcomes, cold = run(llm, scenarios)
    warm = [o.seconds for o in outcomes[1:]]
    learning = (cold or 0.0) + sum(warm)  # the learning calls only, not each new home
    return {
        "statements": len(outcomes),
        "statements/s": len(outcomes) / learning if learning else float("inf"),
        "warm p50 s": statistics.median(warm),
        "warm p95 s": percentile(warm, 0.95),
        "cold first s": cold or 0.0,
    }


def main(argv: list[str] | None = None) -> None:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m bench.profile", description=__doc__)
    ap.add_argument("--learn-model", default="scripted", help="scripted | embedded | none")
    ap.add_argument("--every", type=int, default=1, help="every Nth scenario of the dev set")
    ap.add_argument(
        "--threads", type=int, default=0, help="embedded model threads (default: llm.threads)"
    )
    args = ap.parse_args(argv)
    if args.every < 1 or args.threads < 0:
        ap.error("--every must be at least 1 and --threads at least 0")
    console = Console()
    with tempfile.TemporaryDirectory(prefix="memagent-bench-") as tmp:
        root = Path(tmp)
        figures = {
            "bare load-modify-dump": bare_ops_per_s(root / "a", durable=False),
            "bare + fsync/rename": bare_ops_per_s(root / "b", durable=True),
            "handler, 1 op/batch": handler_ops_per_s(root / "c", 1),
            f"handler, {BATCH} ops/batch": handler_ops_per_s(root / "d", BATCH),
        }
    bare = figures["bare load-modify-dump"]
    durable = figures["bare + fsync/rename"]
    table = Table(title=f"profile appends: {N} ops on a resource with {PRELOAD}+ items")
    table.add_column("method")
    table.add_column("ops/s", justify="right")
    table.add_column("vs bare", justify="right")
    table.add_column("vs bare+fsync", justify="right")
    for name, ops in figures.items():
        table.add_row(name, f"{ops:,.0f}", f"{ops / bare:.2f}x", f"{ops / durable:.2f}x")
    console.print(table)
    print(
        f"handler_ops_per_s={figures['handler, 1 op/batch']:.1f} bare_ops_per_s={bare:.1f} "
        f"ratio={figures['handler, 1 op/batch'] / bare:.3f}"
    )
    if args.learn_model != "none":
        speed = learning_speed(args.learn_model, args.every, args.threads)
        table = Table(title=f"profile learning speed: {args.learn_model}")
        table.add_column("figure")
        table.add_column("value", justify="right")
        for name, value in speed.items():
            table.add_row(name, f"{value:,.3f}")
        console.print(table)


if __name__ == "__main__":
    main()
