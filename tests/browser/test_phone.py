"""The phone (390x844) and the one error channel, measured in headless Chromium on the example
data: window search's pickers one under another (nothing of the tab wider than the screen); Cloze's
16-frame grids each the screen's width with the answer bar over none of them; Impact's frame box
label on at most two lines with its reset icon whole; at 1440x900 Impact's frame controls still on
the first screen after Run temporal; and a refused Model panel choice said on the panel's own
message line, next to Apply, never in a toast. (The study page's phone checks are in
test_study_page.py, which serves a study.)"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.browser.conftest import TAB_READY, idle, settle

PHONE, LAPTOP = (390, 844), (1440, 900)
ROOT = Path(__file__).resolve().parents[2]
READY = {**TAB_READY, "cloze": "() => !!document.querySelector('#cloze-cand-D-img img')"}
# every element of one tab's panel that shows and reaches past the screen's right edge (one inside a
# box that clips or scrolls its content is counted only when the box itself does)
WIDER = """(root) => { const out = [];
  for (const e of document.querySelector(root).querySelectorAll('*')) {
    const r = e.getBoundingClientRect();
    if (r.width === 0 || r.height === 0 || r.right <= innerWidth + 1) continue;
    let clipped = false;
    for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) {
      const o = getComputedStyle(a).overflowX;
      if (o !== 'visible' && a.getBoundingClientRect().right <= innerWidth + 1) { clipped = true; break; }
    }
    if (!clipped) out.push((e.id ? '#' + e.id : e.tagName.toLowerCase() + '.' + e.className) + ' right=' + Math.round(r.right));
  } return out; }"""

# every box of one tab's panel that scrolls its content sideways (more than a border's width)
SIDEWAYS = """(root) => [...document.querySelector(root).querySelectorAll('*')].filter(e => {
  const o = getComputedStyle(e).overflowX;
  return (o === 'auto' || o === 'scroll') && e.getBoundingClientRect().width > 0 && e.scrollWidth > e.clientWidth + 4;
}).map(e => (e.id ? '#' + e.id : e.tagName.toLowerCase() + '.' + e.className) + ' ' + e.scrollWidth + '/' + e.clientWidth)"""


@pytest.fixture
def visit(sized_page, app_url):
    return lambda tab, size, more="": sized_page(f"{app_url}?tab={tab}{more}", size, READY[tab])


def box(page, selector: str) -> dict:
    found = page.locator(selector).first
    found.wait_for(state="visible", timeout=30_000)
    return found.bounding_box()


def overlap(a: dict, b: dict) -> bool:
    return (a["x"] < b["x"] + b["width"] - 0.5 and b["x"] < a["x"] + a["width"] - 0.5
            and a["y"] < b["y"] + b["height"] - 0.5 and b["y"] < a["y"] + a["height"] - 0.5)


def test_window_search_on_a_phone_stacks_its_pickers_and_nothing_is_wider_than_the_screen(visit):
    page = visit("window-search", PHONE)
    assert page.evaluate(WIDER, "#tab-window-search") == []
    assert page.evaluate(SIDEWAYS, "#tab-window-search") == []
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE[0]
    pickers = [box(page, s) for s in ("#ws-movie-pick", "#ws-query-pick", "#ws-query")]
    for upper, lower in zip(pickers, pickers[1:]):
        assert upper["y"] + upper["height"] <= lower["y"] + 1        # one under another
    for picker in pickers:
        assert picker["x"] >= 0 and picker["x"] + picker["width"] <= PHONE[0]
        assert picker["width"] >= PHONE[0] - 80                      # each the screen's width


def test_cloze_on_a_phone_shows_each_16_frame_grid_at_the_screens_width_clear_of_the_answer_bar(visit):
    page = visit("cloze", PHONE)
    assert page.locator("#cloze-display input[value='frames']").is_checked()   # the grids, 4 x 4 frames
    for letter in "ABCD":
        grid = box(page, f"#cloze-cand-{letter}-img img")
        assert grid["width"] >= PHONE[0] - 70, (letter, grid)      # the screen less its margins
        assert grid["width"] / 4 >= 60, (letter, grid)             # a frame of the 4 x 4 grid
    for letter in "ABCD":
        page.locator(f"#cloze-cand-{letter}-img").scroll_into_view_if_needed()
        settle(page, f"#cloze-cand-{letter}-img")
        bar = box(page, "#cloze-answer")
        for other in "ABCD":
            clip = box(page, f"#cloze-cand-{other}-img img")
            assert not overlap(bar, clip), (letter, other, bar, clip)
    page.mouse.wheel(0, 10_000)                                       # the letters, after D
    settle(page, "#cloze-answer")
    bar, last = box(page, "#cloze-answer"), box(page, "#cloze-cand-D-img img")
    assert 0 <= bar["y"] and bar["y"] + bar["height"] <= PHONE[1] and not overlap(bar, last)
    assert page.evaluate(WIDER, "#tab-cloze") == []
    assert page.evaluate(SIDEWAYS, "#tab-cloze") == []


def test_cloze_model_mode_on_a_phone_keeps_each_run_button_label_whole_and_the_order_under_them(visit):
    page = visit("cloze", PHONE, "&mode=model&sort=hardest")
    page.locator("#cloze-run-one").wait_for(state="visible", timeout=30_000)
    buttons = [box(page, f"#cloze-run-{name}") for name in ("one", "set")] + [box(page, "#cloze-stop")]
    assert max(b["y"] for b in buttons) - min(b["y"] for b in buttons) < 2          # one line of three
    assert all(b["x"] >= 0 and b["x"] + b["width"] <= PHONE[0] + 1 for b in buttons)
    cut = page.evaluate("""() => ['#cloze-run-one', '#cloze-run-set', '#cloze-stop'].map(s => document.querySelector(s))
        .filter(b => b.scrollWidth > b.clientWidth + 1 || b.scrollHeight > b.clientHeight + 1).map(b => b.id)""")
    assert cut == []
    order = box(page, "#cloze-question-order")
    assert order["y"] >= max(b["y"] + b["height"] for b in buttons) - 1 and order["x"] + order["width"] <= PHONE[0] + 1
    label = page.evaluate("() => { const i = document.querySelector('#cloze-question-order input'); "
                          "return i.scrollWidth <= i.clientWidth + 1; }")
    assert label, "the chosen order's name is cut in its box"


def test_impact_on_a_phone_keeps_the_frame_label_on_two_lines_and_its_reset_icon_whole(visit):
    page = visit("impact", PHONE)
    label = page.locator("#impact-frame label span").first
    label.wait_for(state="visible")
    lines = label.evaluate("(e) => e.getBoundingClientRect().height / parseFloat(getComputedStyle(e).lineHeight)")
    assert lines <= 2.1, lines
    glyph, button, block = page.evaluate("""() => {
        const b = document.querySelector('#impact-frame .reset-button'), r = document.createRange();
        r.selectNodeContents(b);
        const box = (x) => { const q = x.getBoundingClientRect(); return [q.left, q.top, q.right, q.bottom]; };
        return [box(r), box(b), box(document.querySelector('#impact-frame'))]; }""")
    assert glyph[2] - glyph[0] > 4 and glyph[3] - glyph[1] > 8, glyph
    for outer in (button, block):                                     # the icon inside its button and box
        assert outer[0] - 0.5 <= glyph[0] and glyph[2] <= outer[2] + 0.5, (glyph, outer)
        assert outer[1] - 0.5 <= glyph[1] and glyph[3] <= outer[3] + 0.5, (glyph, outer)


def test_impact_at_1440x900_keeps_the_frame_controls_on_the_first_screen_after_run_temporal(visit):
    page = visit("impact", LAPTOP, "&clip=h0004")
    page.wait_for_selector("#impact-frame", state="visible")
    page.locator("#impact-run-temporal").click()
    page.wait_for_function("() => (document.querySelector('#impact-status')?.innerText || '').includes('Temporal')")
    page.wait_for_function("() => document.querySelector('#impact-timeline')?.innerText.includes('#1 IoU')")
    settle(page, "#impact-steps")
    assert page.evaluate("() => window.scrollY") == 0
    for selector in ("#impact-frame", "#impact-step-back", "#impact-step-on"):
        controls = box(page, selector)
        assert controls["y"] + controls["height"] <= LAPTOP[1], (selector, controls)


def test_no_handler_raises_gr_error_or_shows_a_toast():
    """A source scan: errors and notes go to a message line (components/common/ui.py)."""
    toast = re.compile(r"\bgr\.(Error|Warning|Info)\s*\(")
    found = [f"{path.relative_to(ROOT)}:{n}" for path in [*ROOT.joinpath("components").rglob("*.py"), ROOT / "app.py"]
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if toast.search(line)]
    assert found == []


def test_a_refused_model_choice_is_said_on_the_model_panels_line_next_to_apply_never_a_toast(visit):
    page = visit("window-search", LAPTOP)
    page.locator("#backend-badge").click()
    page.locator("#settings-apply").wait_for(state="visible")
    spec = page.locator("#settings-backend input").first
    spec.fill("opneai:gpt")
    spec.press("Enter")
    page.locator("#settings-apply").click()
    page.wait_for_function("() => (document.querySelector('#settings-message')?.innerText || '').includes('Did you mean')")
    line, apply = box(page, "#settings-message"), box(page, "#settings-apply")
    assert page.locator("#app-sidebar #settings-message").count() == 1          # inside the sidebar
    assert apply["y"] + apply["height"] <= line["y"] + 1 and line["y"] - (apply["y"] + apply["height"]) <= 40
    idle(page)   # the Apply's events have answered: a toast would be up
    assert page.locator(".toast-body").count() == 0
    assert "opneai" not in page.locator("#backend-badge").inner_text()          # nothing was applied
    spec.fill("baseline")
    spec.press("Enter")
    page.locator("#settings-apply").click()                                      # a good choice clears it
    page.wait_for_function("() => !(document.querySelector('#settings-message')?.innerText || '').trim()")
    assert not page.locator("#settings-message").is_visible()


# the header's name (the tab row's ::before), its drawn width and how wide its text is
HEADER_NAME = """() => { const row = document.querySelector('#app-tabs > .tab-wrapper');
  const cs = getComputedStyle(row, '::before'); const probe = document.createElement('span');
  probe.textContent = cs.content.replace(/^"|"$/g, ''); probe.style.cssText =
    `position:absolute;visibility:hidden;white-space:nowrap;font:${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
  document.body.appendChild(probe); const needs = probe.getBoundingClientRect().width; probe.remove();
  const tabs = [...row.querySelectorAll('button[role=tab]')].filter(b => b.getBoundingClientRect().width > 0)
    .map(b => ({name: b.innerText.trim(), left: b.getBoundingClientRect().left}));
  // the name's max-width is an expression of the row's width: resolved by a box in the same place
  const room = document.createElement('div'); room.style.cssText =
    `position:absolute;left:4px;top:0;height:1px;width:100000px;visibility:hidden;max-width:${cs.maxWidth}`;
  row.appendChild(room); const shown = room.getBoundingClientRect().width; room.remove();
  return {display: cs.display, shown, needs, padding: parseFloat(getComputedStyle(row).paddingLeft),
          size: parseFloat(cs.fontSize), tabs}; }"""


def test_the_model_sidebar_open_at_1440x900_keeps_the_name_whole_beside_all_three_tabs(visit):
    page = visit("window-search", LAPTOP)
    page.locator("#backend-badge").click()
    page.wait_for_function("() => document.querySelector('#app-sidebar')?.classList.contains('open')")
    settle(page, "#settings-apply")   # the sidebar's slide
    name = page.evaluate(HEADER_NAME)
    assert name["display"] != "none" and name["size"] >= 14, name
    assert name["shown"] >= name["needs"], name                      # the name whole, not cut
    assert [t["name"] for t in name["tabs"]] == ["Window search", "Cloze", "Impact"], name
    assert name["tabs"][0]["left"] >= name["padding"], name          # the tabs right of the name
    pickers = [box(page, sel) for sel in ("#ws-movie-pick", "#ws-query-pick")]
    assert all(p["width"] >= 150 for p in pickers), pickers          # not squeezed to nothing
