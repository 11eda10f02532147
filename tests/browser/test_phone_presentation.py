"""Presentation asked for on a 390x844 phone (headless Chromium): the page keeps the normal layout
and one line at the top says why; the linked question is whole there (the "Opened from a link"
line the screen's width, each of the six clips inside the screen with all its frames), the wish is
kept (the address, a wider window presents). Window search on the phone shows its movie on the
first screen under the pickers."""
from __future__ import annotations

from tests.browser.conftest import TAB_READY

PHONE = (390, 844)
CLIPS = ["beginning", "end", "cand-A", "cand-B", "cand-C", "cand-D"]


def test_presentation_on_a_phone_falls_back_to_the_normal_layout_and_says_why(sized_page, app_url):
    page = sized_page(f"{app_url}?tab=cloze&stem=bar_fill&q=P&present=1", PHONE, TAB_READY["cloze"])
    page.wait_for_function("() => (document.querySelector('#cloze-feedback')?.innerText || '').includes('link')")
    assert not page.evaluate("() => document.body.classList.contains('present')")
    note = page.locator("#present-fallback")
    assert note.is_visible() and "390 px" in note.inner_text() and "normal layout" in note.inner_text()
    box = note.bounding_box()
    assert box["y"] >= 0 and box["y"] + box["height"] <= 120, box     # at the top, where the page opens
    assert page.locator("#app-present input").is_checked()               # the wish is kept
    assert "present=1" in page.url
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE[0]
    line = page.locator("#cloze-feedback").bounding_box()
    assert line["width"] >= 0.8 * PHONE[0], f"the link's line is squeezed: {line}"
    for slot in CLIPS:
        img = page.locator(f"#cloze-{slot}-img img")
        img.wait_for()
        shown = img.evaluate("""e => { const r = e.getBoundingClientRect(), b = e.closest('.cloze-clip').getBoundingClientRect();
            return {left: r.left, right: r.right, width: r.width, height: r.height, boxLeft: b.left, boxRight: b.right,
                    ratio: e.naturalWidth / e.naturalHeight, fit: getComputedStyle(e).objectFit}; }""")
        assert shown["left"] >= shown["boxLeft"] - 1 and shown["right"] <= min(shown["boxRight"], PHONE[0]) + 1, (slot, shown)
        # the whole 16-frame grid is drawn: as wide as its picture's proportions allow, nothing cut
        drawn_ratio = shown["width"] / shown["height"]
        assert shown["fit"] == "contain" or abs(drawn_ratio - shown["ratio"]) < 0.05, (slot, shown)
    page.set_viewport_size({"width": 1440, "height": 900})               # a wider window presents
    page.wait_for_function("() => document.body.classList.contains('present')")
    assert not page.locator("#present-fallback").is_visible()


def test_window_search_on_a_phone_shows_the_movie_on_the_first_screen(sized_page, app_url):
    page = sized_page(f"{app_url}?tab=window-search&movie=m01&qid=p0005_t&t=400", PHONE, TAB_READY["window-search"])
    movie = page.locator("#ws-movie").bounding_box()
    assert movie["y"] <= 500 and movie["y"] + movie["height"] <= PHONE[1], f"the movie starts at y={movie['y']}"
    for picker in ("#ws-movie-pick", "#ws-query-pick", "#ws-run"):     # the pickers and Run stay above it
        b = page.locator(picker).bounding_box()
        assert b["y"] + b["height"] <= movie["y"], (picker, b, movie)
