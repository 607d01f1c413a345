"""Two `memagent serve` processes on one PostgreSQL database vs one on local files.

Starts PostgreSQL + pgvector (pgserver) in a temporary folder, then runs the
serve benchmark's bounded load (`bench.serve`: N client threads, mixed
remember/recall for D seconds, one user) twice:

1. baseline: one `memagent serve` process on the local backend (files + SQLite);
2. shared: two `memagent serve --store postgresql://…` processes on one
   database, half the clients on each.

Prints throughput and p50/p95 per operation for both, the ratio, and checks that
every acknowledged remember is readable — by id, with the same text, and
recallable by its token — from the *other* process than the one that took it.

    python -m bench.postgres                  # 8 clients, 20 s each
    python -m bench.postgres --duration 5
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

from bench.serve import Stats, _client, _free_port, _pct, _verify
from memagent.postgres import Database, PgKeyStore
from memagent.server import KeyStore


def _start(
    root: Path, env: dict[str, str], store: str | None, keyword_only: bool
) -> tuple[subprocess.Popen[str], str]:
    port = _free_port()
    cmd = [
        sys.executable, "-m", "memagent", "serve", "--root", str(root), "--port", str(port),
        "--rate", "1000000", "--burst", "1000000", "--no-mcp",
    ]  # fmt: skip
    if store:
        cmd += ["--store", store]
    if keyword_only:
        cmd.append("--keyword-only")
    proc = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise SystemExit(f"server did not start: {proc.stderr.read() if proc.stderr else ''}")
        time.sleep(0.1)


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


def _load(
    urls: list[str], key: str, clients: int, duration: float, share: float
) -> tuple[list[Stats], float]:
    """Clients spread round-robin over `urls`; one `Stats` per url."""
    for url in urls:  # warm each process (user memory, embedder) before the clock
        httpx.get(f"{url}/v1/memories/search", params={"q": "warm up"},
                  headers={"Authorization": f"Bearer {key}"}, timeout=60)  # fmt: skip
    stats = [Stats() for _ in urls]
    stop = time.monotonic() + duration
    threads = [
        threading.Thread(
            target=_client,
            args=(urls[i % len(urls)], key, stop, i, share, stats[i % len(urls)]),
            daemon=True,
        )
        for i in range(clients)
    ]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return stats, time.perf_counter() - t0


def _report(name: str, stats: list[Stats], wall: float) -> float:
    lat = {op: [v for s in stats for v in s.latencies[op]] for op in ("remember", "recall")}
    total = sum(len(v) for v in lat.values())
    errors = sum(len(s.errors) for s in stats)
    rps = total / wall
    print(f"{name}: {total} requests in {wall:.1f}s = {rps:.1f} req/s, errors {errors}")
    for op, values in lat.items():
        print(
            f"  {op:8s} n={len(values):5d}  p50={_pct(values, 50):7.1f} ms  "
            f"p95={_pct(values, 95):7.1f} ms"
        )
    for s in stats:
        for line in s.errors[:5]:
            print("  !", line)
    return rps


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=float, default=20.0, help="seconds of load per setup")
    ap.add_argument("--clients", type=int, default=8, help="concurrent clients (default 8)")
    ap.add_argument("--recall-share", type=float, default=0.5, help="share of recalls (0-1)")
    ap.add_argument("--keyword-only", action="store_true", help="no embeddings (faster)")
    args = ap.parse_args(argv)

    import pgserver

    with tempfile.TemporaryDirectory(prefix="memagent-bench-pg-") as tmp:
        env = {**os.environ, "MEMAGENT_HOME": str(Path(tmp) / "ambient")}
        srv = pgserver.get_server(Path(tmp) / "pg", cleanup_mode="stop")
        srv.psql("CREATE EXTENSION IF NOT EXISTS vector;")
        store = srv.get_uri()
        try:
            # 1. one process, local backend
            root = Path(tmp) / "local"
            key, _ = KeyStore(root).create(user="bench")
            proc, url = _start(root, env, None, args.keyword_only)
            try:
                local_stats, local_wall = _load(
                    [url], key, args.clients, args.duration, args.recall_share
                )
            finally:
                _stop(proc)
            # 2. two processes, one database
            root = Path(tmp) / "shared"
            with Database.open(store, max_size=1) as db:
                key, _ = PgKeyStore(db).create(user="bench")
            first, url1 = _start(root, env, store, args.keyword_only)
            second, url2 = _start(root, env, store, args.keyword_only)
            try:
                shared_stats, shared_wall = _load(
                    [url1, url2], key, args.clients, args.duration, args.recall_share
                )
                # Every write acknowledged by one process, read back through the other.
                lost = _verify(url2, key, shared_stats[0].acked) + _verify(
                    url1, key, shared_stats[1].acked
                )
            finally:
                _stop(first)
                _stop(second)
        finally:
            srv.cleanup()

    mode = "keyword-only" if args.keyword_only else "hybrid"
    print(f"bench.postgres: {args.clients} clients, {args.duration:.0f}s each, {mode}")
    base = _report("baseline  1 x serve, local files", local_stats, local_wall)
    rps = _report("shared    2 x serve, one PostgreSQL", shared_stats, shared_wall)
    acked = sum(len(s.acked) for s in shared_stats)
    print(f"acknowledged remembers: {acked}   not readable from the other process: {len(lost)}")
    print(f"ratio shared/baseline throughput: {rps / base:.2f}x")
    for line in lost[:20]:
        print("  !", line)
    errors = sum(len(s.errors) for s in local_stats + shared_stats)
    return 0 if not lost and not errors else 1


if __name__ == "__main__":
    raise SystemExit(main())
