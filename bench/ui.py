"""Web page speed: the Search and Memories pages against the JSON API answering
the same request, in the same run, on the same live server.

    python -m bench.ui [--sizes 10000 100000] [--queries 60] [--keyword-only]

For each store size, a user's index is bulk-loaded with synthetic chunks (as
`bench.store` does: no files, random unit vectors standing in for embeddings),
`memagent serve` runs on loopback, and a client signed in to `/ui` with the
user's key times, per request, the time to first byte (TTFB) and the whole
response (the HTML document, or the JSON):

- Search: `GET /ui/search?q=Q&k=10` vs `GET /v1/memories/search?q=Q&k=10`;
- Memories: `GET /ui/memories` (one page of 50, newest first, and the next page
  by its cursor) vs `GET /v1/memories?limit=50`.

Each query is sent to both, in alternating order, so the query-embedding cache
helps each side equally often. The target is page ≤ 1.5 × API (p50). Static
files (CSS, htmx) are cached by a browser after the first page and are not
counted.
"""

from __future__ import annotations

import argparse
import re
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import numpy as np

from bench.store import TextGen, bulk_load
from memagent.api_keys import KeyStore
from memagent.core import MemoryHome
from memagent.embeddings import load_embedder
from memagent.index import Index
from memagent.server import ServerSettings, create_app
from memagent.server.testing import LiveServer
from memagent.setup import init_home

USER = "bench"


def timed(client: httpx.Client, url: str) -> tuple[float, float]:
    """(TTFB, total) in milliseconds for one GET, body read to the end."""
    t0 = time.perf_counter()
    with client.stream("GET", url) as r:
        first: float | None = None
        for _ in r.iter_raw(16_384):
            if first is None:
                first = time.perf_counter()
        end = time.perf_counter()
        if r.status_code != 200:
            raise SystemExit(f"{url}: HTTP {r.status_code}")
    return 1000 * ((first or end) - t0), 1000 * (end - t0)


def p(values: list[float], q: float) -> float:
    return float(np.percentile(np.array(values), q))


def sign_in(base: str, key: str) -> httpx.Client:
    client = httpx.Client(base_url=base, timeout=120)
    form = client.get("/ui/login").text
    pre = re.search(r'name="pre" value="([^"]+)"', form)
    assert pre, "no sign-in form"
    done = client.post("/ui/login", data={"key": key, "pre": pre.group(1)})
    if done.status_code != 303:
        raise SystemExit(f"sign-in failed: HTTP {done.status_code}")
    return client


def compare(
    label: str, n: int, page_url: Callable[[int], str], api_url: Callable[[int], str],
    ui: httpx.Client, api: httpx.Client,
) -> tuple[float, float]:  # fmt: skip
    page_t: list[tuple[float, float]] = []
    api_t: list[tuple[float, float]] = []
    for i in range(n):
        if i % 2:
            page_t.append(timed(ui, page_url(i)))
            api_t.append(timed(api, api_url(i)))
        else:
            api_t.append(timed(api, api_url(i)))
            page_t.append(timed(ui, page_url(i)))
    rows = []
    for name, data in (("page", page_t), ("api", api_t)):
        ttfb = [a for a, _ in data]
        full = [b for _, b in data]
        rows.append((name, p(ttfb, 50), p(ttfb, 95), p(full, 50), p(full, 95)))
    for name, t50, t95, f50, f95 in rows:
        print(
            f"  {label:<9} {name:<5} TTFB p50 {t50:7.2f} ms  p95 {t95:7.2f} ms   "
            f"full p50 {f50:7.2f} ms  p95 {f95:7.2f} ms"
        )
    ratio_ttfb = rows[0][1] / rows[1][1]
    ratio_full = rows[0][3] / rows[1][3]
    verdict = "ok" if ratio_full <= 1.5 else "OVER TARGET"
    print(
        f"  {label:<9} page/api p50: TTFB {ratio_ttfb:.2f}x, full {ratio_full:.2f}x "
        f"(target <= 1.5x: {verdict})"
    )
    return ratio_ttfb, ratio_full


def run_size(size: int, queries: int, hybrid: bool, gen: TextGen) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="bench-ui-") as tmp:
        root = Path(tmp) / "server"
        key, _ = KeyStore(root).create(user=USER)
        home = MemoryHome.open(root / "users" / USER)
        init_home(home)
        embedder = load_embedder(enabled=True) if hybrid else None
        t0 = time.perf_counter()
        idx = Index(home.layout.index, embedder)
        bulk_load(idx, gen, size, vectors=embedder is not None, start=1_000_000)
        idx.close()
        build = time.perf_counter() - t0
        mode = "hybrid" if embedder is not None else "keyword-only"
        print(f"\n{size:,} chunks ({mode}; index bulk-loaded in {build:.1f} s)")
        settings = ServerSettings(
            mcp=False, embeddings=embedder is not None, rate_per_second=1e6, rate_burst=10**6
        )
        with LiveServer(create_app(root, settings)) as live:
            ui = sign_in(live.url, key)
            api = httpx.Client(
                base_url=live.url, headers={"Authorization": f"Bearer {key}"}, timeout=120
            )
            words = [gen.query() for _ in range(queries + 2)]
            # Warm both paths once (model load, index open, template compile).
            timed(api, f"/v1/memories/search?q={words[-1]}&k=10")
            timed(ui, f"/ui/search?q={words[-2]}&k=10")
            timed(api, "/v1/memories?limit=50")
            timed(ui, "/ui/memories")
            s_ttfb, s_full = compare(
                "search", queries,
                lambda i: f"/ui/search?q={words[i]}&k=10",
                lambda i: f"/v1/memories/search?q={words[i]}&k=10",
                ui, api,
            )  # fmt: skip
            html = ui.get("/ui/memories").text
            cursor = re.search(r'<a rel="next" href="([^"]+)"', html)
            second = cursor.group(1).replace("&amp;", "&") if cursor else "/ui/memories"
            m_ttfb, m_full = compare(
                "memories", queries,
                lambda i: "/ui/memories" if i % 4 < 2 else second,
                lambda i: "/v1/memories?limit=50",
                ui, api,
            )  # fmt: skip
            ui.close()
            api.close()
    return {"search": s_full, "memories": m_full, "search_ttfb": s_ttfb, "memories_ttfb": m_ttfb}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000])
    ap.add_argument("--queries", type=int, default=60, help="requests per page and size")
    ap.add_argument("--keyword-only", action="store_true", help="no embeddings")
    args = ap.parse_args(argv)
    hybrid = not args.keyword_only and load_embedder(enabled=True) is not None
    gen = TextGen(seed=11)
    results = {size: run_size(size, args.queries, hybrid, gen) for size in args.sizes}
    print("\nsummary (page/api, p50 of the whole response; target <= 1.5x):")
    for size, r in results.items():
        print(
            f"  {size:>9,} chunks: search {r['search']:.2f}x, memories {r['memories']:.2f}x"
            f"  (TTFB: {r['search_ttfb']:.2f}x, {r['memories_ttfb']:.2f}x)"
        )
    worst = max(max(r["search"], r["memories"]) for r in results.values())
    print(f"  worst {worst:.2f}x; spread over sizes: "
          f"{statistics.pstdev([r['search'] for r in results.values()]):.2f} (search)")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
