"""Presentation mode read from the back of a room (headless Chromium, example data, 1920x1080,
each tab's README link with `&present=1`): nine characters in ten of the visible text at 20 px or
more and none under 16 px, the media over half the screen, the configuration hidden (Cloze's
too), no button label wider than its button, the timelines' legends whole (also at a laptop's
size out of presentation), and Cloze still playable: the keys step the questions and a letter
answers."""
from __future__ import annotations

import pytest

from tests.browser.conftest import TAB_READY, settle

PROJECTOR, LAPTOP = (1920, 1080), (1440, 900)
#: each tab's link in the README
LINKS = {
    "window-search": "?tab=window-search&movie=m01&qid=p0005_t&t=400",
    "cloze": "?tab=cloze&stem=bar_fill&q=P",
    "impact": "?tab=impact&clip=h0007&frame=46",
}
#: what the tab shows once the link has been opened
READY = TAB_READY
MEDIA = {"window-search": ("#ws-movie",), "cloze": ("#cloze-grid",), "impact": ("#impact-video", "#impact-body3d")}
LEGENDS = {"window-search": "#ws-timeline .ws-legend", "impact": "#impact-timeline .impact-timeline-legend"}

# Every non-empty text node whose parent is drawn (not display:none, visibility:hidden or opacity 0)
# and whose box lies on the first screen: its text, its length and its parent's font size.
VISIBLE_TEXT_JS = """() => { const out = [];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT); let node;
  while ((node = walk.nextNode())) {
    const text = node.textContent.trim(); const el = node.parentElement;
    if (!text || !el) continue;
    const cs = getComputedStyle(el);
    if (cs.visibility === 'hidden' || cs.display === 'none' || parseFloat(cs.opacity) === 0) continue;
    const range = document.createRange(); range.selectNodeContents(node); const b = range.getBoundingClientRect();
    if (b.width < 1 || b.height < 1 || b.bottom < 0 || b.top > innerHeight || b.right < 0 || b.left > innerWidth) continue;
    out.push([text.slice(0, 40), text.length, parseFloat(cs.fontSize)]);
  }
  return out; }"""
# buttons on the first screen whose label is wider than the button
CUT_BUTTONS_JS = """() => [...document.querySelectorAll('button')].filter(b => { const r = b.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && r.top < innerHeight && r.bottom > 0 && r.left < innerWidth && r.right > 0
      && b.scrollWidth > b.clientWidth; }).map(b => [b.id || b.innerText.trim().slice(0, 30), b.scrollWidth, b.clientWidth])"""
# drawn: a box of some size, and neither it nor a parent hidden
DRAWN_JS = """(s) => [...document.querySelectorAll(s)].some(e => { const r = e.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && e.checkVisibility({checkOpacity: true, checkVisibilityCSS: true}); })"""


@pytest.fixture
def visit(sized_page, app_url):
    """Open a tab's README link at a size, in a browser context of its own."""
    return lambda tab, size, present=True: sized_page(f"{app_url}{LINKS[tab]}&present={int(present)}", size,
                                                      READY[tab], 60_000)


def assert_readable(page, where: str) -> None:
    texts = page.evaluate(VISIBLE_TEXT_JS)
    total = sum(n for _, n, _ in texts)
    large = sum(n for _, n, px in texts if px >= 20)
    small = sorted({(px, t) for t, _, px in texts if px < 16})
    assert total > 100, f"{where}: hardly any text on screen ({total} characters)"
    assert large >= 0.9 * total, (f"{where}: {100 * large / total:.0f}% of {total} visible characters at 20 px "
                                  f"or more; under 20: {sorted({(px, t) for t, _, px in texts if px < 20})[:12]}")
    assert small == [], f"{where}: text under 16 px: {small}"


def assert_no_cut_button(page, where: str) -> None:
    cut = page.evaluate(CUT_BUTTONS_JS)
    assert cut == [], f"{where}: button labels wider than their buttons (id, label px, button px): {cut}"


def legend_fits(page, selector: str) -> dict:
    page.wait_for_selector(selector)      # a busy machine may draw the timeline after the tab's ready sign
    settle(page, selector)
    return page.evaluate("""(s) => { const e = document.querySelector(s); const r = e.getBoundingClientRect();
        return {scroll: e.scrollWidth, client: e.clientWidth, bottom: r.bottom, right: r.right,
                width: innerWidth, height: innerHeight}; }""", selector)


@pytest.mark.parametrize("tab", list(LINKS))
def test_a_presented_link_reads_from_the_back_of_the_room(visit, tab):
    page = visit(tab, PROJECTOR)
    assert page.evaluate("() => document.body.classList.contains('present')")
    assert_readable(page, f"{tab} presented")
    media = max(page.locator(s).first.bounding_box()["height"] for s in MEDIA[tab])
    assert media >= 0.55 * PROJECTOR[1], (tab, media)
    assert_no_cut_button(page, f"{tab} presented")
    if tab in LEGENDS:
        fit = legend_fits(page, LEGENDS[tab])
        assert fit["scroll"] <= fit["client"], (tab, fit)               # no chip cut off at its end
        assert fit["bottom"] <= fit["height"] and fit["right"] <= fit["width"], (tab, fit)  # whole on screen


def test_presented_window_search_reads_its_checklist_after_a_run(visit):
    """The statements, their verdicts and evidence, the verdict column's header on one line."""
    page = visit("window-search", PROJECTOR)
    page.locator("#ws-run").click()
    page.wait_for_selector("#ws-checklist table tbody tr", timeout=180_000)
    page.wait_for_function("() => (document.querySelector('#ws-result')?.innerText || '').includes('window')",
                           timeout=180_000)   # the run's result line: the run has ended
    settle(page, "#ws-checklist")
    assert_readable(page, "window search presented, after a run")
    assert_no_cut_button(page, "window search presented, after a run")
    header = page.evaluate("""() => [...document.querySelectorAll('#ws-checklist th')].map(th => {
        const r = document.createRange(); r.selectNodeContents(th);
        return [th.innerText.trim(), r.getClientRects().length, th.scrollWidth <= th.clientWidth]; })""")
    assert header and all(lines == 1 and fits for _, lines, fits in header), header
    chips = page.evaluate("""() => [...document.querySelectorAll('#ws-checklist .ws-chip')].map(c => {
        const a = c.getBoundingClientRect(), b = c.closest('td').getBoundingClientRect();
        return a.left >= b.left - 1 && a.right <= b.right + 1; })""")
    assert chips and all(chips), chips   # each verdict badge inside its cell


def test_presented_cloze_hides_its_configuration_and_is_played_with_the_keys(visit):
    page = visit("cloze", PROJECTOR)
    for selector in ("#cloze-mode", "#cloze-annotator", "#cloze-blind", "#cloze-display", "#cloze-start",
                     "#cloze-copy-link"):
        assert not page.evaluate(DRAWN_JS, selector), f"{selector} is shown in presentation"
    for selector in ("#cloze-beginning-img img", "#cloze-end-img img", "#cloze-cand-A-img img",
                     "#cloze-cand-D-img img", "#cloze-choice-A", "#cloze-choice-D", "#cloze-next"):
        assert page.evaluate(DRAWN_JS, selector), f"{selector} is not shown in presentation"
    progress = "document.querySelector('#cloze-progress').innerText"
    first = int(page.evaluate(f"() => {progress}").split("Question ")[1].split()[0])
    page.locator("body").click(position={"x": 960, "y": 1070})   # the page has the focus, no box does
    page.keyboard.press("ArrowRight")
    page.wait_for_function(f"(n) => {progress}.includes('Question ' + n + ' of')", arg=first + 1)
    page.keyboard.press("p")
    page.wait_for_function(f"(n) => {progress}.includes('Question ' + n + ' of')", arg=first)
    page.keyboard.press("n")
    page.wait_for_function(f"(n) => {progress}.includes('Question ' + n + ' of')", arg=first + 1)
    # a letter answers the question shown, with no Start / resume to press (it is hidden)
    page.locator("#cloze-choice-B").click()
    page.wait_for_function(f"() => {progress}.includes('answered 1/')")
    assert "Start / resume first" not in page.locator("#cloze-message").inner_text()


@pytest.mark.parametrize("tab", list(LEGENDS))
def test_the_timeline_legends_are_whole_on_a_laptop(visit, tab):
    page = visit(tab, LAPTOP, present=False)
    fit = legend_fits(page, LEGENDS[tab])
    assert fit["scroll"] <= fit["client"] and fit["right"] <= fit["width"], (tab, fit)
    assert_no_cut_button(page, f"{tab} on a laptop")
