"""The web page in a real browser: Playwright driving Debian's chromium
(`/usr/bin/chromium`; `.ci/run` installs it with apt). One browser for the
module; screenshots of each page land in `test-artifacts/ui/` (gitignored)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from memagent import Memory
from memagent.llm import ScriptedLLM
from memagent.server import KeyStore, ServerSettings, create_app
from memagent.server.testing import LiveServer

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts" / "ui"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

playwright_api = pytest.importorskip("playwright.sync_api")
pytestmark = [
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="needs Debian's chromium (.ci/run installs it)"
    ),
    pytest.mark.timeout(240),
    pytest.mark.slow,
]

LABELS_JS = """() => [...document.querySelectorAll('input, select, textarea')]
  .filter(e => e.type !== 'hidden')
  .filter(e => !(e.id && document.querySelector(`label[for="${e.id}"]`))
               && !e.getAttribute('aria-label') && !e.closest('label'))
  .map(e => e.outerHTML.slice(0, 120))"""

CONTRAST_JS = """() => {
  const rgb = s => (s.match(/[\\d.]+/g) || []).slice(0, 3).map(Number);
  const lum = c => { const v = c.map(x => { x /= 255; return x <= 0.03928 ? x / 12.92
                      : Math.pow((x + 0.055) / 1.055, 2.4); });
                     return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]; };
  const bgOf = el => { for (let e = el; e; e = e.parentElement) {
      const b = getComputedStyle(e).backgroundColor;
      if (b && !b.startsWith('rgba(0, 0, 0, 0)') && b !== 'transparent') return rgb(b); }
    return [255, 255, 255]; };
  const bad = [];
  const sel = 'p, a, label, button, h1, h2, td, th, li, span, dt, dd';
  for (const el of document.querySelectorAll(sel)) {
    if (!el.offsetParent || !el.textContent.trim()) continue;
    const a = lum(rgb(getComputedStyle(el).color)), b = lum(bgOf(el));
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    if (ratio < 4.5) bad.push(`${el.tagName} ${ratio.toFixed(2)} ${el.textContent.slice(0, 40)}`);
  }
  return bad;
}"""


def _model(messages: list[Any], schema: dict[str, Any] | None) -> str:
    props = (schema or {}).get("properties", {})
    if "facts" in props:
        return '{"facts": []}'
    if "reply" in props:
        return json.dumps({"reply": "You drink green tea, as you told me."})
    return "You drink green tea, as you told me."


@dataclass
class Site:
    url: str
    keys: dict[str, str]
    alice: Memory
    ids: dict[str, str]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    root = tmp_path_factory.mktemp("ui-browser") / "server"
    store = KeyStore(root)
    keys = {u: store.create(user=u)[0] for u in ("alice", "bob")}
    app = create_app(root, ServerSettings(mcp=False, embeddings=False), llm=ScriptedLLM(fn=_model))
    with LiveServer(app) as live:
        alice: Memory = app.state.server.memory_for("alice")
        ids = {
            "tea": alice.remember("I drink green tea every morning.", tags=["drink"])[0].id,
            "car": alice.remember("The car is parked on level 2.", tags=["car"])[0].id,
        }
        alice.write_note("entities/jane_doe.md", "# Jane Doe\n\nMy sister. See [[user]].\n")
        alice.write_note("user.md", "# Me\n\nMy sister is [[Jane Doe]].\n")
        alice.profile_apply(
            [{"operation": "append", "file": "resource_user_food_prefs.json",
              "path": "food.likes", "value": {"item": "dumplings"}}]
        )  # fmt: skip
        yield Site(live.url, keys, alice, ids)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser: Any, site: Site) -> Iterator[Any]:
    context = browser.new_context(base_url=site.url)
    pg = context.new_page()
    pg.set_default_timeout(15_000)
    alerts: list[str] = []
    pg.on("dialog", lambda d: (alerts.append(d.message), d.dismiss()))
    pg.alerts = alerts
    pg.goto("/ui/login")
    pg.get_by_label("API key").fill(site.keys["alice"])
    pg.get_by_role("button", name="Sign in").click()
    pg.wait_for_url("**/ui/search")
    yield pg
    assert alerts == [], "a script from memory ran in the page"
    context.close()


def shot(pg: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    pg.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def test_search_open_edit_and_find_again(page: Any, site: Site) -> None:
    shot(page, "search-empty")
    page.get_by_label("Search memory").fill("green tea")
    page.get_by_role("button", name="Search").click()
    hit = page.locator("article.hit").first
    hit.wait_for()
    assert "score" in hit.inner_text() and "why" in hit.inner_text()
    shot(page, "search-hits")
    hit.get_by_role("link", name="Open memory").click()
    page.wait_for_url(f"**/ui/memories/{site.ids['tea']}")
    shot(page, "memory")
    page.get_by_label("Text").fill("I drink jasmine tea every evening.")
    page.get_by_label("Tags (comma separated)").fill("drink, evening")
    page.get_by_role("button", name="Save").click()
    page.get_by_text("Saved. The memory was re-indexed.").wait_for()
    page.goto("/ui/search?q=jasmine")
    assert site.ids["tea"] in page.locator("#results").inner_html()
    page.goto("/ui/memories")
    page.get_by_text("jasmine tea").first.wait_for()
    shot(page, "memories")


def test_profile_expiry(page: Any, site: Site) -> None:
    page.goto("/ui/profile")
    row = page.locator("tr", has_text="dumplings")
    row.get_by_label("Expiry").fill("2999-12-31")
    row.get_by_role("button", name="Save").click()
    page.get_by_text("expires: 2999-12-31").wait_for()
    shot(page, "profile")
    likes = site.alice.profile_show("user_food_prefs")["resource_user_food_prefs.json"]
    assert likes["food"]["likes"][0]["expiry"] == "2999-12-31"


def test_note_edit_wikilink_and_backlink(page: Any, site: Site) -> None:
    page.goto("/ui/notes")
    shot(page, "notes")
    page.get_by_role("link", name="user.md").click()
    page.get_by_role("link", name="Edit this note").click()
    page.get_by_label("Markdown").fill("# Me\n\nMy sister is [[Jane Doe]]. I like <b>tea</b>.\n")
    page.get_by_role("button", name="Save").click()
    page.get_by_role("link", name="Jane Doe").click()
    page.wait_for_url(re.compile(r".*/ui/notes/view\?path=entities/jane_doe\.md$"))
    shot(page, "note")
    page.locator("#backlinks").get_by_role("link", name="user.md").click()
    page.wait_for_url(re.compile(r".*path=user\.md$"))
    assert "I like" in page.locator("#note-body").inner_text()
    assert site.alice.read_note("user.md").startswith("# Me\n\nMy sister is [[Jane Doe]]. I like")


def test_undo_from_activity(page: Any, site: Site) -> None:
    site.alice.update(site.ids["car"], text="The car is parked on level 5.")
    page.goto("/ui/activity")
    entry = page.locator("li.card", has_text="level 5").first
    shot(page, "activity")
    entry.get_by_role("button", name="Undo").click()
    page.get_by_text(re.compile(r"Undid edit-")).wait_for()
    assert site.alice.get(site.ids["car"]).content == "The car is parked on level 2."


def test_chat_streams_with_memories_used(page: Any, site: Site) -> None:
    page.goto("/ui/chat")
    page.get_by_label("Message").fill("What do I drink?")
    page.get_by_role("button", name="Send").click()
    page.locator("#chat-status", has_text="done").wait_for()
    assert "green tea" in page.locator("#chat-log .reply").last.inner_text()
    assert page.locator("#chat-sources li").count() >= 1
    shot(page, "chat")
    page.goto("/ui/status")
    shot(page, "status")


def test_hostile_memory_never_runs(page: Any, site: Site) -> None:
    site.alice.write_note(
        "entities/evil.md",
        "# Evil\n\n<script>alert('x')</script>\n\n<img src=x onerror=alert('y')>\n\n"
        "[go](javascript:alert('z'))\n",
    )
    site.alice.remember("<img src=x onerror=alert('chunk')> <script>alert('c')</script>")
    for url in ("/ui/notes/view?path=entities/evil.md", "/ui/memories", "/ui/search?q=alert"):
        page.goto(url)
        page.wait_for_load_state("load")
    links = page.eval_on_selector_all("a[href]", "els => els.map(e => e.getAttribute('href'))")
    assert not any(h.lower().startswith("javascript:") for h in links)
    assert page.alerts == []


def test_accessibility_basics(page: Any, site: Site) -> None:
    for url in (
        "/ui/search?q=tea",
        "/ui/memories",
        f"/ui/memories/{site.ids['car']}",
        "/ui/notes",
        "/ui/notes/edit?path=user.md",
        "/ui/profile",
        "/ui/activity",
        "/ui/status",
        "/ui/chat",
    ):
        page.goto(url)
        assert page.evaluate(LABELS_JS) == [], f"inputs without a label on {url}"
        assert page.evaluate(CONTRAST_JS) == [], f"low contrast on {url}"
        assert page.locator("main#main").count() == 1
        assert page.locator("h1").count() >= 1
    # Keyboard: the first Tab reaches the skip link, then the main navigation in order.
    page.goto("/ui/memories")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    order = []
    for _ in range(7):
        page.keyboard.press("Tab")
        order.append(page.evaluate("document.activeElement.textContent"))
    assert order == ["Search", "Memories", "Notes", "Profile", "Activity", "Status", "Chat"]
    page.goto("/ui/memories")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"


def test_reading_and_chat_work_with_javascript_off(browser: Any, site: Site) -> None:
    context = browser.new_context(base_url=site.url, java_script_enabled=False)
    pg = context.new_page()
    pg.set_default_timeout(15_000)
    pg.goto("/ui/login")
    shot(pg, "login")
    pg.get_by_label("API key").fill(site.keys["alice"])
    pg.get_by_role("button", name="Sign in").click()
    pg.wait_for_url("**/ui/search")
    pg.get_by_label("Search memory").fill("parked")
    pg.get_by_role("button", name="Search").click()
    pg.wait_for_url("**/ui/search?q=parked*")
    assert site.ids["car"] in pg.locator("#results").inner_html()
    pg.goto("/ui/notes/view?path=user.md")
    assert "Jane Doe" in pg.locator("#note-body").inner_text()
    pg.goto("/ui/chat")
    pg.get_by_label("Message").fill("What do I drink?")
    pg.get_by_role("button", name="Send").click()
    pg.locator(".reply", has_text="green tea").wait_for()
    assert pg.locator("#chat-sources li").count() >= 1
    context.close()
