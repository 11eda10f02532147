"""Window search in the browser (baseline backend, the example movie): one playhead drives the
player, the timeline, the slider and the checklist; deep links, copy link and the presentation
keys; errors on one message line; the phone layout; screenshots at three sizes."""
from __future__ import annotations

import json
import os
import re
import shutil

from tests.browser.conftest import ARTIFACTS, ROOT, fill_steady, idle, open_tab, settle

DOCS = ROOT / "docs"
STAGE = ("#ws-movie", "#ws-timeline", "#ws-checklist")


def _screenshot(page, w: int, h: int) -> None:
    """test-artifacts/window-search-WxH.png; with UPDATE_DOCS_SCREENSHOTS=1 also docs/ (never else)."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"window-search-{w}x{h}.png"
    page.screenshot(path=str(path), full_page=True)
    if os.environ.get("UPDATE_DOCS_SCREENSHOTS") == "1":
        shutil.copyfile(path, DOCS / path.name)


def _goto(page, url: str) -> None:
    """Open `url` in the page (a navigation still settling in the page aborts the first try)."""
    from playwright.sync_api import Error

    try:
        page.goto(url, wait_until="load")
    except Error:
        page.wait_for_load_state("load")      # the navigation that aborted ours has finished
        page.goto(url, wait_until="load")


def _ready(page) -> None:
    """The page's load event has opened the first movie and picked a query."""
    open_tab(page, "Window search")
    page.wait_for_function("() => (document.querySelector('#ws-query textarea')?.value || '').length > 0",
                           timeout=120_000)


def _run(page) -> None:
    page.locator("#ws-run").click()
    page.wait_for_function("() => /IoU/.test(document.querySelector('#ws-result')?.innerText || '')",
                           timeout=240_000)


MAP_REV = "() => document.querySelector('#ws-timeline .ws-play-map')?.dataset.rev || ''"


def _click_timeline(page, selector: str) -> None:
    """Click a block of the timeline and wait for the answer to that click: every answer carries
    a new play-map revision, and what a view showed before (the Run's last answer) can already
    hold the text or the player time a test waits for."""
    before = page.evaluate(MAP_REV)
    page.locator(selector).click()
    page.wait_for_function(f"(b) => ({MAP_REV})() !== b", arg=before, timeout=60_000)


def _video_at(page, seconds: float) -> None:
    page.wait_for_function(
        "(t) => { const v = document.querySelector('#ws-movie video'); return v && Math.abs(v.currentTime - t) < 1.5; }",
        arg=seconds, timeout=60_000)


def _slider(page) -> float:
    return float(page.locator("#ws-scrub input[type='number']").first.input_value())


def _checklist_has(page, text: str) -> str:
    page.wait_for_function("(s) => document.querySelector('#ws-checklist')?.innerText.includes(s)", arg=text,
                           timeout=60_000)
    return page.locator("#ws-checklist").inner_text()


def _in_viewport(page, selector: str) -> bool:
    box = page.locator(selector).bounding_box()
    size = page.viewport_size
    return box is not None and box["y"] >= -1 and box["y"] + min(box["height"], 200) <= size["height"] + 1 \
        and box["x"] >= 0 and box["x"] + box["width"] <= size["width"] + 1


def _scrub_to(page, seconds: float) -> None:
    bar = page.locator("#ws-scrub input[type='range']").first
    maximum = float(bar.get_attribute("max") or 1)
    box = bar.bounding_box()
    page.mouse.click(box["x"] + box["width"] * min(1.0, seconds / maximum), box["y"] + box["height"] / 2)


def _starts(page) -> dict[str, float]:
    html = page.locator("#ws-timeline").inner_html()
    return {c: float(s) for c, s in re.findall(r'data-chunk="(\d+)" data-start="([\d.]+)"', html)}


def test_one_playhead_drives_player_timeline_slider_and_checklist(page):
    page.set_viewport_size({"width": 1440, "height": 900})
    _ready(page)
    upload = page.locator("#ws-upload")
    assert upload.evaluate("e => e.scrollWidth <= e.clientWidth && e.scrollHeight <= e.clientHeight + 1")
    _run(page)
    timeline = page.locator("#ws-timeline").inner_html()
    accepted = float(re.search(r'data-start="([\d.]+)" data-verdict="accepted"', timeline).group(1))
    _video_at(page, accepted)                                   # Run jumped the player to the window
    assert _slider(page) == accepted and f'data-t="{accepted:.1f}"' in timeline
    text = page.locator("#tab-window-search").inner_text()
    assert "&quot;" not in text and "&amp;" not in text and "B1:" not in text
    assert "statement\tverdict\tevidence" in page.locator("#ws-checklist").inner_text()

    unseen = next(c for c, s in _starts(page).items() if s != accepted and
                  page.locator(f"#ws-timeline [data-chunk='{c}']").get_attribute("data-verdict") != "accepted")
    start = _starts(page)[unseen]
    _click_timeline(page, f"#ws-timeline [data-chunk='{unseen}']")
    note = _checklist_has(page, "not inspected")
    assert f"Chunk {int(unseen) + 1} " in note and "Window rank" not in note
    _video_at(page, start)
    assert _slider(page) == start

    _click_timeline(page, "#ws-timeline [data-verdict='accepted']")
    _checklist_has(page, "Window rank #1 ")
    _video_at(page, accepted)
    assert _slider(page) == accepted
    settle(page)
    assert all(_in_viewport(page, s) for s in STAGE), [page.locator(s).bounding_box() for s in STAGE]
    page.evaluate("() => { document.querySelector('#ws-movie video').currentTime = 250; }")
    _video_at(page, 250)
    page.locator("#ws-timeline [data-verdict='accepted']").click()  # the window already shown: seek back
    _video_at(page, accepted)

    _scrub_to(page, 700)
    _checklist_has(page, "not inspected")
    assert abs(_slider(page) - 700) < 20
    _screenshot(page, 1440, 900)


def test_deep_link_copy_link_and_presentation_keys(page, app_url):
    page.set_viewport_size({"width": 1920, "height": 1080})
    _goto(page, app_url.rstrip("/") + "/?tab=window-search&movie=m01&qid=p0005_t&t=400")
    page.wait_for_function("() => document.querySelector('#ws-query textarea')?.value.includes('Harry and Mary')",
                           timeout=120_000)
    assert "p0005_t" in page.locator("#ws-query-pick input").first.input_value()
    _video_at(page, 400)
    assert _slider(page) == 400 and page.locator("#ws-message").inner_text().strip() == ""
    page.locator("#ws-copy-link").click()
    page.wait_for_function("() => (document.querySelector('#ws-link textarea, #ws-link input')?.value || '')"
                           ".startsWith('http')", timeout=60_000)
    link = page.locator("#ws-link textarea, #ws-link input").first.input_value()
    assert link == app_url.rstrip("/") + "/?movie=m01&qid=p0005_t&t=400&tab=window-search"

    _run(page)                                   # p0005_t with the baseline: all five rejected, one selected
    first = re.search(r"Window rank #(\d) ", _checklist_has(page, "selected (fallback")).group(1)
    page.locator("#ws-intro").click()
    page.keyboard.press("n")
    nxt = str(int(first) + 1)
    _checklist_has(page, f"Window rank #{nxt} ")
    page.keyboard.press("p")
    page.keyboard.press("p")
    _checklist_has(page, f"Window rank #{int(first) - 1} ")
    page.keyboard.press(" ")
    page.wait_for_function("() => !document.querySelector('#ws-movie video').paused", timeout=30_000)
    page.keyboard.press(" ")
    page.wait_for_function("() => document.querySelector('#ws-movie video').paused", timeout=30_000)
    page.locator("#ws-query textarea").click()
    page.keyboard.press("Control+End")
    page.keyboard.press("n")                     # typing in a text field is typing, not a shortcut
    assert page.locator("#ws-query textarea").input_value().endswith("n")
    _screenshot(page, 1920, 1080)

    _goto(page, app_url.rstrip("/") + "/?tab=window-search&qid=p9999")
    page.wait_for_function("() => document.querySelector('#ws-message')?.innerText.includes('p9999')",
                           timeout=120_000)
    assert "The link's qid p9999 is not in this data; showing the first query." in \
        page.locator("#ws-message").inner_text()


def test_errors_are_one_message_line_that_never_covers_a_control(page, tmp_path):
    page.set_viewport_size({"width": 1440, "height": 900})
    _ready(page)
    page.locator("#ws-settings").get_by_text("Search settings").first.click()
    k = page.locator("#ws-k input").first
    fill_steady(page, k, "0")            # the fold mounts its boxes as it opens
    k.press("Tab")
    page.locator("#ws-run").click()
    page.wait_for_function("() => document.querySelector('#ws-message')?.innerText.includes('K candidates')",
                           timeout=120_000)
    assert "K candidates must be at least 1 (got 0)." in page.locator("#ws-message").inner_text()
    assert page.locator("#ws-query-pick input").first.is_visible()
    assert page.locator("#tab-window-search .error").count() == 0   # no red gradio badge anywhere
    k.fill("2.5")
    page.locator("#ws-run").click()
    page.wait_for_function("() => document.querySelector('#ws-message')?.innerText.includes('whole number')",
                           timeout=60_000)
    k.fill("5")
    page.locator("#ws-query-pick input").first.click()
    page.get_by_role("option", name=re.compile("p0002_t")).first.click()
    page.wait_for_function("() => document.querySelector('#ws-message')?.innerText.trim() === ''", timeout=60_000)

    # the trace buttons answer right under themselves, where the eye is when they are in view
    page.locator("#ws-export").scroll_into_view_if_needed()
    page.locator("#ws-export").click()
    page.wait_for_function("() => document.querySelector('#ws-tools-message')?.innerText.includes('nothing to export')",
                           timeout=60_000)
    _next_to(page, "#ws-tools-message", "#ws-export")
    bad = tmp_path / "hello.json"
    bad.write_text(json.dumps({"hello": 1}))
    page.locator("input[type='file'][data-testid='Load trace-upload-button']").set_input_files(str(bad))
    page.wait_for_function("() => document.querySelector('#ws-tools-message')?.innerText.includes('hello.json')",
                           timeout=60_000)
    msg = page.locator("#ws-tools-message").inner_text()
    assert "hello.json is not a saved window-search trace" in msg and "/tmp" not in msg
    _next_to(page, "#ws-tools-message", "#ws-load-trace")
    assert page.locator("#ws-query-pick input").first.is_visible()


def _next_to(page, line: str, button: str) -> None:
    """The message line is on screen with the button, just under it (not above the player)."""
    page.wait_for_function("""(sel) => { const r = document.querySelector(sel).getBoundingClientRect();
        return r.top >= 0 && r.bottom <= window.innerHeight + 1; }""", arg=line, timeout=60_000)
    b, m = page.locator(button).bounding_box(), page.locator(line).bounding_box()
    assert 0 <= b["y"] and 0 <= m["y"] - (b["y"] + b["height"]) <= 40, (m, b)


def test_the_tab_fits_a_phone(page):
    page.set_viewport_size({"width": 390, "height": 844})
    _ready(page)
    _run(page)
    _click_timeline(page, "#ws-timeline [data-verdict='accepted']")
    _checklist_has(page, "Window rank #1 ")
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 390, width
    for selector in ("#ws-checklist", "#ws-checklist table", "#ws-timeline", "#ws-run"):
        box = page.locator(selector).first.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390 + 1, (selector, box)
    _screenshot(page, 390, 844)


def _shown_span(page) -> tuple[float, float]:
    m = page.locator("#ws-timeline .ws-play-map")
    return float(m.get_attribute("data-shown-start")), float(m.get_attribute("data-shown-end"))


def test_playing_the_movie_moves_the_timeline_playhead_and_the_checklist(page):
    page.set_viewport_size({"width": 1440, "height": 900})
    _ready(page)
    _run(page)
    _click_timeline(page, "#ws-timeline [data-verdict='accepted']")
    shown = _checklist_has(page, "Window rank #1 ")
    start, end = _shown_span(page)
    _video_at(page, start)
    # play from 2 s before the window's end; on a loaded machine a late re-render of the player can
    # cut a play() short, so a paused player is started again while waiting (as a person would)
    page.evaluate("(t) => { const v = document.querySelector('#ws-movie video'); v.muted = true; v.currentTime = t; "
                  "v.play().catch(() => {}); }", end - 2.0)
    # the page moves the timeline's playhead while the video plays, before any answer from the server
    page.wait_for_function(
        "(t) => { const v = document.querySelector('#ws-movie video'); if (!v) return false;"
        " if (v.paused) { v.muted = true; if (v.currentTime < t - 1) v.currentTime = t - 0.5;"
        " v.play().catch(() => {}); }"
        " return +(document.querySelector('#ws-timeline .ws-playhead')?.dataset.live || -1) > t; }",
        arg=end - 1.5, timeout=120_000, polling=500)
    page.wait_for_function("(t) => document.querySelector('#ws-movie video').currentTime > t + 1", arg=end,
                           timeout=60_000)
    page.wait_for_function("() => !document.querySelector('#ws-checklist')?.innerText.includes('Window rank #1 ')",
                           timeout=60_000)
    page.wait_for_function(
        "(e) => +document.querySelector('#ws-timeline .ws-play-map').dataset.shownEnd > e + 0.5", arg=end,
        timeout=60_000)
    now = page.evaluate("() => document.querySelector('#ws-movie video').currentTime")
    assert now > end and not page.evaluate("() => document.querySelector('#ws-movie video').paused")
    # a timeline the server redraws meanwhile carries its own playhead until the next timeupdate
    marker = page.wait_for_function(
        "() => { const p = document.querySelector('#ws-timeline .ws-playhead'); "
        "if (!p || !p.dataset.live) return null; "
        "return [parseFloat(p.style.left), +p.dataset.live, "
        "+document.querySelector('#ws-timeline .ws-tl').dataset.duration]; }", timeout=60_000).json_value()
    assert abs(marker[0] - 100 * marker[1] / marker[2]) < 0.5 and marker[1] > end
    after = page.locator("#ws-checklist").inner_text()
    assert after != shown and ("not inspected" in after or "Window rank #" in after)
    assert _slider(page) > end - 0.5                       # the slider followed too
    sent = page.evaluate("() => window.__wsPlay.sent")
    assert 1 <= sent <= 2, sent                            # one request per window crossed, not per timeupdate
    page.evaluate("() => document.querySelector('#ws-movie video').pause()")
    paused = page.evaluate("() => document.querySelector('#ws-movie video').currentTime")
    # paused, the slider shows where the player stopped (the pause is sent: the server's playhead too)
    page.wait_for_function("(t) => Math.abs(+document.querySelector('#ws-scrub input[type=number]').value - t) < 0.6",
                           arg=paused, timeout=30_000)


def test_n_and_p_at_the_last_window_do_not_swallow_later_presses(page, app_url):
    page.set_viewport_size({"width": 1440, "height": 900})
    _goto(page, app_url.rstrip("/") + "/?tab=window-search&qid=p0005_t")   # all five windows inspected
    _ready(page)
    _run(page)
    ranks = sorted(int(r) for r in page.evaluate(
        "() => [...document.querySelectorAll('#ws-timeline [data-inspected]')].map(b => b.dataset.rank)"))
    last = ranks[-1]
    page.locator(f"#ws-timeline [data-rank='{last}']").click()
    _checklist_has(page, f"Window rank #{last} ")
    page.locator("#ws-intro").click()                      # the focus away from any text field
    for _ in range(4):                                     # at the last window: nothing to step to
        page.keyboard.press("n")
    idle(page)
    page.keyboard.press("p")
    page.keyboard.press("p")
    _checklist_has(page, f"Window rank #{ranks[-3]} ")     # both presses counted (not swallowed)
