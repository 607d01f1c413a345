"""1, 2 and 3 `memagent serve` processes (separate roots) on one PostgreSQL database.

Starts PostgreSQL + pgvector (pgserver) in a temporary folder, then, for each
number of server processes, runs a bounded mixed load for D seconds: N client
threads, one user, each request sent to the next process in turn (so a client's
chat continues on another process than the one that took its previous turn):
remember, recall (`bench.serve`'s texts and queries) and chat (`/v1/chat` with a
scripted model answering at once, so the figure is memagent's own cost).

Prints throughput and p50/p95 per operation per configuration, throughput per
process, per-core figures, the ratio against one process (measured in the same
run), and checks that every acknowledged remember is readable, by id with the
same text and recallable by its token, through a *different* process than the
one that took it (target: zero lost). On a 2-core machine the ratio is bounded
by the cores, not by the database: every process competes for the same two.

    python -m bench.postgres                  # 6 clients, 15 s per configuration
    python -m bench.postgres --duration 5 --keyword-only

A 429 (the server's per-user admission: at most 2 model requests of one user in
flight per process) is counted as shed, not as an error.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from bench.serve import WORDS, _pct, _text
from bench.serving import ServerDidNotStart, start_serve, verify_acknowledged
from bench.serving import stop as stop_server
from memagent.postgres import Database, PgKeyStore

OPS = ("remember", "recall", "chat")


@dataclass
class ProcStats:
    latencies: dict[str, list[float]] = field(default_factory=lambda: {op: [] for op in OPS})
    errors: list[str] = field(default_factory=list)
    acked: list[tuple[str, str, str]] = field(default_factory=list)  # (id, token, text)
    shed: int = 0  # 429: refused by the server's per-user admission (not an error)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _start(
    root: Path, env: dict[str, str], store: str, script: Path, keyword_only: bool
) -> tuple[subprocess.Popen[str], str]:
    args = [
        "--root", str(root), "--rate", "1000000", "--burst", "1000000", "--no-mcp",
        "--store", store, "--model", f"scripted:{script}", "--per-user", "64",
    ]  # fmt: skip
    if keyword_only:
        args.append("--keyword-only")
    try:
        return start_serve(args, env=env, timeout=90)
    except ServerDidNotStart as exc:
        raise SystemExit(str(exc)) from None


def _client(
    urls: list[str], key: str, stop: float, seed: int, stats: list[ProcStats], chat_share: float
) -> None:
    rng = random.Random(seed)
    headers = {"Authorization": f"Bearer {key}"}
    clients = [httpx.Client(base_url=u, headers=headers, timeout=60.0) for u in urls]
    conversation: str | None = None
    turn = seed
    try:
        while time.monotonic() < stop:
            turn += 1
            i = turn % len(urls)
            roll = rng.random()
            op = (
                "chat"
                if roll < chat_share
                else "recall"
                if roll < 0.5 + chat_share / 2
                else "remember"
            )
            t0 = time.perf_counter()
            token = text = ""
            try:
                if op == "recall":
                    q = " ".join(rng.sample(WORDS, 3))
                    r = clients[i].get("/v1/memories/search", params={"q": q, "k": 5})
                elif op == "remember":
                    token, text = _text(rng)
                    r = clients[i].post("/v1/memories", json={"text": text, "tags": ["bench"]})
                else:
                    body: dict[str, str] = {"message": f"What do I know about {rng.choice(WORDS)}?"}
                    if conversation is not None:
                        body["conversation_id"] = conversation
                    r = clients[i].post("/v1/chat", json=body)
            except httpx.HTTPError as exc:
                with stats[i].lock:
                    stats[i].errors.append(f"{op}: {exc!r}")
                continue
            elapsed = time.perf_counter() - t0
            with stats[i].lock:
                if r.status_code == 429:
                    stats[i].shed += 1
                    continue
                if r.status_code >= 300:
                    stats[i].errors.append(f"{op}: HTTP {r.status_code} {r.text[:200]}")
                    continue
                stats[i].latencies[op].append(elapsed)
                if op == "remember":
                    stats[i].acked.append((r.json()["id"], token, text))
                elif op == "chat":
                    conversation = r.json()["conversation_id"]
    finally:
        for c in clients:
            c.close()


def _run(
    n: int, tmp: Path, store: str, env: dict[str, str], script: Path, args: argparse.Namespace
) -> tuple[list[ProcStats], float, list[str], int]:
    with Database.open(store, max_size=1) as db:
        key, _ = PgKeyStore(db).create(user=f"bench{n}")
    procs = [_start(tmp / f"root-{n}-{i}", env, store, script, args.keyword_only) for i in range(n)]
    urls = [url for _, url in procs]
    try:
        for url in urls:  # warm each process (user stores, embedder) before the clock
            httpx.get(f"{url}/v1/memories/search", params={"q": "warm up"},
                      headers={"Authorization": f"Bearer {key}"}, timeout=120)  # fmt: skip
        stats = [ProcStats() for _ in urls]
        stop = time.monotonic() + args.duration
        threads = [
            threading.Thread(
                target=_client, args=(urls, key, stop, i, stats, args.chat_share), daemon=True
            )
            for i in range(args.clients)
        ]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t0
        lost: list[str] = []
        for i, s in enumerate(stats):  # read back through another process
            lost += verify_acknowledged(urls[(i + 1) % n], key, s.acked)
        acked = sum(len(s.acked) for s in stats)
    finally:
        for proc, _ in procs:
            stop_server(proc)
    return stats, wall, lost, acked


def _report(n: int, stats: list[ProcStats], wall: float, lost: list[str], acked: int) -> float:
    cores = os.cpu_count() or 1
    lat = {op: [v for s in stats for v in s.latencies[op]] for op in OPS}
    total = sum(len(v) for v in lat.values())
    errors = sum(len(s.errors) for s in stats)
    shed = sum(s.shed for s in stats)
    rps = total / wall
    print(
        f"{n} x serve: {total} requests in {wall:.1f}s = {rps:.1f} req/s "
        f"({rps / cores:.1f} per core), errors {errors}, shed (429) {shed}, "
        f"acknowledged remembers {acked}, not readable through another process {len(lost)}"
    )
    for op, values in lat.items():
        print(
            f"  {op:8s} n={len(values):5d}  p50={_pct(values, 50):7.1f} ms  "
            f"p95={_pct(values, 95):7.1f} ms"
        )
    for i, s in enumerate(stats):
        mine = [v for op in OPS for v in s.latencies[op]]
        print(
            f"  process {i + 1}: {len(mine) / wall:.1f} req/s  p95={_pct(mine, 95):7.1f} ms"
            f"  errors {len(s.errors)}"
        )
        for line in s.errors[:3]:
            print("    !", line)
    for line in lost[:10]:
        print("  ! lost", line)
    return rps


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=float, default=15.0, help="seconds of load per setup")
    ap.add_argument("--clients", type=int, default=6, help="concurrent clients (default 6)")
    ap.add_argument("--chat-share", type=float, default=0.2, help="share of chat turns (0-1)")
    ap.add_argument("--servers", default="1,2,3", help="process counts to run (default 1,2,3)")
    ap.add_argument("--keyword-only", action="store_true", help="no embeddings (faster)")
    args = ap.parse_args(argv)

    import pgserver

    counts = [int(c) for c in args.servers.split(",")]
    results: dict[int, float] = {}
    failed = False
    with tempfile.TemporaryDirectory(prefix="memagent-bench-pg-") as tmp_name:
        tmp = Path(tmp_name)
        env = {**os.environ, "MEMAGENT_HOME": str(tmp / "ambient")}
        script = tmp / "replies.json"
        script.write_text(json.dumps([json.dumps({"reply": "Noted."})] * 50_000))
        srv = pgserver.get_server(tmp / "pg", cleanup_mode="stop")
        srv.psql("CREATE EXTENSION IF NOT EXISTS vector;")
        try:
            mode = "keyword-only" if args.keyword_only else "hybrid"
            print(
                f"bench.postgres: {args.clients} clients, {args.duration:.0f}s per setup, {mode}, "
                f"chat share {args.chat_share:.0%}, {os.cpu_count()} cores"
            )
            for n in counts:
                stats, wall, lost, acked = _run(n, tmp, srv.get_uri(), env, script, args)
                results[n] = _report(n, stats, wall, lost, acked)
                failed |= bool(lost) or any(s.errors for s in stats)
        finally:
            srv.cleanup()
    base = results.get(counts[0])
    if base:
        for n in counts[1:]:
            print(f"ratio {n} x / {counts[0]} x serve throughput: {results[n] / base:.2f}x")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
