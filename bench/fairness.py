"""Fair sharing in `memagent serve`: a victim's latency with and without an attacker.

Starts a real server (uvicorn, in a subprocess of this script) with a slow
scripted model (each reply takes `--model-delay` seconds, like a busy LLM), two
users, then measures in one run:

1. baseline: the victim alone, for D seconds, repeating a mix of requests:
   `GET /v1/me`, `GET /v1/memories/search`, a 2-action `POST /v1/vault/actions`
   batch and a `POST /v1/chat/completions`;
2. under attack, twice: the same victim while the attacker (a process of its
   own, as another client would be), from one key, floods the server with 45
   concurrent slow chat completions and 4 concurrent catastrophic regex searches
   (`(a|aa)+$` over 100 lines of `'a'*28+'!'`), re-sending each as soon as it is
   answered, so its own limits stay saturated. `polite`: a refused request is
   re-sent after the Retry-After asked; `hammer`: at once (`--hammer S`: after S
   seconds), ignoring Retry-After.

It prints the victim's p50/p99 per phase and their ratio to the victim alone
(target: p99 within 2x), the victim's errors (there should be none), and how the
attacker's requests were answered (mostly 429: it saturates its own limits).

    python -m bench.fairness                   # 10 s per phase, both attackers
    python -m bench.fairness --duration 5 --modes hammer
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx

EVIL = ("a" * 28 + "!\n") * 100
SEARCH = {"actions": [{"action": "search_files", "query": "(a|aa)+$", "regex": True}]}
BATCH = {
    "actions": [
        {"action": "read_file", "path": "user.md"},
        {"action": "list_files", "path": ""},
    ]
}


def _serve(root: str, port: str, delay: str) -> None:
    """The server process: the app with a slow scripted model on 127.0.0.1:PORT."""
    import uvicorn

    from memagent.llm import ScriptedLLM
    from memagent.server import ServerSettings, create_app

    llm = ScriptedLLM(fn=lambda messages, schema: "A considered answer.", delay_s=float(delay))
    app = create_app(Path(root), ServerSettings(mcp=False, embeddings=False), llm=llm)
    uvicorn.run(app, host="127.0.0.1", port=int(port), log_level="warning")


@dataclass
class Victim:
    latencies: list[float] = field(default_factory=list)
    per_kind: dict[str, list[float]] = field(default_factory=dict)
    errors: Counter[str] = field(default_factory=Counter)


def _victim(url: str, key: str, seconds: float) -> Victim:
    out = Victim()
    chat = {
        "model": "m",
        "messages": [{"role": "user", "content": "What do I like?"}],
        "memory": {"recall_k": 0, "remember": False},
    }
    ops = [
        ("me", "GET", "/v1/me", None),
        ("search", "GET", "/v1/memories/search?q=tea&k=5", None),
        ("actions", "POST", "/v1/vault/actions", BATCH),
        ("chat", "POST", "/v1/chat/completions", chat),
    ]
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=url, headers=headers, timeout=120) as client:
        end = time.monotonic() + seconds
        i = 0
        while time.monotonic() < end:
            kind, method, path, body = ops[i % len(ops)]
            i += 1
            t0 = time.perf_counter()
            r = client.request(method, path, json=body)
            dt = time.perf_counter() - t0
            if r.status_code != 200:
                out.errors[f"{kind} {r.status_code}"] += 1
                continue
            out.latencies.append(dt)
            out.per_kind.setdefault(kind, []).append(dt)
    return out


def _attacker(
    url: str, key: str, stop: threading.Event, codes: Counter[str], chat: bool, hammer: float
) -> None:
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": "x"}],
        "memory": {"recall_k": 0, "remember": False},
        "max_tokens": 32768,
    }
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=url, headers=headers, timeout=120) as client:
        while not stop.is_set():
            try:
                if chat:
                    r = client.post("/v1/chat/completions", json=body)
                else:
                    r = client.post("/v1/vault/actions", json=SEARCH)
            except httpx.HTTPError as exc:
                codes[type(exc).__name__] += 1
                continue
            codes[f"{'chat' if chat else 'regex'} {r.status_code}"] += 1
            if r.status_code in (429, 503):
                wait = hammer if hammer >= 0 else float(r.headers.get("Retry-After", "1"))
                stop.wait(wait)


def _attack(url: str, key: str, flood: int, regex: int, hammer: float, seconds: float) -> None:
    """The attacker's process: its threads for `seconds`, then its answers as JSON."""
    stop = threading.Event()
    codes: Counter[str] = Counter()
    threads = [
        threading.Thread(target=_attacker, args=(url, key, stop, codes, i < flood, hammer))
        for i in range(flood + regex)
    ]
    for t in threads:
        t.start()
    stop.wait(seconds)
    stop.set()
    for t in threads:
        t.join()
    print(json.dumps(dict(codes)), flush=True)


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _wait_up(url: str, timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            if httpx.get(url + "/health", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise SystemExit("the server did not start")


def _report(name: str, v: Victim) -> None:
    p50, p99 = _pct(v.latencies, 0.5) * 1000, _pct(v.latencies, 0.99) * 1000
    kinds = ", ".join(
        f"{k} p50 {statistics.median(xs) * 1000:.0f} ms" for k, xs in sorted(v.per_kind.items())
    )
    errors = dict(v.errors) or "none"
    print(f"{name:13s} {len(v.latencies):5d} requests  p50 {p50:7.1f} ms  p99 {p99:7.1f} ms")
    print(f"{'':13s} {kinds}; errors: {errors}")


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "--serve":
        _serve(*sys.argv[2:])
        return
    if len(sys.argv) == 8 and sys.argv[1] == "--attack":
        url, key, flood, regex, hammer, seconds = sys.argv[2:]
        _attack(url, key, int(flood), int(regex), float(hammer), float(seconds))
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=float, default=10.0, help="seconds per phase")
    ap.add_argument("--model-delay", type=float, default=0.3, help="seconds per model reply")
    ap.add_argument("--flood", type=int, default=45, help="attacker's concurrent chats")
    ap.add_argument("--regex", type=int, default=4, help="attacker's concurrent regex searches")
    ap.add_argument(
        "--modes",
        default="polite,hammer",
        help="attackers, in order: polite (waits the Retry-After), hammer (does not)",
    )
    ap.add_argument(
        "--hammer", type=float, default=0.0, help="seconds the hammering attacker waits"
    )
    args = ap.parse_args()

    from memagent.server import KeyStore

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "server"
        keys = KeyStore(root)
        victim_key, _ = keys.create(user="victim")
        attacker_key, _ = keys.create(user="attacker")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        cmd = [sys.executable, "-m", "bench.fairness", "--serve", str(root), str(port)]
        proc = subprocess.Popen([*cmd, str(args.model_delay)])
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_up(url)
            auth = {"Authorization": f"Bearer {attacker_key}"}
            httpx.put(
                url + "/v1/vault/notes/evil.md", json={"content": EVIL}, headers=auth, timeout=30
            ).raise_for_status()
            vauth = {"Authorization": f"Bearer {victim_key}"}
            httpx.post(
                url + "/v1/memories", json={"text": "I like green tea."}, headers=vauth, timeout=30
            ).raise_for_status()
            _victim(url, victim_key, 1.0)  # warm up (stores open, code paths loaded)
            alone = _victim(url, victim_key, args.duration)
            attacked: dict[str, tuple[Victim, dict[str, int]]] = {}
            for mode in args.modes.split(","):
                hammer = -1.0 if mode == "polite" else max(0.0, args.hammer)
                attack = [
                    sys.executable, "-m", "bench.fairness", "--attack", url, attacker_key,
                    str(args.flood), str(args.regex), str(hammer), str(args.duration + 1.5),
                ]  # fmt: skip
                attacker = subprocess.Popen(attack, stdout=subprocess.PIPE, text=True)
                time.sleep(1.0)  # the attack is at full strength before we measure
                victim = _victim(url, victim_key, args.duration)
                out, _ = attacker.communicate(timeout=300)
                attacked[mode] = (victim, json.loads(out.strip().splitlines()[-1]))
                time.sleep(1.5)  # the attacker's last requests drain
        finally:
            proc.terminate()
            proc.wait(timeout=30)

    print(
        f"memagent serve fairness: model reply {args.model_delay}s, attacker "
        f"{args.flood} chats + {args.regex} regex searches in flight, {args.duration:g}s a phase"
    )
    _report("victim alone", alone)
    for mode, (victim, codes) in attacked.items():
        _report(f"+ {mode}", victim)
        r50 = _pct(victim.latencies, 0.5) / _pct(alone.latencies, 0.5)
        r99 = _pct(victim.latencies, 0.99) / _pct(alone.latencies, 0.99)
        verdict = "within" if r99 <= 2.0 else "OVER"
        print(f"{'':13s} ratio to alone: p50 {r50:.2f}x, p99 {r99:.2f}x ({verdict} the 2x target)")
        print(f"{'':13s} attacker's answers: {dict(sorted(codes.items()))}")


if __name__ == "__main__":
    main()
