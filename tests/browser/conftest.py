"""Headless Chromium (the system browser) driven by Playwright against the live app."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.helpers.live_app import running_app

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--no-first-run"]


@pytest.fixture(scope="session")
def app_url(example_data_dir, tmp_path_factory):
    with pytest.MonkeyPatch.context() as env:  # undone when the session's app stops
        env.setenv("APP_HUMAN_STUDY_DIR", str(tmp_path_factory.mktemp("human-study")))
        env.setenv("APP_PRACTICE_DIR", str(tmp_path_factory.mktemp("practice")))
        with running_app(example_data_dir) as url:
            yield url


# Installed in every page before its scripts run: counts the page's events that have not answered,
# so a test can wait until none is pending (`idle`), however slowly a busy machine answers, instead
# of sleeping for a guessed time. An event is pending from its request until its
# `process_completed` message has been read from the queue's stream (a copy of it: the page reads
# its own); other requests to the app count while open. Not counted: the heartbeat, and files (a
# file's load is the page's own business, and a test may hold one back). The stream itself is not
# waited for: with a timer ticking it can stay open for good.
PENDING_JS = """(() => {
  if (window.__appPending) return;
  const open = new Map();    // request number -> what it asked for and when (for `idle`'s report)
  const events = new Map(), finished = new Set();
  let n = 0;
  window.__appPending = () => open.size + events.size;
  const asked = (url, init) => {
    let what = url.replace(/^.*gradio_api\\//, '');
    try { const b = JSON.parse(init && init.body); if (b && b.fn_index !== undefined) what += ' fn_index=' + b.fn_index; }
    catch (e) { /* not JSON */ }
    return what;
  };
  window.__appPendingWhat = () => {
    const deps = (window.gradio_config && window.gradio_config.dependencies) || [];
    const name = (what) => what.replace(/fn_index=(\\d+)/, (m, i) => {
      const d = deps.find((x) => String(x.id) === i) || deps[Number(i)];
      return m + (d ? ' (' + (d.api_name || d.js && 'js' || '?') + ')' : '');
    });
    const now = performance.now();
    return [...open.values(), ...events.values()].map((x) => name(x.what) + ' for ' + ((now - x.t) / 1000).toFixed(1) + ' s');
  };
  const messages = (reply, each) => {
    const reader = reply.clone().body.getReader(), text = new TextDecoder();
    let buffer = '';
    const pump = () => reader.read().then(({done, value}) => {
      if (done) return;
      buffer += text.decode(value, {stream: true});
      const parts = buffer.split('\\n\\n');
      buffer = parts.pop();
      for (const part of parts) {
        for (const line of part.split('\\n')) {
          if (line.startsWith('data:')) { try { each(JSON.parse(line.slice(5))); } catch (e) { /* not JSON */ } }
        }
      }
      return pump();
    });
    return pump().catch(() => {});
  };
  const fetch0 = window.fetch;
  window.fetch = function (input, init) {
    const url = String((input && input.url) || input);
    if (!url.includes('gradio_api/') || url.includes('/heartbeat') || url.includes('gradio_api/file=')) {
      return fetch0.apply(window, arguments);
    }
    if (url.includes('queue/data')) {
      return fetch0.apply(window, arguments).then((reply) => {
        const carried = new Set();   // the events this stream spoke of are over when it ends
        if (reply.body) {
          messages(reply, (m) => {
            if (!m.event_id) return;
            carried.add(m.event_id);
            if (m.msg === 'process_completed') { finished.add(m.event_id); events.delete(m.event_id); }
          }).then(() => carried.forEach((id) => { finished.add(id); events.delete(id); }));
        }
        return reply;
      });
    }
    const id = n++, what = asked(url, init);
    open.set(id, {what, t: performance.now()});
    const end = () => { open.delete(id); };
    return fetch0.apply(window, arguments).then((reply) => {
      if (url.includes('queue/join') && reply.ok) {
        reply.clone().json().then((j) => {
          if (j && j.event_id && !finished.has(j.event_id)) events.set(j.event_id, {what, t: performance.now()});
        }).catch(() => {}).finally(end);
      } else { end(); }
      return reply;
    }, (error) => { end(); throw error; });
  };
})();"""


@pytest.fixture(scope="session")
def browser():
    """Headless Chromium; each page it opens (browser.new_page, or a page of browser.new_context)
    has PENDING_JS installed, for `idle`."""
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM}; run scripts/install_system_deps.sh as root")
    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        new_context, new_page = launched.new_context, launched.new_page

        def context_with_pending(*args, **kwargs):
            context = new_context(*args, **kwargs)
            context.add_init_script(PENDING_JS)
            return context

        def page_with_pending(*args, **kwargs):
            page = new_page(*args, **kwargs)
            page.add_init_script(PENDING_JS)
            return page

        launched.new_context, launched.new_page = context_with_pending, page_with_pending
        yield launched
        launched.close()


@pytest.fixture
def page(browser, app_url):
    """A page of its own browser context: nothing a test leaves in the browser (presentation mode,
    the practice id kept by the page) reaches the next test."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.console_errors = []
    page.on("console", lambda msg: page.console_errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: page.console_errors.append(str(exc)))
    page.set_default_timeout(60_000)
    page.goto(app_url, wait_until="load", timeout=120_000)
    page.wait_for_selector("#app-tabs", timeout=120_000)
    yield page
    context.close()


def snap(page, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


#: the tab button's label -> its panel's id
TAB_IDS = {"Window search": "tab-window-search", "Cloze": "tab-cloze", "Impact": "tab-impact"}

# resolves once the box of `sel` (and the page's height) stayed the same for 5 drawn frames in a
# row and every image on screen has loaded or failed: the layout has settled, however slowly a
# busy machine draws it; false after `ms` (the caller's assertion then says what it saw)
SETTLED_JS = """([sel, ms]) => new Promise(resolve => {
  let last = null, same = 0; const end = performance.now() + ms;
  const step = () => {
    const e = sel ? document.querySelector(sel) : document.body;
    const r = e && e.getBoundingClientRect();
    const key = r ? [r.x, r.y, r.width, r.height, document.documentElement.scrollHeight].map(Math.round).join() : null;
    const loaded = [...document.images].filter(i => { const b = i.getBoundingClientRect();
      return b.width > 0 && b.bottom > 0 && b.top < innerHeight; }).every(i => i.complete);
    if (key !== null && key === last && loaded) { if (++same >= 5) return resolve(true); } else { same = 0; last = key; }
    if (performance.now() > end) return resolve(false);
    requestAnimationFrame(step);
  };
  requestAnimationFrame(step); })"""


# resolves once no request of the page to the app has been open for 5 drawn frames in a row (an
# event's answer is drawn, and what it chains has started, within those frames); false after `ms`
IDLE_JS = """(ms) => new Promise(resolve => {
  let same = 0; const end = performance.now() + ms;
  const step = () => {
    if (!window.__appPending) return resolve(null);
    if (window.__appPending() === 0) { if (++same >= 5) return resolve(true); } else { same = 0; }
    if (performance.now() > end) return resolve(false);
    requestAnimationFrame(step);
  };
  requestAnimationFrame(step); })"""


def idle(page, timeout_ms: int = 120_000) -> None:
    """Wait until no event of the page is pending: every request to the app answered and every
    queue stream read to its end, for 5 frames in a row. What a test then reads is the events'
    last word: use it where a test checks that something did NOT happen (a late write, a second
    copy), instead of a fixed sleep that a loaded machine outlasts."""
    done = page.evaluate(IDLE_JS, timeout_ms)
    if done is None:
        raise AssertionError("the page has no request counter: open it from the `browser` fixture")
    if not done:
        pending = page.evaluate("() => window.__appPendingWhat ? window.__appPendingWhat() : []")
        raise AssertionError(f"the page's events were still pending after {timeout_ms / 1000:.0f} s: {pending}")


def settle(page, selector: str | None = None, timeout_ms: int = 30_000) -> bool:
    """Wait until the page's layout has settled around `selector` (its box and the page's height
    unchanged for 5 frames, the images loaded), after the page's pending events have answered (an
    answer still on its way would move it again): what a test measures then stays put."""
    page.evaluate(IDLE_JS, timeout_ms)
    return page.evaluate(SETTLED_JS, [selector, timeout_ms])


def scroll_settled(page, selector: str, tries: int = 10) -> None:
    """Scroll `selector` into view and keep it there while the page above it is still drawing
    (images arriving push it down): scrolled again until it is on screen in a settled layout."""
    for _ in range(tries):
        page.locator(selector).first.scroll_into_view_if_needed()
        settle(page, selector)
        if page.evaluate("""(s) => { const r = document.querySelector(s).getBoundingClientRect();
                return r.top >= 0 && r.bottom <= innerHeight + 1; }""", selector):
            return


def open_tab(page, label: str) -> None:
    """Click the tab `label` and wait until its panel is drawn."""
    page.get_by_role("tab", name=label).click()
    if label in TAB_IDS:
        page.wait_for_function("(id) => !!document.getElementById(id)?.offsetParent", arg=TAB_IDS[label])
    settle(page)


def pick_query(page, qid: str) -> None:
    """Pick `qid` in window search's query list and wait until its query shows: a Run clicked
    before the pick's answer reads the query shown until then."""
    shown = page.locator("#ws-query-pick input").first.input_value()
    before = page.locator("#ws-query textarea").input_value()
    page.locator("#ws-query-pick input").first.click()
    page.get_by_role("option", name=re.compile(re.escape(qid))).first.click()
    if qid not in shown:
        page.wait_for_function("(b) => { const v = document.querySelector('#ws-query textarea')?.value || '';"
                               " return v.length > 0 && v !== b; }", arg=before, timeout=60_000)


def open_model_panel(page) -> None:
    """Open the Model sidebar (a click on the header's badge) and wait until it has slid in."""
    if not page.evaluate("() => document.querySelector('#app-sidebar')?.classList.contains('open')"):
        page.locator("#backend-badge").click()
    page.wait_for_function("""() => { const b = document.querySelector('#settings-apply');
        if (!b) return false; const r = b.getBoundingClientRect();
        return r.width > 0 && r.left >= 0 && r.right <= window.innerWidth; }""", timeout=30_000)


SETTLED_TEXT_JS = """(sel) => { const el = document.querySelector(sel);
    if (!el || el.querySelector('[data-testid="status-tracker"]:not(.hide)')) return null;
    const md = el.querySelector('[data-testid="markdown"]');
    return (md || el).innerText; }"""


def settled_text(page, selector: str, timeout: float = 60_000) -> str:
    """A Markdown's text once no event is pending on it: gradio's status tracker (its "processing |
    0.8s" timer) is part of the element's text while an event that updates it runs."""
    return page.wait_for_function(SETTLED_TEXT_JS, arg=selector, timeout=timeout).json_value()


def fill_steady(page, locator, text: str, tries: int = 6) -> None:
    """Type `text` into a box of a fold just opened: gradio mounts a fold's components when it
    opens, and a box filled in that instant can be drawn again empty (or with its old value).
    Fill until the box keeps the text, as a person would see it and type again."""
    for _ in range(tries):
        settle(page)        # the fold's components mounted and drawn, the page's events answered
        locator.fill(text)
        settle(page)
        if locator.input_value() == text:
            return
    raise AssertionError(f"the box never kept {text!r}: it holds {locator.input_value()!r}")


#: what each tab shows once a page has opened it (its page-load event has run)
TAB_READY = {
    "window-search": "() => (document.querySelector('#ws-query textarea')?.value || '').length > 0",
    "cloze": "() => !!document.querySelector('#cloze-beginning-img img')",
    "impact": "() => document.documentElement.dataset.impactReady === '1'",
}


@pytest.fixture
def sized_page(browser):
    """`open(url, size, ready)`: a page at `size` in a browser context of its own, once `ready`
    (a JS predicate) holds and the layout has settled; its requests kept in `page.requests`. The
    contexts close after the test."""
    contexts = []

    def open_page(url: str, size: tuple[int, int], ready: str, timeout_ms: int = 90_000):
        context = browser.new_context(viewport={"width": size[0], "height": size[1]})
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(timeout_ms)
        page.requests = []
        page.on("request", lambda r: page.requests.append(r.url))
        page.goto(url, wait_until="load", timeout=120_000)
        page.wait_for_function(ready, timeout=120_000)
        page.evaluate("() => document.fonts.ready.then(() => true)")
        settle(page)   # the layout settles (fonts, images)
        return page

    yield open_page
    for context in contexts:
        context.close()
