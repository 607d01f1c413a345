"""Load on `memagent serve` over loopback: concurrent clients, mixed remember/recall.

Starts a real `memagent serve` subprocess on a fresh server root, runs N client
threads (default 8) for D seconds (default 30) against one user, each doing a
mix of `POST /v1/memories` and `GET /v1/memories/search`, and reports
throughput, p50/p95/p99 latency per operation and every error. Afterwards it
checks that every acknowledged remember is there: readable by id with the same
text, and recallable (its unique token finds it in the top 5).

Baseline, measured in the same run: the same mix done in-process through
`memagent.Memory` on one thread (no HTTP, no concurrency), so the ratio shows
what serving costs or gains.

    python -m bench.serve                    # 8 clients, 30 s
    python -m bench.serve --duration 5       # a short run
"""

from __future__ import annotations

import argparse
import os
import random
import secrets
import statistics
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from bench.serving import ServerDidNotStart, start_serve, verify_acknowledged
from bench.serving import stop as stop_server
from memagent.api import Memory
from memagent.server import KeyStore

WORDS = [
    "tea", "coffee", "garden", "meeting", "paris", "budget", "python", "deadline",
    "birthday", "dentist", "guitar", "marathon", "invoice", "recipe", "train", "ticket",
    "laptop", "holiday", "sister", "project", "review",
]  # fmt: skip


@dataclass
class Stats:
    latencies: dict[str, list[float]] = field(
        default_factory=lambda: {"remember": [], "recall": []}
    )
    errors: list[str] = field(default_factory=list)
    acked: list[tuple[str, str, str]] = field(default_factory=list)  # (id, token, text)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _text(rng: random.Random) -> tuple[str, str]:
    token = "tok" + secrets.token_hex(6)
    words = " ".join(rng.choice(WORDS) for _ in range(12))
    return token, f"Note {token}: {words}."


def _client(url: str, key: str, deadline: float, seed: int, recall_share: float, st: Stats) -> None:
    rng = random.Random(seed)
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=url, headers=headers, timeout=30.0) as client:
        while time.monotonic() < deadline:
            recall = rng.random() < recall_share
            t0 = time.perf_counter()
            try:
                if recall:
                    q = " ".join(rng.sample(WORDS, 3))
                    r = client.get("/v1/memories/search", params={"q": q, "k": 5})
                else:
                    token, text = _text(rng)
                    r = client.post("/v1/memories", json={"text": text, "tags": ["bench"]})
            except httpx.HTTPError as exc:
                with st.lock:
                    st.errors.append(f"{'recall' if recall else 'remember'}: {exc!r}")
                continue
            elapsed = time.perf_counter() - t0
            op = "recall" if recall else "remember"
            with st.lock:
                if r.status_code >= 300:
                    st.errors.append(f"{op}: HTTP {r.status_code} {r.text[:200]}")
                    continue
                st.latencies[op].append(elapsed)
                if not recall:
                    st.acked.append((r.json()["id"], token, text))


def _pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))] * 1000


def _baseline(home: Path, duration: float, recall_share: float, keyword_only: bool) -> float:
    """Operations per second in-process, one thread, same mix."""
    rng = random.Random(0)
    done = 0
    with Memory.open(home, embeddings=False if keyword_only else None) as mem:
        mem.recall("warm up", k=1)
        deadline = time.monotonic() + duration
        while time.monotonic() < deadline:
            if rng.random() < recall_share:
                mem.recall(" ".join(rng.sample(WORDS, 3)), k=5)
            else:
                mem.remember(_text(rng)[1], tags=["bench"])
            done += 1
    return done / duration


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=float, default=30.0, help="seconds of load (default 30)")
    ap.add_argument("--clients", type=int, default=8, help="concurrent clients (default 8)")
    ap.add_argument("--recall-share", type=float, default=0.5, help="share of recalls (0-1)")
    ap.add_argument("--keyword-only", action="store_true", help="no embeddings (faster)")
    args = ap.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="memagent-bench-serve-") as tmp:
        root = Path(tmp) / "server"
        key, _ = KeyStore(root).create(user="bench")
        cmd = [
            "--root", str(root), "--rate", "1000000", "--burst", "1000000", "--no-mcp",
        ]  # fmt: skip
        if args.keyword_only:
            cmd.append("--keyword-only")
        env = {**os.environ, "MEMAGENT_HOME": str(Path(tmp) / "ambient")}
        try:
            proc, url = start_serve(cmd, env=env)
        except ServerDidNotStart as exc:
            print(exc)
            return 1
        try:
            # Warm the user's index (and the embedder) before the clock starts.
            httpx.get(
                f"{url}/v1/memories/search",
                params={"q": "warm up"},
                headers={"Authorization": f"Bearer {key}"},
                timeout=60,
            )
            st = Stats()
            stop = time.monotonic() + args.duration
            threads = [
                threading.Thread(
                    target=_client, args=(url, key, stop, i, args.recall_share, st), daemon=True
                )
                for i in range(args.clients)
            ]
            t0 = time.perf_counter()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            wall = time.perf_counter() - t0
            lost = verify_acknowledged(url, key, st.acked)
        finally:
            stop_server(proc)

        baseline_s = max(2.0, args.duration / 3)
        base = _baseline(
            Path(tmp) / "baseline-home", baseline_s, args.recall_share, args.keyword_only
        )

    total = sum(len(v) for v in st.latencies.values())
    rps = total / wall
    print(f"memagent serve: {args.clients} clients, {wall:.1f}s, recall share {args.recall_share}")
    print(f"  requests ok: {total}   throughput: {rps:.1f} req/s   errors: {len(st.errors)}")
    for op, values in st.latencies.items():
        print(
            f"  {op:8s} n={len(values):5d}  p50={_pct(values, 50):7.1f} ms  "
            f"p95={_pct(values, 95):7.1f} ms  p99={_pct(values, 99):7.1f} ms"
            + (f"  mean={statistics.fmean(values) * 1000:.1f} ms" if values else "")
        )
    print(f"  acknowledged remembers: {len(st.acked)}   lost or not recallable: {len(lost)}")
    print(f"baseline (in-process Memory, 1 thread, {baseline_s:.0f}s): {base:.1f} ops/s")
    print(f"ratio served/in-process throughput: {rps / base:.2f}x")
    for line in (st.errors + lost)[:20]:
        print("  !", line)
    return 0 if not st.errors and not lost else 1


if __name__ == "__main__":
    raise SystemExit(main())
