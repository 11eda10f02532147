"""The address is the view (headless Chromium, 1440x900): switching tab, query, question, clip or
frame rewrites the address bar in place (history.replaceState: no reload, no new history entry),
so a reload or a copied address opens what was on screen, presentation mode included."""
from __future__ import annotations

from urllib.parse import parse_qsl

import pytest

from tests.browser.conftest import idle, open_tab, pick_query


@pytest.fixture
def visit(browser, app_url):
    """A fresh browser context at 1440x900 (nothing remembered from another test) and a function
    opening `path` of the app in it."""
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.set_default_timeout(90_000)
    page.console_errors = []
    page.on("pageerror", lambda exc: page.console_errors.append(str(exc)))

    def go(path: str = "/"):
        page.goto(app_url.rstrip("/") + path, wait_until="load", timeout=120_000)
        page.wait_for_selector("#app-tabs", timeout=120_000)
        return page

    yield go
    context.close()


def address(page) -> dict[str, str]:
    return dict(parse_qsl(page.evaluate("() => window.location.search").lstrip("?")))


def wait_address(page, **want: str) -> dict[str, str]:
    """Until the address holds each `key=value` of `want` (a value of None: the key is absent)."""
    page.wait_for_function("""(want) => { const p = new URLSearchParams(window.location.search);
        return Object.entries(want).every(([k, v]) => v === null ? !p.has(k) : p.get(k) === v); }""",
                           arg=want, timeout=90_000)
    return address(page)


def selected_tab(page) -> str:
    return page.locator("#app-tabs [role='tab'][aria-selected='true']").first.inner_text().strip()


FRAME_BOX = "document.querySelector('#impact-frame input[type=\"number\"]')?.value"


def impact_shown(page) -> dict[str, str]:
    """The address once the Impact tab's page view has arrived and the address names its frame."""
    page.wait_for_function("() => document.documentElement.dataset.impactReady === '1'")
    page.wait_for_function(f"() => new URLSearchParams(location.search).get('frame') === {FRAME_BOX}"
                           " && new URLSearchParams(location.search).get('tab') === 'impact'")
    return address(page)


WS_QUERY = "() => (document.querySelector('#ws-query textarea')?.value || '')"


def test_switching_to_impact_puts_it_in_the_address_and_a_reload_shows_it(visit):
    page = visit("/")
    page.wait_for_function(f"() => ({WS_QUERY})().length > 0")
    first = wait_address(page, tab="window-search")
    assert first["movie"] == "m01" and first["qid"]
    history = page.evaluate("() => history.length")
    open_tab(page, "Impact")
    shown = impact_shown(page)
    assert shown["clip"] and shown["frame"].isdigit() and "movie" not in shown
    page.reload(wait_until="load")
    page.wait_for_selector("#impact-frame", state="visible", timeout=120_000)
    assert selected_tab(page) == "Impact"
    page.wait_for_function("(f) => document.querySelector('#impact-frame input[type=\"number\"]')?.value === f",
                           arg=shown["frame"])
    # every event of the reloaded page answered: the address events of the tab's mount (its first
    # frame, an instant before the linked frame arrived) included; then the address follows the
    # view within the page's 200 ms write spacing. (Read earlier, the address could still be the
    # reload's own, with that first frame's write on its way.)
    idle(page)
    assert wait_address(page, **shown) == shown
    assert page.evaluate("() => history.length") == history        # rewritten in place, never pushed
    assert page.console_errors == []


def test_an_impact_link_never_writes_another_frame_into_the_address(browser, app_url):
    """Every address the page writes while an Impact link opens names the link's frame: none
    names the frame box's value from before the link's frame arrived (it wrote `frame=1` first)."""
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    context.add_init_script("""(() => { window.__written = []; const put = history.replaceState.bind(history);
        history.replaceState = (s, t, u) => { window.__written.push(String(u)); return put(s, t, u); }; })();""")
    page = context.new_page()
    try:
        page.goto(f"{app_url.rstrip('/')}/?clip=h0001&frame=70&tab=impact", wait_until="load", timeout=120_000)
        page.wait_for_function(f"() => {FRAME_BOX} === '70'", timeout=120_000)
        idle(page)   # every address event answered (a write then follows within 200 ms, if any)
        linked = {"clip": "h0001", "frame": "70", "tab": "impact"}
        assert wait_address(page, **linked) == linked
        written = [dict(parse_qsl(url.split("?", 1)[1])) for url in page.evaluate("() => window.__written")]
        assert all(w == linked for w in written), written   # none (the address was the link) or the link
    finally:
        context.close()


def test_from_a_window_search_link_each_tab_and_each_pick_rewrites_the_address(visit):
    page = visit("/?tab=window-search&movie=m01&qid=p0005_t&t=400")
    page.wait_for_function(f"() => ({WS_QUERY})().length > 0")
    assert wait_address(page, tab="window-search", qid="p0005_t", t="400")["movie"] == "m01"

    open_tab(page, "Cloze")
    cloze = wait_address(page, tab="cloze", movie=None, qid=None, t=None)
    assert cloze == {"tab": "cloze"}                 # the playthrough's first question, as a reload opens it
    page.locator("#cloze-next").click()              # another question: the address names it
    page.wait_for_function("() => /Question 2 of/.test(document.querySelector('#cloze-progress')?.innerText || '')")
    second = page.wait_for_function("() => new URLSearchParams(location.search).get('stem')").json_value()
    q = address(page)["q"]
    page.locator("#cloze-next").click()
    page.wait_for_function("() => /Question 3 of/.test(document.querySelector('#cloze-progress')?.innerText || '')")
    page.wait_for_function("(s) => new URLSearchParams(location.search).toString() !== s",
                           arg=f"q={q}&stem={second}&tab=cloze")
    third = address(page)
    assert third["tab"] == "cloze" and (third["stem"], third["q"]) != (second, q)

    open_tab(page, "Impact")
    impact = impact_shown(page)
    page.locator("#impact-step-on").click()          # one frame on: the address follows the frame
    wait_address(page, tab="impact", clip=impact["clip"], frame=str(int(impact["frame"]) + 1))
    page.locator("#impact-clip input").first.click()
    options = page.locator("[role='option']")
    options.first.wait_for()
    other = options.filter(has_not_text=impact["clip"]).first
    label = other.inner_text()
    other.click()
    picked = page.wait_for_function("(c) => { const p = new URLSearchParams(location.search);"
                                    " return p.get('clip') && p.get('clip') !== c && p.get('clip'); }",
                                    arg=impact["clip"]).json_value()
    assert picked in label

    open_tab(page, "Window search")                  # back: the tab's own view, as it was left
    assert wait_address(page, tab="window-search", qid="p0005_t", t="400", clip=None)["movie"] == "m01"
    pick_query(page, "p0002_t")
    assert wait_address(page, tab="window-search", qid="p0002_t")["movie"] == "m01"

    open_tab(page, "Cloze")                          # the question left there comes back with the tab
    assert wait_address(page, tab="cloze", stem=third["stem"], q=third["q"], qid=None)
    page.reload(wait_until="load")
    page.wait_for_function("(n) => /Question 3 of/.test(document.querySelector('#cloze-progress')?.innerText || '')",
                           arg=3, timeout=120_000)
    assert selected_tab(page) == "Cloze" and wait_address(page, **third) == third


def test_presentation_mode_stays_in_the_address(visit):
    page = visit("/?tab=impact&present=1")
    page.wait_for_selector("#impact-frame", state="visible", timeout=120_000)
    shown = impact_shown(page)
    assert shown["clip"] and shown["present"] == "1"
    open_tab(page, "Window search")
    wait_address(page, tab="window-search", present="1")
    assert page.evaluate("() => document.body.classList.contains('present')")
    page.locator("#app-present input").uncheck()      # off by hand: the address says nothing of it
    wait_address(page, tab="window-search", present=None)
    page.locator("#app-present input").check()
    on = wait_address(page, tab="window-search", present="1")
    page.reload(wait_until="load")
    page.wait_for_function(f"() => ({WS_QUERY})().length > 0", timeout=120_000)
    assert page.evaluate("() => document.body.classList.contains('present')")
    assert wait_address(page, **on) == on
