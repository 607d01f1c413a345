"""Sandbox speed: `python -m bench.sandbox`.

Measured in one run, each against a baseline taken in the same run:

1. Per-run overhead of a tiny script in a fresh `Session` (in-process), through
   the worker pool (a fresh session on a pre-started worker, and a run in a live
   `IsolatedSession`), vs spawning a Python subprocess that runs it (target: far
   cheaper than the subprocess).
2. Loop-heavy scripts (sum of squares to 100k, string building, counting words
   in a dict) vs smolagents' `LocalPythonExecutor` on the same scripts (target
   >= 10x faster; needs the `bench` extra: `pip install -e .[bench]`), and vs
   plain CPython (target <= 5x: the price of compiling to checked closures
   instead of bytecode).

All three run in this process, so the loop table times them in CPU time
(`time.process_time`, best of several runs): on a machine shared with other
work, wall time mostly measures the neighbours. The per-run overhead table
uses wall time, since a subprocess and the worker pool run outside this
process.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable

from rich.console import Console
from rich.table import Table

from memagent.sandbox import IsolatedSession, Limits, Session, WorkerPool

TINY = "x = 1 + 2\nx * 2"
CPU = time.process_time
LIMITS = Limits(max_operations=50_000_000, timeout_s=120)
SCRIPTS = {
    "sum of squares to 100k": "total = 0\nfor i in range(100000):\n    total += i * i\ntotal",
    "string building": (
        "parts = []\nfor i in range(20000):\n    parts.append(str(i % 10))\n"
        "s = ''.join(parts)\nfor i in range(5000):\n    s2 = s[:10] + str(i)\nlen(s)"
    ),
    "counting words in a dict": (
        "text = ('the quick brown fox jumps over the lazy dog ' * 3000).split()\n"
        "counts = {}\nfor w in text:\n    counts[w] = counts.get(w, 0) + 1\ncounts['the']"
    ),
}


def best_of(
    fn: Callable[[], object], repeat: int, clock: Callable[[], float] = time.perf_counter
) -> float:
    times = []
    for _ in range(repeat):
        t = clock()
        fn()
        times.append(clock() - t)
    return min(times)


def per_run_overhead(console: Console) -> None:
    n = 2000

    def sandbox_runs() -> None:
        for _ in range(n):
            r = Session().run(TINY)
            assert r.result == 6

    sandbox_s = best_of(sandbox_runs, 3) / n
    sandbox_cpu_s = best_of(sandbox_runs, 3, CPU) / n
    m = 20

    def subprocess_runs() -> None:
        for _ in range(m):
            out = subprocess.run(
                [sys.executable, "-I", "-c", "x = 1 + 2\nprint(x * 2)"],
                capture_output=True,
                check=True,
            )
            assert out.stdout.strip() == b"6"

    spawn_s = best_of(subprocess_runs, 3) / m
    pool = WorkerPool(1)
    pool.run(TINY)  # the worker has started
    k = 300

    def pool_runs() -> None:
        for _ in range(k):
            assert pool.run(TINY).result == 6

    pool_s = best_of(pool_runs, 3) / k
    isolated = IsolatedSession(pool=pool)

    def session_runs() -> None:
        for _ in range(k):
            assert isolated.run(TINY).result == 6

    session_s = best_of(session_runs, 3) / k
    isolated.close()
    pool.close()
    table = Table("per-run overhead (tiny script)", "per run", "ratio")
    table.add_row("subprocess (python -I -c)", f"{spawn_s * 1e3:.2f} ms", "1.0x")
    table.add_row(
        "memagent Session().run (in-process)",
        f"{sandbox_s * 1e6:.1f} µs",
        f"{spawn_s / sandbox_s:.0f}x cheaper",
    )
    table.add_row(
        "  the same, CPU time of this process",
        f"{sandbox_cpu_s * 1e6:.1f} µs",
        "(wall time above includes waiting for the CPU)",
    )
    table.add_row(
        "worker pool: pool.run (fresh session)",
        f"{pool_s * 1e6:.1f} µs",
        f"{spawn_s / pool_s:.0f}x cheaper",
    )
    table.add_row(
        "worker pool: IsolatedSession.run",
        f"{session_s * 1e6:.1f} µs",
        f"{spawn_s / session_s:.0f}x cheaper",
    )
    console.print(table)


def loop_heavy(console: Console) -> None:
    try:
        from smolagents.local_python_executor import LocalPythonExecutor
    except ImportError:
        LocalPythonExecutor = None
        console.print("[yellow]smolagents not installed: pip install -e .[bench][/]")
    table = Table(
        "script (CPU time)", "CPython", "memagent", "smolagents", "vs smolagents", "vs CPython"
    )
    for name, code in SCRIPTS.items():
        lines = code.split("\n")
        plain = "\n".join([*lines[:-1], f"_r = {lines[-1]}"])
        compiled = compile(plain, "<bench>", "exec")  # the CPython baseline, not model code

        def cpython(compiled: object = compiled) -> None:
            exec(compiled, {})

        cp_s = best_of(cpython, 15, CPU)
        limits = LIMITS
        expected = Session(limits=limits).run(code)
        assert expected.error is None, expected.error
        ma_s = best_of(lambda code=code: Session(limits=LIMITS).run(code), 9, CPU)
        want = expected.result
        smol_cell, ratio_cell = "-", "-"
        if LocalPythonExecutor is not None:

            def smol(code: str = code, want: object = want) -> None:
                ex = LocalPythonExecutor(additional_authorized_imports=[])
                ex.send_tools({})
                out = ex(code)
                assert out.output == want, (out.output, want)

            sm_s = best_of(smol, 5, CPU)
            smol_cell = f"{sm_s * 1e3:.0f} ms"
            ratio_cell = f"{sm_s / ma_s:.1f}x faster"
        table.add_row(
            name,
            f"{cp_s * 1e3:.1f} ms",
            f"{ma_s * 1e3:.0f} ms",
            smol_cell,
            ratio_cell,
            f"{ma_s / cp_s:.1f}x slower",
        )
    console.print(table)


def main() -> None:
    console = Console()
    console.print(f"python {sys.version.split()[0]}; best of several runs")
    per_run_overhead(console)
    loop_heavy(console)


if __name__ == "__main__":
    main()
