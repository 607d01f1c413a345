"""The web page in a real browser: Playwright driving Debian's chromium
(`/usr/bin/chromium`; `.ci/run` installs it with apt). One browser for the
module. Every page is opened at a phone width (390 px) and a desktop width
(1280 px): no horizontal overflow, no console error, no failed request (the
favicon included), and a screenshot in `bench/results/ui/` (gitignored) to look
at. Search is checked for score order and its relevance cut, Notes for the
message a refused path gets."""

from __future__ import annotations

import json
import re
import threading
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
ARTIFACTS = Path(__file__).resolve().parents[1] / "bench" / "results" / "ui"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
WIDTHS = {"phone": 390, "desktop": 1280}

playwright_api = pytest.importorskip("playwright.sync_api")
pytestmark = [
    pytest.mark.skipif(
        not CHROMIUM.exists(), reason="needs Debian's chromium (.ci/run installs it)"
    ),
    pytest.mark.timeout(300),
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

# What sticks out past the viewport's right edge (the page scrolls sideways).
OVERFLOW_JS = """() => {
  const w = document.documentElement.clientWidth;
  const wide = [...document.querySelectorAll('body *')]
    .filter(e => e.getBoundingClientRect().right > w + 1 && e.offsetParent !== null)
    .map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right));
  return {scroll: document.documentElement.scrollWidth, width: w, wide: wide.slice(0, 5)};
}"""

QUESTION = "What should I drink before a run?"


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


def _exchange(memory: Memory, user: str, reply: str, conversation: str, turn: int) -> str:
    """A stored chat turn, as the agent stores one (`MemoryAccess.store_exchange`)."""
    question = user.rstrip().endswith("?")
    with memory.guard:
        chunk = memory.chunks.create(
            user,
            tags=["conversation", *(["question"] if question else [])],
            conversation_id=conversation,
            source={"kind": "agent_exchange", "role": "user",
                    "type": "question" if question else "statement",
                    "user": user, "reply": reply, "turn": turn},
        )  # fmt: skip
    return chunk.id


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
            "teashop": alice.remember(
                "The tea shop on Rua Augusta sells a smoky lapsang tea, and its owner Marta "
                "also roasts coffee; I go there most Saturdays after the market.",
                tags=["shops"],
            )[0].id,
            "long": alice.remember(
                "A very long unbroken identifier: "
                "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
            )[0].id,
        }
        ids["asked"] = _exchange(alice, QUESTION, "Green tea, an hour before.", "chat-1", 1)
        ids["said"] = _exchange(
            alice, "I run 10 km on Sundays.", "Noted: you run 10 km.", "chat-1", 2
        )
        alice.write_note("entities/jane_doe.md", "# Jane Doe\n\nMy sister. See [[user]].\n")
        alice.write_note("user.md", "# Me\n\nMy sister is [[Jane Doe]]. I like tea.\n")
        alice.profile_apply(
            [{"operation": "append", "file": "resource_user_food_prefs.json",
              "path": "food.likes", "value": {"item": "dumplings"}},
             {"operation": "append", "file": "resource_user_food_prefs.json",
              "path": "food.likes", "value": {"item": "pastel de nata",
              "display": "Pastéis de nata from the bakery near the river, warm, with cinnamon"}}]
        )  # fmt: skip
        alice.update(ids["car"], text="The car is parked on level 3.")
        yield Site(live.url, keys, alice, ids)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()


def _open(browser: Any, site: Site, width: int, *, sign_in: bool = True) -> Any:
    context = browser.new_context(base_url=site.url, viewport={"width": width, "height": 900})
    pg = context.new_page()
    pg.set_default_timeout(20_000)
    pg.alerts = []
    pg.errors = []
    pg.on("dialog", lambda d: (pg.alerts.append(d.message), d.dismiss()))
    pg.on("console", lambda m: pg.errors.append(m.text) if m.type == "error" else None)
    pg.on("pageerror", lambda e: pg.errors.append(f"page error: {e}"))
    pg.on(
        "response",
        lambda r: pg.errors.append(f"HTTP {r.status} {r.url}") if r.status >= 400 else None,
    )
    if sign_in:
        pg.goto("/ui/login")
        pg.get_by_label("API key").fill(site.keys["alice"])
        pg.get_by_role("button", name="Sign in").click()
        pg.wait_for_url("**/ui/search")
    return pg


@pytest.fixture
def page(browser: Any, site: Site) -> Iterator[Any]:
    pg = _open(browser, site, WIDTHS["desktop"])
    yield pg
    assert pg.alerts == [], "a script from memory ran in the page"
    pg.context.close()


def shot(pg: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    # caret="initial": hiding the caret injects a style, which the page's CSP refuses.
    pg.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True, caret="initial")


def check_page(pg: Any, name: str, *, allowed: tuple[str, ...] = (), busy: bool = False) -> None:
    """Fits the width, nothing failed, a screenshot taken (`busy`: while a reply
    streams or the model's state is polled, the network never goes idle)."""
    pg.wait_for_load_state("load" if busy else "networkidle")
    box = pg.evaluate(OVERFLOW_JS)
    assert box["scroll"] <= box["width"], f"{name}: wider than the screen: {box}"
    errors = [e for e in pg.errors if not any(a in e for a in allowed)]
    assert errors == [], f"{name}: {errors}"
    pg.errors.clear()
    shot(pg, name)


def scores(pg: Any) -> list[float]:
    return [
        float(s) for s in pg.eval_on_selector_all("li.hit", "els => els.map(e => e.dataset.score)")
    ]


@pytest.mark.parametrize("width", WIDTHS)
def test_search_page(browser: Any, site: Site, width: str) -> None:
    pg = _open(browser, site, WIDTHS[width])
    check_page(pg, f"search-start-{width}")
    pg.get_by_label("Search memory").fill("tea")
    pg.get_by_role("button", name="Search").click()
    pg.locator("li.hit").first.wait_for()
    found = scores(pg)
    assert len(found) >= 3 and found == sorted(found, reverse=True)
    pg.goto("/ui/search?q=tea+shop")
    first = pg.locator("li.hit").first
    assert site.ids["teashop"] in first.inner_html()
    assert "Matches ‘tea’ and ‘shop’" in first.locator(".why").inner_text()
    assert "bm25" not in pg.content() and "chunk · note" not in pg.content()
    assert QUESTION not in pg.locator("#results").inner_text()  # a question is not an answer
    check_page(pg, f"search-hits-{width}")
    pg.goto("/ui/search?q=zzqxv+quantum+tuba")
    assert pg.locator("li.hit").count() == 0
    pg.get_by_text("Nothing in memory matches “zzqxv quantum tuba”.").wait_for()
    check_page(pg, f"search-nothing-{width}")
    pg.context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_memories_pages(browser: Any, site: Site, width: str) -> None:
    pg = _open(browser, site, WIDTHS[width])
    pg.goto("/ui/memories")
    chat = pg.locator("article.chat").first
    assert chat.locator(".bubble.me").first.inner_text().endswith(QUESTION)
    assert "Green tea, an hour before." in chat.locator(".bubble.them").first.inner_text()
    memories = pg.locator("article.memory").all_inner_texts()
    assert not any(QUESTION in m for m in memories)  # questions are conversation, not memory
    check_page(pg, f"memories-{width}")
    pg.goto(f"/ui/memories/{site.ids['car']}")
    assert pg.get_by_role("button", name="Undo last edit").count() == 1
    check_page(pg, f"memory-edited-{width}")
    pg.goto(f"/ui/memories/{site.ids['long']}")
    assert pg.get_by_role("button", name="Undo last edit").count() == 0  # never edited
    check_page(pg, f"memory-{width}")
    pg.goto(f"/ui/memories/{site.ids['asked']}")
    check_page(pg, f"memory-turn-{width}")
    pg.goto(f"/ui/memories/{site.ids['car']}/history")
    check_page(pg, f"memory-history-{width}")
    pg.context.close()


def test_add_a_memory_from_the_page(page: Any, site: Site) -> None:
    page.goto("/ui/memories")
    page.get_by_text("Add a memory").click()
    page.get_by_label("What should be remembered?").fill("My bike is a blue Brompton.")
    page.get_by_label("Tags (optional, comma separated)").fill("bike")
    page.get_by_role("button", name="Remember").click()
    page.get_by_text("Remembered. Search finds it from now on.").wait_for()
    page.goto("/ui/search?q=brompton")
    assert "blue Brompton" in page.locator("li.hit").first.inner_text()
    page.goto("/ui/memories")
    page.get_by_text("Add a memory").click()
    page.get_by_label("What should be remembered?").fill("   ")
    page.get_by_role("button", name="Remember").click()
    page.get_by_text("Write something to remember first").wait_for()


@pytest.mark.parametrize("width", WIDTHS)
def test_notes_pages_and_a_refused_path(browser: Any, site: Site, width: str) -> None:
    pg = _open(browser, site, WIDTHS[width])
    pg.goto("/ui/notes")
    check_page(pg, f"notes-{width}")
    pg.get_by_label("New note").fill("../escape.md")
    pg.get_by_role("button", name="Create").click()
    pg.locator(".field-error").wait_for()
    assert "Cannot use that path" in pg.locator(".field-error").inner_text()
    check_page(pg, f"notes-refused-{width}", allowed=("status of 400", "HTTP 400"))
    pg.goto("/ui/notes/view?path=entities/jane_doe.md")
    check_page(pg, f"note-{width}")
    pg.goto("/ui/notes/edit?path=user.md")
    check_page(pg, f"note-edit-{width}")
    pg.goto("/ui/memories/chunk-20240101-000000000000")
    pg.get_by_role("alert").wait_for()
    assert "There is no such memory" in pg.get_by_role("alert").inner_text()
    assert pg.get_by_role("link", name="Back to Memories").count() == 1
    check_page(pg, f"not-found-{width}", allowed=("status of 404", "HTTP 404"))
    pg.context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_profile_activity_status_pages(browser: Any, site: Site, width: str) -> None:
    pg = _open(browser, site, WIDTHS[width])
    pg.goto("/ui/profile")
    check_page(pg, f"profile-{width}")
    pg.goto("/ui/activity")
    text = pg.locator("main").inner_text()
    assert "The car is parked on level 3." in text and "A memory was changed" in text
    assert "hud.update" not in text and "learn_queue" not in text and "trace" not in text
    check_page(pg, f"activity-{width}")
    pg.goto("/ui/status")
    check_page(pg, f"status-{width}")
    pg.goto("/ui/profile/history?item=dumplings&file=resource_user_food_prefs.json")
    pg.get_by_role("button", name="Undo this change").first.wait_for()
    check_page(pg, f"profile-history-{width}")
    pg.context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_chat_page(browser: Any, site: Site, width: str) -> None:
    pg = _open(browser, site, WIDTHS[width])
    pg.goto("/ui/chat")
    pg.locator("#model-state", has_text="Model ready").wait_for()
    check_page(pg, f"chat-start-{width}")
    pg.get_by_label("Message").fill("What do I drink?")
    pg.get_by_role("button", name="Send").click()
    pg.locator("#chat-status", has_text="done").wait_for()
    assert "green tea" in pg.locator("#chat-log .reply").last.inner_text()
    used = pg.locator("#chat-sources a", has_text="I drink green tea every morning.")
    assert used.count() == 1
    assert used.get_attribute("href") == f"/ui/memories/{site.ids['tea']}"
    check_page(pg, f"chat-{width}")
    pg.context.close()


class _SlowStart(ScriptedLLM):
    """A model that loads until the test lets it (as the embedded one loads)."""

    def __init__(self, name: str, gate: threading.Event) -> None:
        super().__init__(fn=_model)
        self.name = name
        self.gate = gate
        self.loaded = False

    def load(self) -> float:
        assert self.gate.wait(120), "the test never let the model load"
        self.loaded = True
        return 0.0


@pytest.mark.parametrize("width", WIDTHS)
def test_chat_while_the_model_loads(browser: Any, tmp_path: Path, width: str) -> None:
    """The page says the model is loading; a message sent meanwhile waits for it
    and is answered (no "ran out of time")."""
    gate = threading.Event()
    root = tmp_path / "server"
    keys = {"alice": KeyStore(root).create(user="alice")[0]}
    llm = _SlowStart(f"slow-browser-{width}-{tmp_path.name}", gate)
    app = create_app(root, ServerSettings(mcp=False, embeddings=False), llm=llm)
    with LiveServer(app) as live:
        alice: Memory = app.state.server.memory_for("alice")
        alice.remember("I drink green tea every morning.")
        pg = _open(browser, Site(live.url, keys, alice, {}), WIDTHS[width])
        pg.goto("/ui/chat")
        pg.locator("#model-state", has_text="Loading the model").wait_for()
        pg.get_by_label("Message").fill("What do I drink?")
        pg.get_by_role("button", name="Send").click()
        pg.locator("#chat-status", has_text="Loading the model").wait_for()
        check_page(pg, f"chat-loading-{width}", busy=True)
        gate.set()
        pg.locator("#chat-status", has_text="done").wait_for()
        assert "green tea" in pg.locator("#chat-log .reply").last.inner_text()
        pg.locator("#model-state", has_text="Model ready").wait_for()
        check_page(pg, f"chat-after-loading-{width}")
        pg.context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_login_page(browser: Any, site: Site, width: str) -> None:
    pg = _open(browser, site, WIDTHS[width], sign_in=False)
    pg.goto("/ui/login")
    check_page(pg, f"login-{width}")
    pg.context.close()


def test_profile_expiry(page: Any, site: Site) -> None:
    page.goto("/ui/profile")
    row = page.locator("li.fact", has_text="dumplings")
    row.get_by_text("Change").click()
    row.get_by_label("Expiry").fill("2999-12-31")
    row.get_by_role("button", name="Save").click()
    page.get_by_text("expires: 2999-12-31").wait_for()
    likes = site.alice.profile_show("user_food_prefs")["resource_user_food_prefs.json"]
    assert likes["food"]["likes"][0]["expiry"] == "2999-12-31"


def test_note_edit_wikilink_and_backlink(page: Any, site: Site) -> None:
    page.goto("/ui/notes")
    page.get_by_role("link", name="user.md").click()
    page.get_by_role("link", name="Edit this note").click()
    page.get_by_label("Markdown").fill("# Me\n\nMy sister is [[Jane Doe]]. I like <b>tea</b>.\n")
    page.get_by_role("button", name="Save").click()
    page.get_by_role("link", name="Jane Doe").click()
    page.wait_for_url(re.compile(r".*/ui/notes/view\?path=entities/jane_doe\.md$"))
    page.locator("#backlinks").get_by_role("link", name="user.md").click()
    page.wait_for_url(re.compile(r".*path=user\.md$"))
    assert "I like" in page.locator("#note-body").inner_text()
    assert site.alice.read_note("user.md").startswith("# Me\n\nMy sister is [[Jane Doe]]. I like")


def test_undo_from_activity(page: Any, site: Site) -> None:
    site.alice.update(site.ids["car"], text="The car is parked on level 5.")
    page.goto("/ui/activity")
    entry = page.locator("li.card", has_text="level 5").first
    entry.get_by_role("button", name="Undo").click()
    page.get_by_text("Undone: the memory is back as it was before that edit.").wait_for()
    assert site.alice.get(site.ids["car"]).content == "The car is parked on level 3."


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
        assert page.locator("h1").count() >= 1 or url.startswith("/ui/memories/")
    # Keyboard: the first Tab reaches the skip link, then the brand and the menu in order.
    page.goto("/ui/memories")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    order = []
    for _ in range(8):
        page.keyboard.press("Tab")
        order.append(page.evaluate("document.activeElement.textContent").strip())
    assert order == ["memagent", "Search", "Memories", "Notes", "Profile", "Activity", "Status",
                     "Chat"]  # fmt: skip
    page.goto("/ui/memories")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"


def test_reading_and_chat_work_with_javascript_off(browser: Any, site: Site) -> None:
    context = browser.new_context(base_url=site.url, java_script_enabled=False)
    pg = context.new_page()
    pg.set_default_timeout(20_000)
    pg.goto("/ui/login")
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
    assert pg.locator("#chat-sources a").count() >= 1
    context.close()
