"""Cloze's Compare mode shows only what applies to it (headless Chromium, 1440x900): a
`mode=compare` link opens it on the leaderboard; no question's panels, no Start / display /
copy-link controls, no "answer this question first" fold, no blank strip where the hidden
status line was; the practice playthrough's note shows in that mode alone."""
from __future__ import annotations

from tests.browser.conftest import TAB_READY

LAPTOP = (1440, 900)
BOARD = "() => (document.querySelector('#cloze-leaderboard')?.innerText || '').includes('Human')"
DRAWN = """(s) => [...document.querySelectorAll(s)].some(e => { const r = e.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && e.checkVisibility({checkOpacity: true, checkVisibilityCSS: true}); })"""
# the drawn boxes of the tab's column, top to bottom: (id, top, bottom)
COLUMN = """() => { const row = document.querySelector('#cloze-mode').closest('.tab-controls');
    return [...row.parentElement.children].map(c => [c.id || c.className.split(' ')[0], c.getBoundingClientRect()])
      .filter(([, r]) => r.height > 0).map(([id, r]) => [id, Math.round(r.top), Math.round(r.bottom)]); }"""


def test_a_compare_link_opens_compare_mode_with_nothing_that_does_not_apply(sized_page, app_url):
    page = sized_page(f"{app_url}?tab=cloze&mode=compare", LAPTOP, BOARD)
    assert page.locator("#cloze-mode input[value='compare']").is_checked()
    assert "not practice or model" not in page.locator("#cloze-message").inner_text()
    for selector in ("#cloze-question", "#cloze-start", "#cloze-display", "#cloze-copy-link", "#cloze-progress",
                     "#cloze-runs"):
        assert not page.evaluate(DRAWN, selector), f"{selector} is shown in Compare mode"
    text = page.evaluate("() => document.querySelector('.gradio-container').innerText")
    assert "Answer this question first" not in text
    assert "Practice playthrough: answers are kept" not in text     # the practice note is practice's
    column = page.evaluate(COLUMN)
    assert len(column) >= 2, column
    gaps = [(a[0], b[0], b[1] - a[2]) for a, b in zip(column, column[1:])]
    assert all(gap <= 20 for _, _, gap in gaps), f"a blank strip between boxes (id, id, px): {gaps}"
    page.wait_for_function("() => location.search.includes('mode=compare')")   # the address says so


def test_the_practice_note_shows_in_the_practice_playthrough_only(sized_page, app_url):
    page = sized_page(f"{app_url}?tab=cloze", LAPTOP, TAB_READY["cloze"])
    note = "#cloze-mode .info-text"
    assert page.evaluate(DRAWN, note)
    page.locator("#cloze-mode").get_by_text("Model", exact=True).click()
    page.wait_for_function("() => !!document.querySelector('#cloze-run-one')?.offsetParent")
    assert not page.evaluate(DRAWN, note), "the practice note shows in Model mode"
    page.locator("#cloze-mode").get_by_text("Compare", exact=True).click()
    page.wait_for_function(BOARD)
    assert not page.evaluate(DRAWN, note)
    assert not page.evaluate(DRAWN, "#cloze-runs")
    page.wait_for_function("() => location.search.includes('mode=compare')")
