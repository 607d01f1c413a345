"""How many llama.cpp threads the embedded model should use: `python -m bench.llm_threads`.

llama.cpp splits each matrix product across its threads and waits at a barrier
for all of them, so a thread that loses its core to another process stalls the
rest. On a machine whose cores are busy, more threads can be much slower than
one. This bench measures it: the profile extraction call (the prompt the
learner sends, `memory.profile.extract`) timed warm, with 1 and with 2 threads
(each in a fresh process, so each loads its own engine), with and without
`--hogs N` other CPU-bound processes running, and prints seconds per call
(median and max) and the load average seen at model load, which is what the
`llm.threads = 0` (auto) rule reads (`memagent.llm.embedded.auto_threads`).

The figures depend on what else the machine runs; say what it ran when you
report them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence

STATEMENTS = (
    "I love spicy ramen.",
    "I'm allergic to shellfish and I live in Porto.",
    "I go running three times a week before work.",
    "My sister's wedding is in June.",
    "I'm in Berlin until Friday for a conference.",
)
_CELL = """
import json, os, statistics, sys, time
from memagent.llm.embedded import EmbeddedLLM
from memagent.memory.profile.extract import extract_messages
from memagent.memory.profile.fact_schema import extraction_schema
threads, calls = int(sys.argv[1]), int(sys.argv[2])
statements = json.loads(sys.argv[3])
load = os.getloadavg()[0]
llm = EmbeddedLLM(threads=threads)
t0 = time.perf_counter(); llm.load(); loaded = time.perf_counter() - t0
schema = extraction_schema()
def one(text):
    t = time.perf_counter()
    llm.chat(extract_messages(text), response_schema=schema, max_tokens=160, temperature=0.0)
    return time.perf_counter() - t
one(statements[0])  # warm: the shared prompt prefix is in llama.cpp's cache after this
times = [one(statements[i % len(statements)]) for i in range(calls)]
print(json.dumps({"threads": threads, "load_at_start": load, "load_s": loaded, "times": times}))
"""
_HOG = "while True: pass"


def cell(threads: int, calls: int, timeout: float) -> dict[str, object]:
    """One measurement in a fresh process (its own engine)."""
    done = subprocess.run(
        [sys.executable, "-c", _CELL, str(threads), str(calls), json.dumps(STATEMENTS)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        return {"threads": threads, "error": done.stderr.strip()[-300:]}
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.llm_threads", description=__doc__)
    ap.add_argument("--calls", type=int, default=5, help="timed calls per cell")
    ap.add_argument("--hogs", type=int, default=1, help="CPU-bound processes in the loaded run")
    ap.add_argument("--rounds", type=int, default=1, help="repeat every cell this many times")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per cell")
    ap.add_argument("--json", help="write the cells as JSON here")
    args = ap.parse_args(argv)
    if args.calls < 1 or args.hogs < 0 or args.rounds < 1:
        ap.error("--calls and --rounds must be at least 1, --hogs at least 0")
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"cores: {cores}; load before: {os.getloadavg()[0]:.2f}")
    rows: list[dict[str, object]] = []
    for _ in range(args.rounds):
        for hogs in (0, args.hogs):
            procs = [subprocess.Popen([sys.executable, "-c", _HOG]) for _ in range(hogs)]
            try:
                if procs:
                    time.sleep(5)  # let the hogs show in the load average
                for threads in (1, 2):
                    row = cell(threads, args.calls, args.timeout)
                    row["hogs"] = hogs
                    rows.append(row)
                    times = row.get("times")
                    if isinstance(times, list) and times:
                        print(
                            f"hogs {hogs}  threads {threads}  load {row['load_at_start']:.2f}  "
                            f"median {statistics.median(times):.2f} s  max {max(times):.2f} s  "
                            f"(model load {row['load_s']:.1f} s)",
                            flush=True,
                        )
                    else:
                        print(f"hogs {hogs}  threads {threads}  {row.get('error')}", flush=True)
            finally:
                for p in procs:
                    p.kill()
                    p.wait()
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
