"""The whole app loads in headless Chromium with three tabs and no JavaScript errors."""
from __future__ import annotations

import json

import pytest

from tests.browser.conftest import idle, open_tab, snap


def test_three_tabs_load_without_console_errors(page):
    for label in ("Window search", "Cloze", "Impact"):
        open_tab(page, label)
        snap(page, f"tab-{label.lower().replace(' ', '-')}")
    assert page.locator("#backend-badge").inner_text().startswith("Model: baseline")
    # Gradio may log failed fetches of optional resources offline; real script errors fail the test
    errors = [e for e in page.console_errors if "Failed to load resource" not in e]
    assert errors == [], errors


WS_DRAWN = "() => (document.querySelector('#ws-query textarea')?.value || '').length > 0 && " \
           "!!document.querySelector('#ws-timeline .ws-tl')"
IMPACT_DRAWN = "() => (document.querySelector('#impact-timeline')?.innerText || '').includes('truth')"


def test_a_page_draws_the_tab_it_shows_and_each_other_tab_when_it_is_opened(page, app_url):
    """A link to Impact draws Impact only; window search, the first tab (which gradio also sends a
    select event as the page mounts), is drawn when the visitor opens it, and stays as it was
    after a round trip through the other tabs."""
    page.goto(app_url.rstrip("/") + "/?tab=impact", wait_until="load")
    page.wait_for_function(IMPACT_DRAWN, timeout=60_000)
    idle(page)   # every load and mount event of the page answered
    assert page.evaluate("() => document.querySelector('#ws-query textarea')?.value || ''") == ""
    open_tab(page, "Window search")
    page.wait_for_function(WS_DRAWN, timeout=30_000)
    query = page.locator("#ws-query textarea").input_value()
    open_tab(page, "Cloze")
    open_tab(page, "Window search")
    idle(page)
    assert page.locator("#ws-query textarea").input_value() == query


def test_a_plain_page_draws_window_search_and_impact_when_it_is_opened(page):
    page.wait_for_function(WS_DRAWN, timeout=60_000)
    open_tab(page, "Impact")
    page.wait_for_function(IMPACT_DRAWN, timeout=30_000)
    assert page.evaluate("() => document.documentElement.dataset.impactReady") == "1"


def test_the_page_keeps_no_run_history_in_the_browser(page):
    """gradio's run history would store every event's inputs and outputs in localStorage and
    rewrite all of it several times per click (components/common/page.py, LAUNCH_OPTIONS)."""
    open_tab(page, "Impact")
    page.wait_for_function("() => (document.querySelector('#impact-regions')?.innerText || '').includes('truth')")
    page.locator("#impact-step-on").click()
    page.wait_for_function("() => (document.querySelector('#impact-timeline')?.innerText || '').includes('frame ')")
    idle(page)   # the event's last messages have been handled
    keys = page.evaluate("() => Object.keys(window.localStorage)")
    assert not [k for k in keys if k.startswith("gradio:run-history")], keys


# set before the page's own scripts run: whether a window-search component was ever in the page
EVER_MOUNTED = """window.__wsMounted = false;
new MutationObserver((_, o) => { if (document.querySelector('#ws-query-pick, #ws-timeline')) {
  window.__wsMounted = true; o.disconnect(); } }).observe(document, {subtree: true, childList: true});"""
CLOZE_DRAWN = "() => document.querySelectorAll('#cloze-grid img').length >= 6"


@pytest.mark.parametrize("link, drawn", [("?tab=cloze&stem=bar_fill&q=P", CLOZE_DRAWN),
                                         ("?clip=h0007&frame=46", IMPACT_DRAWN)])
def test_a_link_mounts_the_tab_it_shows_and_never_the_first_tab(browser, app_url, link, drawn):
    """The link's tab is the one gradio builds as the page starts (components/common/page.py,
    link_tab_head): the first tab's components are never built on such a page until the visitor
    opens it, which then draws it as before. The rule is the server's, a tab's own parameters
    alone (`clip=`) included."""
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    try:
        page = context.new_page()
        page.add_init_script(EVER_MOUNTED)
        page.goto(app_url.rstrip("/") + "/" + link, wait_until="load", timeout=120_000)
        page.wait_for_function(drawn, timeout=60_000)
        assert page.evaluate("() => document.querySelector('[role=tab][aria-selected=true]')?.innerText.trim()") \
            == ("Cloze" if "cloze" in link else "Impact")
        assert page.evaluate("() => window.__wsMounted") is False, "the window-search tab was built"
        open_tab(page, "Window search")
        page.wait_for_function(WS_DRAWN, timeout=60_000)
        assert page.evaluate("() => window.__wsMounted") is True
    finally:
        context.close()


SELECTED = "() => document.querySelector('#app-tabs [role=tab][aria-selected=true]')?.innerText.trim()"


@pytest.mark.parametrize("link, tab", [("?tab=impact&clip=h0007", "Impact"), ("?tab=Cloze", "Cloze"),
                                       ("?clip=h0007&frame=46", "Impact"), ("?tab=nope&tab=cloze", "Cloze"),
                                       ("", "Window search")])
def test_a_link_opens_its_tab_with_no_note(sized_page, app_url, link, tab):
    """The rule (page.link_tab_head): `tab=` (any case; the last of repeated ones), else the first
    tab whose own parameters the link carries, else the first tab."""
    page = sized_page(app_url.rstrip("/") + "/" + link, (1440, 900), "() => !!document.querySelector('#app-tabs')")
    assert page.evaluate(SELECTED) == tab
    assert page.locator("#link-note").count() == 0


def test_a_link_naming_no_tab_shows_the_first_tab_and_one_line_saying_why(sized_page, app_url):
    page = sized_page(app_url.rstrip("/") + "/?tab=nope", (1440, 900), WS_DRAWN)
    assert page.evaluate(SELECTED) == "Window search"
    note = page.locator("#link-note")
    assert note.is_visible()
    text = note.inner_text()
    assert "nope" in text and "window-search, cloze, impact" in text and "first tab" in text, text
    box = note.bounding_box()
    assert box["y"] >= 0 and box["y"] + box["height"] <= 120 and box["width"] >= 1400, box   # the page's top line
    assert float(note.evaluate("e => getComputedStyle(e).fontSize").rstrip("px")) >= 12


def test_a_page_load_asks_the_server_for_the_shown_tabs_views_only(browser, app_url):
    """Which tab a link opens, and the line saying a link names no tab, are the page's own work (its
    head script); no event of the page calls the server on load: a page asks only for the shown
    tab's views, on its select (Cloze's runs link, an open fold a link asks for, among them)."""
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    try:
        page = context.new_page()
        sent: list[int] = []
        page.on("request", lambda r: sent.append(json.loads(r.post_data or "{}").get("fn_index"))
                if "/queue/join" in r.url else None)
        page.goto(app_url.rstrip("/") + "/?tab=nope&clip=h0007", wait_until="load", timeout=120_000)
        page.wait_for_function(WS_DRAWN, timeout=60_000)
        names = page.evaluate("() => Object.fromEntries(window.gradio_config.dependencies.map(d => [d.id, d.api_name]))")
        loads = page.evaluate("() => window.gradio_config.dependencies.filter(d => d.targets.some(t => t[1] === 'load')"
                              " && d.backend_fn).map(d => d.api_name)")
        assert loads == [], loads
        first = [names[str(i)] for i in sent]
        assert "open_page" in first and not {"open_from_link", "_cloze_runs_link"} & set(first), first
    finally:
        context.close()
