"""Text fits its box and is readable outside presentation (headless Chromium): no visible text
under 12 px in the tabs at 1440x900 and on the study page at 1440x900 and 390x844 (its navigator's
numbers and legend included); the model badge with two methods keeps its text inside its pill
(scrollWidth vs clientWidth) without running onto the Present switch, the sidebar open or closed,
at 1440x900 and 1920x1080; every dropdown's value, the badge and chips fit their boxes in each tab
at 390x844, 1440x900 and 1920x1080 (a long value ends in "…" before its arrow)."""
from __future__ import annotations

import pytest

from tests.browser.conftest import TAB_READY, open_model_panel
from tests.browser.test_study_page import _fresh, _link, _through_intro, _wait_question, study_url  # noqa: F401

LINKS = {
    "window-search": "?tab=window-search&movie=m01&qid=p0005_t&t=400",
    "impact": "?tab=impact&clip=h0007&frame=46",
    "cloze": "?tab=cloze&stem=bar_fill&q=P",
}
# every drawn text node under 12 px: [its text, its element, its size]
SMALL_TEXT_JS = """(root) => { const out = [];
  const walk = document.createTreeWalker(document.querySelector(root) || document.body, NodeFilter.SHOW_TEXT);
  let node;
  while ((node = walk.nextNode())) {
    const text = node.textContent.trim(); const el = node.parentElement;
    if (!text || !el || !el.checkVisibility({checkOpacity: true, checkVisibilityCSS: true})) continue;
    const range = document.createRange(); range.selectNodeContents(node); const b = range.getBoundingClientRect();
    if (b.width < 1 || b.height < 1) continue;
    const px = parseFloat(getComputedStyle(el).fontSize);
    if (px < 12) out.push([text.slice(0, 24), el.className || el.tagName, px]);
  }
  return out; }"""
FITS_JS = """(s) => [...document.querySelectorAll(s)].map(e => [e.scrollWidth, e.clientWidth])"""


@pytest.mark.parametrize("tab", ["window-search", "impact"])
def test_the_timelines_read_at_12_px_and_more_outside_presentation(sized_page, app_url, tab):
    page = sized_page(f"{app_url}{LINKS[tab]}&present=0", (1440, 900), TAB_READY[tab])
    root = {"window-search": "#ws-timeline", "impact": "#impact-timeline"}[tab]
    page.wait_for_function("(s) => (document.querySelector(s)?.innerText || '').trim().length > 0", arg=root)
    small = page.evaluate(SMALL_TEXT_JS, root)
    assert small == [], f"{tab}: timeline text under 12 px: {small[:12]}"


@pytest.mark.parametrize("size", [(1440, 900), (390, 844)])
def test_the_study_page_reads_at_12_px_and_more(browser, study_url, size):  # noqa: F811 - the imported fixture
    url, data = study_url
    page = _fresh(browser, _link(url, data, f"anon-type-{size[0]}"), size)
    try:
        _through_intro(page, f"anon-type-{size[0]}")
        _wait_question(page, f"anon-type-{size[0]}")
        page.wait_for_selector("#study-navigator .study-nav-legend")
        small = page.evaluate(SMALL_TEXT_JS, "body")
        assert small == [], f"study page at {size}: text under 12 px: {small[:12]}"
    finally:
        page.close()


def _two_methods(page) -> None:
    open_model_panel(page)
    box = page.locator("#settings-backend input").first
    box.fill("baseline:edge1")
    box.press("Enter")
    page.locator("#settings-compare-panel").get_by_text("Compare with another backend").first.click()
    other = page.locator("#settings-compare input").first
    other.wait_for(state="visible")
    other.fill("baseline:edge4")
    other.press("Enter")
    page.locator("#settings-apply").click()
    page.wait_for_function("() => (document.querySelector('#backend-badge')?.innerText || '').includes('compare with')")


def _badge_fits(page, where: str) -> None:
    page.wait_for_function("""() => { const s = document.querySelector('#app-sidebar');
        const r = s.getBoundingClientRect(); return r.right <= innerWidth + 1 || r.left >= innerWidth - 1; }""")
    for scroll, client in page.evaluate(FITS_JS, "#backend-badge, #backend-badge .prose"):
        assert scroll <= client, f"{where}: the badge's text is {scroll} px in a {client} px box"
    badge, switch = (page.locator(s).bounding_box() for s in ("#backend-badge", "#app-present"))
    assert badge["x"] + badge["width"] <= switch["x"] + 1, f"{where}: the badge runs onto Present: {badge} {switch}"


@pytest.mark.parametrize("size", [(1440, 900), (1920, 1080)])
def test_the_badge_of_two_methods_keeps_its_text_in_its_pill(sized_page, app_url, size):
    page = sized_page(app_url, size, TAB_READY["window-search"])
    _two_methods(page)
    _badge_fits(page, f"{size}, the sidebar open")
    page.locator("#app-sidebar .toggle-button").first.click()
    page.wait_for_function("() => !document.querySelector('#app-sidebar')?.classList.contains('open')")
    _badge_fits(page, f"{size}, the sidebar closed")


# every dropdown value on screen (the closed sidebar's are off it): its text's width in its own font
# (an ellipsised <input>'s scrollWidth is its whole text's, so the text is measured), the room its
# box gives the text (inside its padding), the width of its id (the value up to " · "), whether it
# ends in "…" when cut, and how far its text area runs under the dropdown's arrow
PICKER_TEXT_JS = """() => [...document.querySelectorAll('.gradio-container .wrap-inner input')].filter(e => {
    const r = e.getBoundingClientRect(); return e.offsetParent && e.value && r.width > 0 && r.left >= 0 && r.right <= innerWidth + 1; })
  .map(e => { const cs = getComputedStyle(e); const c = document.createElement('canvas').getContext('2d'); c.font = cs.font;
    const room = Math.floor(e.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight));
    const end = e.getBoundingClientRect().left + e.clientLeft + e.clientWidth - parseFloat(cs.paddingRight);
    const arrow = e.closest('.wrap-inner')?.querySelector('.icon-wrap');
    return {id: e.closest('[id]')?.id, value: e.value, text: Math.ceil(c.measureText(e.value).width), room,
            head: Math.ceil(c.measureText(e.value.split(' · ')[0]).width), ellipsis: cs.textOverflow === 'ellipsis',
            under_arrow: arrow ? Math.round(end - arrow.getBoundingClientRect().left) : 0}; })"""
# the model badge and every chip (a multiselect's tokens, chips) on screen: [id, text, scrollWidth, clientWidth]
BADGE_CHIPS_JS = """() => [...document.querySelectorAll('#backend-badge, #backend-badge .prose, .token, [class*=chip]')]
  .filter(e => { const r = e.getBoundingClientRect(); return e.offsetParent && r.width > 0 && r.left >= 0 && r.right <= innerWidth + 1; })
  .map(e => [e.id || e.className.toString().slice(0, 24), e.innerText.trim().slice(0, 30), e.scrollWidth, e.clientWidth])"""


@pytest.mark.parametrize("size", [(390, 844), (1440, 900), (1920, 1080)])
@pytest.mark.parametrize("tab", ["window-search", "impact", "cloze"])
def test_dropdown_values_the_badge_and_chips_fit_their_boxes(sized_page, app_url, tab, size):
    """No value runs past its box or under its arrow, on a phone, a laptop and a projector: a value
    fits whole, or (a long window-search query, an Impact clip's words on a phone) its id and the
    start of its words show and it ends in "…" before the arrow, the whole value being the box's
    tooltip (components/common/theme.py, page.py); the badge and chips fit (scrollWidth)."""
    page = sized_page(f"{app_url}{LINKS[tab]}", size, TAB_READY[tab])
    picker = {"window-search": "ws-query-pick", "impact": "impact-clip"}.get(tab)
    if picker:   # the tab's ready before its picker has its value
        page.wait_for_function("(s) => !!document.querySelector(s)?.value", arg=f"#{picker} .wrap-inner input")
    pickers = page.evaluate(PICKER_TEXT_JS)
    assert not picker or picker in {p["id"] for p in pickers}, pickers
    under = [(p["id"], p["under_arrow"]) for p in pickers if p["under_arrow"] > 1]
    assert under == [], f"{tab} at {size}: values whose text runs under the arrow (id, px): {under}"
    cut = [(p["id"], p["text"], p["room"]) for p in pickers
           if p["text"] > p["room"] + 1 and not (p["ellipsis"] and p["head"] <= p["room"])]
    assert cut == [], f"{tab} at {size}: picker values cut without '…' or their id (id, text px, room px): {cut}"
    for p in pickers:
        if p["text"] > p["room"] + 1:   # cut with "…": the whole value on hover
            box = page.locator(f"#{p['id']} .wrap-inner input").first
            box.hover()
            assert box.get_attribute("title") == p["value"], f"{tab} at {size}: {p['id']} has no tooltip"
    wide = [(name, text, scroll, client) for name, text, scroll, client in page.evaluate(BADGE_CHIPS_JS)
            if scroll > client + 1]
    assert wide == [], f"{tab} at {size}: badge or chips wider than their box (id, text, scrollWidth, clientWidth): {wide}"


# drawn buttons (the folds' titles included) and chips on the screen's width whose text is wider
# than their box
CUT_JS = """() => [...document.querySelectorAll('button, [class*=chip]')].filter(e => {
    const r = e.getBoundingClientRect();
    return e.offsetParent && r.width > 0 && r.left >= 0 && r.right <= innerWidth && e.scrollWidth > e.clientWidth; })
  .map(e => [e.id || e.className.toString().slice(0, 24), e.innerText.trim().slice(0, 30), e.scrollWidth, e.clientWidth])"""


@pytest.mark.parametrize("size", [(1440, 900), (1920, 1080), (390, 844)])
@pytest.mark.parametrize("tab", ["window-search", "impact", "cloze"])
def test_no_button_fold_title_or_chip_is_wider_than_its_box(sized_page, app_url, tab, size):
    page = sized_page(f"{app_url}{LINKS[tab]}", size, TAB_READY[tab])
    cut = page.evaluate(CUT_JS)
    assert cut == [], f"{tab} at {size}: (id, text, scrollWidth, clientWidth): {cut}"
