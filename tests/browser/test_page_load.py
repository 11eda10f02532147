"""The whole app loads in headless Chromium with three tabs and no JavaScript errors."""
from __future__ import annotations

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
