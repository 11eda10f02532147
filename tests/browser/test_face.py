"""The app's face, measured the way a person meets it (headless Chromium, example data): each tab
opens on its media at a laptop's and a projector's size, `?present=1` makes the media and the type
large from the link and keeps it across tabs and a reload, the page asks no other host for
anything, one row of buttons is one height, every element id is unique, and the phone layout
keeps the question's pictures clear of the answer bar."""
from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from tests.browser.conftest import TAB_READY, settle

LAPTOP, PROJECTOR, PHONE = (1440, 900), (1920, 1080), (390, 844)
#: what each tab must show whole on the first screen (no scrolling)
WORKING_SET = {
    "window-search": ("#ws-movie", "#ws-timeline .ws-tl", "#ws-checklist"),
    "cloze": ("#cloze-beginning-img", "#cloze-end-img", "#cloze-cand-A-img", "#cloze-cand-B-img",
              "#cloze-cand-C-img", "#cloze-cand-D-img", "#cloze-choice-A", "#cloze-choice-D", "#cloze-submit"),
    "impact": ("#impact-video", "#impact-body3d", "#impact-timeline .impact-timeline-body"),
}
#: what the tab shows once a page has opened it (the page-load event has run)
READY = TAB_READY
PRIMARY = {"window-search": ("#ws-movie",), "cloze": ("#cloze-grid",), "impact": ("#impact-video", "#impact-body3d")}


@pytest.fixture
def visit(sized_page, app_url):
    """Open `?tab=<tab>[&more]` at a size in a fresh context; the page's requests are recorded."""
    return lambda tab, size, more="": sized_page(f"{app_url}?tab={tab}{more}", size, READY[tab], 60_000)


def box(page, selector: str) -> dict:
    found = page.locator(selector).first
    found.wait_for(state="visible", timeout=30_000)
    return found.bounding_box()


def whole_on_screen(page, selector: str) -> bool:
    b = box(page, selector)
    width, height = page.viewport_size["width"], page.viewport_size["height"]
    return b["y"] >= -1 and b["y"] + b["height"] <= height + 1 and b["x"] >= -1 and b["x"] + b["width"] <= width + 1


def font_px(page, selector: str) -> float:
    """The font size of the first text the page draws inside `selector` (its text node's parent)."""
    return page.evaluate("""(s) => { const root = document.querySelector(s);
        const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT,
            {acceptNode: (n) => n.textContent.trim() ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_SKIP});
        const node = walk.nextNode(); return parseFloat(getComputedStyle(node ? node.parentElement : root).fontSize); }""",
                         selector)


@pytest.mark.parametrize("size", [LAPTOP, PROJECTOR], ids=["1440x900", "1920x1080"])
@pytest.mark.parametrize("tab", list(WORKING_SET))
def test_each_tab_opens_on_its_whole_working_set_without_scrolling(visit, tab, size):
    page = visit(tab, size)
    off = [s for s in WORKING_SET[tab] if not whole_on_screen(page, s)]
    assert off == [], f"{tab} at {size}: not whole on the first screen: {off}"
    # the media is the largest thing on screen: at least a third of the viewport's height
    tallest = max(box(page, s)["height"] for s in PRIMARY[tab])
    assert tallest >= size[1] / 3, (tab, size, tallest)
    # one header line: the name, the tabs and the model badge side by side, in under 70 px
    tabs, badge = box(page, f"#tab-{tab}-button"), box(page, "#backend-badge")
    assert abs((tabs["y"] + tabs["height"] / 2) - (badge["y"] + badge["height"] / 2)) < 16
    assert badge["y"] + badge["height"] < 70
    # the tab's explanation is one line; the rest is folded away
    intro = {"window-search": "#ws-intro", "cloze": "#cloze-progress", "impact": "#impact-intro"}[tab]
    assert box(page, intro)["height"] < 40


@pytest.mark.parametrize("tab", list(WORKING_SET))
def test_presentation_mode_from_the_link_is_large_and_hides_the_configuration(visit, tab):
    page = visit(tab, PROJECTOR, "&present=1")
    assert page.evaluate("() => document.body.classList.contains('present')")
    assert page.locator("#app-present input[type=checkbox]").is_checked()
    height = PROJECTOR[1]
    media = max(box(page, s)["height"] for s in PRIMARY[tab])
    assert media >= 0.55 * height, (tab, media)
    off = [s for s in WORKING_SET[tab] if not whole_on_screen(page, s)]
    assert off == [], f"{tab} presented: not whole on the first screen: {off}"
    caption = {"window-search": "#ws-partner", "cloze": "#cloze-progress", "impact": "#impact-regions"}[tab]
    assert font_px(page, caption) >= 20
    labels = {"window-search": ["#ws-timeline .ws-label", "#ws-timeline .ws-axis div:not(.ws-tick)",
                                "#ws-checklist"],
              "cloze": ["#cloze-beginning-img label"],
              "impact": ["#impact-timeline .impact-timeline-body"]}[tab]
    for selector in labels:
        assert font_px(page, selector) >= 16, (tab, selector)
    hidden = page.evaluate("""() => [...document.querySelectorAll('.tab-config, #backend-badge')]
        .filter(e => e.offsetParent !== null && e.closest('.tabitem')?.style.display !== 'none')
        .map(e => e.id || e.className)""")
    assert hidden == []
    # kept across the tabs and a reload (the browser remembers it)
    page.get_by_role("tab", name="Impact" if tab != "impact" else "Cloze").click()
    assert page.evaluate("() => document.body.classList.contains('present')")
    page.goto(page.url.split("?")[0] + f"?tab={tab}", wait_until="load")
    page.wait_for_function(READY[tab], timeout=120_000)
    assert page.evaluate("() => document.body.classList.contains('present')")
    # and turned off by hand
    page.locator("#app-present input[type=checkbox]").uncheck()
    assert not page.evaluate("() => document.body.classList.contains('present')")


def test_an_offline_talk_asks_no_other_host(visit, app_url):
    host = urlsplit(app_url).hostname
    seen = []
    for tab in WORKING_SET:
        page = visit(tab, PROJECTOR, "&present=1")
        for label in ("Window search", "Cloze", "Impact"):
            page.get_by_role("tab", name=label).click()
            settle(page)   # the tab drawn, its events answered, its images loaded
        seen += page.requests
    foreign = sorted({u for u in seen if urlsplit(u).hostname not in (host, None) and not u.startswith("data:")
                      and not u.startswith("blob:")})
    assert foreign == [], foreign


@pytest.mark.parametrize("tab", list(WORKING_SET))
def test_buttons_of_a_row_are_one_height_and_ids_are_unique(visit, tab):
    page = visit(tab, LAPTOP)
    rows = page.evaluate("""() => [...document.querySelectorAll('.row')].filter(r => r.offsetParent !== null)
        .map(r => [...r.children].filter(c => c.tagName === 'BUTTON' && c.offsetParent !== null)
        .map(b => Math.round(b.getBoundingClientRect().height))).filter(hs => hs.length > 1)""")
    uneven = [hs for hs in rows if max(hs) - min(hs) > 2]
    assert rows and uneven == [], uneven
    overlapping = page.evaluate("""() => { const bs = [...document.querySelectorAll('button')]
        .filter(b => b.offsetParent !== null && !b.closest('.visually-hidden'))
        .map(b => [b.id || b.innerText.slice(0, 20), b.getBoundingClientRect()]);
        const out = [];
        for (let i = 0; i < bs.length; i++) for (let j = i + 1; j < bs.length; j++) {
          const [n, a] = bs[i], [m, b] = bs[j];
          if (a.width && b.width && a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1
              && b.top < a.bottom - 1 && !(a.left >= b.left && a.right <= b.right
              && a.top >= b.top && a.bottom <= b.bottom)) out.push([n, m]);
        }
        return out; }""")
    assert overlapping == [], overlapping   # no button drawn over another (a click would hit the wrong one)
    duplicates = page.evaluate("""() => { const n = {}; for (const e of document.querySelectorAll('[id]'))
        if (e.id) n[e.id] = (n[e.id] || 0) + 1; return Object.keys(n).filter(k => n[k] > 1); }""")
    assert duplicates == []


def test_empty_placeholders_stay_hidden_until_they_have_something_to_show(visit):
    page = visit("window-search", LAPTOP)
    for selector in ("#ws-cast", "#ws-export-file", "#ws-link", "#ws-window-pick"):
        assert not page.locator(selector).first.is_visible(), selector
    page = visit("impact", LAPTOP)
    assert not page.locator("#impact-turntable").first.is_visible()
    assert page.locator("#impact-body3d button[aria-label*='lear'], #impact-body3d button[title*='lear']").count() == 0
    assert "IoU" not in page.locator("#impact-timeline").inner_text()    # nothing predicted: nothing scored
    page = visit("cloze", LAPTOP)
    assert not page.locator("#cloze-export-file").first.is_visible()
    tile = box(page, "#cloze-cand-A-img img")
    assert tile["width"] >= 300 and tile["height"] >= 160   # a clip's frames large enough to judge


def test_on_a_phone_the_answer_bar_leaves_the_pictures_visible(visit):
    page = visit("cloze", PHONE)
    bar = box(page, "#cloze-answer")
    assert bar["height"] <= 64
    page.locator("#cloze-display label").filter(has_text="Video").click()
    page.wait_for_function("() => !!document.querySelector('#cloze-cand-D-video video')", timeout=60_000)
    for letter in "ABCD":
        tile = box(page, f"#cloze-cand-{letter}-video")
        assert tile["width"] > 140 and tile["height"] > 100, (letter, tile)
    # the last candidate can be scrolled clear of the sticky bar
    page.locator("#cloze-cand-D-video").scroll_into_view_if_needed()
    page.mouse.wheel(0, 400)
    settle(page, "#cloze-answer")
    last, bar = box(page, "#cloze-cand-D-video"), box(page, "#cloze-answer")
    assert last["y"] + last["height"] <= bar["y"] + 1


def test_an_error_is_one_line_where_the_eye_is_in_every_tab_never_a_toast(visit):
    page = visit("window-search", LAPTOP)
    page.locator("#ws-export").click()                      # nothing to export before a run: said under the button
    page.wait_for_function("() => /nothing to export/.test(document.querySelector('#ws-tools-message')?.innerText || '')")
    page = visit("impact", LAPTOP)
    box = page.locator("#impact-frame input[type='number']").first
    box.fill("")                                            # an empty frame box: said as it is typed
    page.wait_for_function("() => (document.querySelector('#impact-message')?.innerText || '').startsWith('⚠')")
    page = visit("cloze", LAPTOP)
    page.locator("#cloze-submit").click()                   # Submit before any playthrough started
    page.wait_for_function("() => (document.querySelector('#cloze-message')?.innerText || '').startsWith('⚠')")
    for tab_page in (page,):
        assert tab_page.locator(".toast-body, .toast-wrap .error").count() == 0
    line, stage = box_of(page, "#cloze-message"), box_of(page, "#cloze-grid")
    assert line["y"] + line["height"] <= stage["y"] + 1       # above the stage, not under the fold


def box_of(page, selector: str) -> dict:
    return page.locator(selector).first.bounding_box()
