"""The researcher's views in headless Chromium (issue 27): the Cloze leaderboard fits a 1440x900
window (the score and its interval on screen without sideways scrolling, headers on at most two
lines, ten rows and more, the paper's Human row among them), and "compare with" puts two no-model
methods side by side offline (Cloze's Edge-1 beside Edge-4), each side labelled as a method."""
from __future__ import annotations

from tests.browser.conftest import TAB_READY, idle, open_model_panel, open_tab, settle, snap
from tests.browser.test_compare import close_model_panel
from tests.browser.test_talks_record_replay import _apply_and_wait, _type_backend

LEADERBOARD_JS = """() => {
  const board = document.querySelector('#cloze-leaderboard');
  const port = board.querySelector('.virtual-table-viewport') || board;
  const heads = [...board.querySelectorAll('thead th')];
  const head = heads.find(th => th.innerText.trim() === 'acc 95 % CI');
  const label = head.querySelector('.header-content span, span') || head;
  const style = getComputedStyle(label);
  const line = parseFloat(style.lineHeight) || 1.4 * parseFloat(style.fontSize);
  const shown = port.getBoundingClientRect();
  const rows = [...board.querySelectorAll('.virtual-row')].filter(tr => {
    const r = tr.getBoundingClientRect();
    return r.height > 0 && r.top >= Math.max(0, shown.top) - 1 && r.bottom <= Math.min(innerHeight, shown.bottom) + 1;
  });
  return {
    ci: head.getBoundingClientRect().toJSON(), viewport: innerWidth,
    page_scrolls: document.documentElement.scrollWidth > innerWidth,
    table_scrolls: port.scrollWidth > port.clientWidth + 1,
    header_lines: Math.max(...heads.map(th => {
      const s = th.querySelector('.header-content span, span') || th;
      return s.getBoundingClientRect().height / line; })),
    rows: rows.map(tr => tr.querySelector('.body-cell')?.innerText.trim()),
  };
}"""


def test_the_leaderboard_fits_1440x900_with_its_interval_and_the_papers_human_row(browser, app_url):
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        page.goto(f"{app_url}?tab=cloze", wait_until="load", timeout=120_000)
        page.wait_for_selector("#app-tabs", timeout=120_000)
        # the tab's first view drawn: a late one would put the page back in its first mode
        page.wait_for_function(TAB_READY["cloze"], timeout=120_000)
        idle(page)
        page.locator("#cloze-mode").get_by_text("Compare", exact=True).click()
        page.wait_for_function("() => (document.querySelector('#cloze-leaderboard')?.innerText || '')"
                               ".includes('1,521 videos')", timeout=120_000)
        page.wait_for_function("() => document.querySelectorAll('#cloze-leaderboard .virtual-row').length >= 10")
        page.locator("#cloze-leaderboard").evaluate("el => el.scrollIntoView({block: 'start'})")
        settle(page, "#cloze-leaderboard")
        snap(page, "leaderboard-1440x900")
        measured = page.evaluate(LEADERBOARD_JS)
    finally:
        context.close()
    ci = measured["ci"]
    assert 0 <= ci["left"] and ci["right"] <= measured["viewport"], measured["ci"]
    assert not measured["page_scrolls"] and not measured["table_scrolls"]
    assert measured["header_lines"] <= 2.05, measured["header_lines"]
    assert len(measured["rows"]) >= 10, measured["rows"]
    assert "Human" in measured["rows"]   # the caption's Human row, without scrolling


def test_compare_offers_the_no_model_methods_and_shows_two_labelled_sides(page):
    open_model_panel(page)
    _type_backend(page, "baseline:edge1")
    page.locator("#settings-compare-panel").get_by_text("Compare with another backend").first.click()
    box = page.locator("#settings-compare input").first
    box.wait_for(state="visible")
    box.click()
    options = page.get_by_role("option")
    options.first.wait_for()
    offered = options.all_inner_texts()
    methods = [o for o in offered if "(baseline:" in o]
    assert {o.rsplit("(", 1)[1].rstrip(")") for o in methods} >= {"baseline:text", "baseline:rag",
                                                                  "baseline:edge1", "baseline:edge4"}
    assert all("method" in o and "model" not in o for o in methods), methods
    page.get_by_role("option", name="(baseline:edge4)").first.click()
    _apply_and_wait(page, "compare with: baseline:edge4")
    assert page.locator("#backend-badge").inner_text().startswith("Method: baseline:edge1")
    close_model_panel(page)

    open_tab(page, "Cloze")
    page.locator("#cloze-mode").get_by_text("Model", exact=True).click()
    page.locator("#cloze-run-one").click()
    page.wait_for_function("() => document.querySelectorAll('#cloze-pair .cloze-pair-side').length === 2",
                           timeout=120_000)
    sides = page.locator("#cloze-pair .cloze-pair-side")
    first, second = sides.nth(0).inner_text(), sides.nth(1).inner_text()
    assert "① method baseline:edge1" in first and "② method baseline:edge4" in second
    assert sides.nth(0).get_attribute("data-letter") in "ABCD" and sides.nth(1).get_attribute("data-letter") in "ABCD"
    parsed = page.locator("#cloze-parsed textarea, #cloze-parsed input").first.input_value()
    assert parsed == sides.nth(0).get_attribute("data-letter")   # the first method fills the boxes
    page.locator("#cloze-pair").scroll_into_view_if_needed()
    snap(page, "compare-methods-cloze")
