"""The Cloze tab in the browser (baseline backend, the example data): deep links open the exact
question and the copy-link control makes the link that reopens it; errors appear on one message
line, never as gradio badges or toasts over a control; the phone layout; screenshots at three sizes."""
from __future__ import annotations

import os
import shutil

import pytest

from tests.browser.conftest import ARTIFACTS, ROOT, fill_steady, open_tab, scroll_settled, settle, settled_text

DOCS = ROOT / "docs"
LETTERS = [f"#cloze-choice-{x}" for x in "ABCD"]


def _new_page(browser, width: int, height: int):
    page = browser.new_page()
    page.set_viewport_size({"width": width, "height": height})
    return page


def _goto(page, url: str) -> None:
    """Open `url` in the page (a navigation still settling in the page aborts the first try)."""
    from playwright.sync_api import Error

    try:
        page.goto(url, wait_until="load")
    except Error:
        page.wait_for_load_state("load")      # the navigation that aborted ours has finished
        page.goto(url, wait_until="load")
    page.wait_for_selector("#app-tabs", timeout=120_000)


def _question_shown(page) -> str:
    page.wait_for_function("() => /Question \\d+ of/.test(document.querySelector('#cloze-progress')?.innerText || '')",
                           timeout=120_000)
    return page.locator("#cloze-progress").inner_text()


def _message(page) -> str:
    return settled_text(page, "#cloze-message").strip()


def _wait_message(page, text: str) -> str:
    page.wait_for_function("(s) => (document.querySelector('#cloze-message')?.innerText || '').includes(s)",
                           arg=text, timeout=60_000)
    return _message(page)


def _no_badge_or_toast(page) -> None:
    """No red gradio 'Error' badge on a control of the tab, no error toast over the page."""
    assert page.locator("#tab-cloze .error").count() == 0
    assert page.locator(".toast-body.error, .toast-wrap .error").count() == 0


def _run_this_question(page) -> str:
    """Model mode: the baseline answers the question on screen; its summary names stem and dimension."""
    before = page.locator("#cloze-model-summary").inner_text().strip()
    page.locator("#cloze-run-one").click()
    done = """(before) => { const t = (document.querySelector('#cloze-model-summary')?.innerText || '').trim();
        return t !== before && /^[\\w-]+ · dimension (S|A|P|Mixed) · expected [ABCD] · picked /.test(t); }"""  # not the queue line
    page.wait_for_function(done, arg=before, timeout=120_000)
    return page.locator("#cloze-model-summary").inner_text().strip()


def _expected_index(example_data_dir, human: bool, stem: str, dim: str) -> int:
    """Where (stem, dim) stands in the set the tab builds (study order or evaluation order)."""
    from components.cloze.ui.handlers import questions_for
    from components.cloze.ui.session import HUMAN, MODEL, ClozeSession

    session = ClozeSession(data_dir=str(example_data_dir), root=str(example_data_dir / "cloze"),
                           mode=HUMAN if human else MODEL)
    _, qs = questions_for(session)
    return [(q.stem, q.dim) for q in qs.questions].index((stem, dim))


def _link_value(page) -> str:
    page.wait_for_function("() => (document.querySelector('#cloze-link textarea, #cloze-link input')?.value || '')"
                           ".startsWith('http')", timeout=60_000)
    return page.locator("#cloze-link textarea, #cloze-link input").first.input_value()


def test_a_deep_link_opens_the_question_and_copy_link_reopens_it(browser, app_url, example_data_dir):
    base = app_url.rstrip("/")
    page = _new_page(browser, 1920, 1080)
    page.set_default_timeout(60_000)
    try:
        _goto(page, base + "/?tab=cloze&stem=bar_fill&q=P&mode=model&seed=7")
        n = _expected_index(example_data_dir, False, "bar_fill", "C") + 1
        assert f"Question {n} of " in _question_shown(page)
        assert page.locator("#cloze-mode input[value='model']").is_checked()
        page.locator("#cloze-setup").get_by_text("Set-up").first.click()   # the fold with the seed
        assert page.locator("#cloze-seed input").first.input_value() == "7"
        assert _message(page) == ""
        assert _run_this_question(page).startswith("bar_fill · dimension P · expected ")
        page.locator("#cloze-next").click()                         # the copy follows the question on screen
        page.wait_for_function("(n) => document.querySelector('#cloze-progress')?.innerText.includes("
                               "'Question ' + n + ' of')", arg=n + 1)
        page.locator("#cloze-copy-link").click()
        link = _link_value(page)
        summary = _run_this_question(page)
        stem, dim = summary.split(" · ")[:2]
        shown_q = dim.removeprefix("dimension ")   # the paper's letter (folder C is P)
        assert link == f"{base}/?mode=model&q={shown_q}&seed=7&stem={stem}&tab=cloze", link
        again = _new_page(browser, 1920, 1080)
        try:
            _goto(again, link)
            assert f"Question {n + 1} of " in _question_shown(again)
            assert _run_this_question(again).startswith(f"{stem} · {dim} · ")
        finally:
            again.close()

        _goto(page, base + "/?tab=cloze&stem=ball_roll&q=A")        # the human study's order
        n = _expected_index(example_data_dir, True, "ball_roll", "A") + 1
        assert f"Question {n} of " in _question_shown(page)
        assert page.locator("#cloze-mode input[value='practice']").is_checked()
        assert page.locator("#cloze-navigator input").first.input_value().split()[0] == str(n)
        assert "press Start / resume" in page.locator("#cloze-feedback").inner_text()
        # a number typed into the navigator opens that question (a large set lists only the
        # questions near the one shown)
        box = page.locator("#cloze-navigator input").first
        box.fill("2")
        box.press("Enter")
        page.wait_for_function("() => /Question 2 of/.test(document.querySelector('#cloze-progress')?.innerText || '')",
                               timeout=30_000)
        box.fill("nine hundred")
        box.press("Enter")
        assert "Type a question number from 1 to" in _wait_message(page, "Type a question number")

        _goto(page, base + "/?tab=cloze&stem=no_such_stem&q=S")
        assert "Question 1 of " in _question_shown(page)
        assert _wait_message(page, "no_such_stem") == \
            "⚠ The link's stem no_such_stem is not in this set; showing question 1."
        _no_badge_or_toast(page)
    finally:
        page.close()


def test_errors_are_one_message_line_that_clears_on_the_next_good_action(page):
    page.set_viewport_size({"width": 1440, "height": 900})
    open_tab(page, "Cloze")
    page.locator("#cloze-setup").get_by_text("Set-up").first.click()     # the fold with the folder box
    root = page.locator("#cloze-root textarea, #cloze-root input").first
    fill_steady(page, root, "/etc")
    root.press("Enter")
    msg = _wait_message(page, "inside the app's data folder")
    assert msg == ("⚠ The data folder must be inside the app's data folder; give a path relative to it, "
                   "e.g. cloze (got /etc).")
    _no_badge_or_toast(page)
    assert root.is_visible() and root.input_value() == "/etc"       # the box is still there, as typed
    box = root.bounding_box()
    line = page.locator("#cloze-message").bounding_box()
    assert line["y"] >= box["y"] + box["height"] or line["y"] + line["height"] <= box["y"]  # not over it

    fill_steady(page, root, "cloze")
    root.press("Enter")
    page.wait_for_function("() => /stems/.test(document.querySelector('#cloze-status')?.innerText || '')")
    page.wait_for_function("() => !(document.querySelector('#cloze-message')?.innerText || '').trim()")

    page.locator("#cloze-annotator textarea, #cloze-annotator input").first.fill("browser-err")
    seed = page.locator("#cloze-seed input").first   # in the set-up fold, open since the folder box
    for typed, text in (("-1", "⚠ Seed must be at least 0 (got -1)."),
                        ("2.5", "⚠ Seed must be a whole number (got 2.5).")):
        fill_steady(page, seed, typed)
        page.locator("#cloze-start").click()
        assert _wait_message(page, text.split("(")[0][2:]) == text
        _no_badge_or_toast(page)
        assert seed.is_visible() and seed.input_value() == typed
    fill_steady(page, seed, "42")
    page.locator("#cloze-start").click()
    _question_shown(page)
    page.wait_for_function("() => !(document.querySelector('#cloze-message')?.innerText || '').trim()")
    _no_badge_or_toast(page)


def _covered_by(page, selector: str) -> str | None:
    """What the page draws at the centre of `selector` when it is not `selector` itself (None)."""
    return page.evaluate("""(sel) => { const b = document.querySelector(sel); const r = b.getBoundingClientRect();
        const e = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
        return b.contains(e) ? null : (e ? e.outerHTML.slice(0, 160) : 'nothing (outside the viewport)'); }""",
                         selector)


def _letters_usable(page, width: int, height: int) -> None:
    for selector in LETTERS:
        box = page.locator(selector).bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= width + 1, (selector, box)
        assert box["y"] >= 0 and box["y"] + box["height"] <= height + 1, (selector, box)
        assert box["height"] >= 44, (selector, box)                 # a thumb's target
        assert _covered_by(page, selector) is None, (selector, _covered_by(page, selector))


def test_on_a_phone_the_letters_stay_tappable_and_nothing_runs_off_the_edge(browser, app_url):
    page = _new_page(browser, 390, 844)
    page.set_default_timeout(60_000)
    try:
        _goto(page, app_url)
        open_tab(page, "Cloze")
        page.locator("#cloze-annotator textarea, #cloze-annotator input").first.fill("browser-phone")
        page.locator("#cloze-start").click()
        _question_shown(page)
        widths = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
        assert widths[0] <= widths[1], f"horizontal overflow: {widths}"
        assert page.locator("#cloze-question .icon-button-wrapper button").count() == 0  # no media toolbars
        # the letters follow the last clip in the page (issue 27: a bar held over the screen's
        # bottom covered C and D); scrolled to, they are whole and nothing covers them
        scroll_settled(page, "#cloze-answer")
        _letters_usable(page, 390, 844)

        page.locator("#cloze-display").get_by_text("Video").click()
        page.wait_for_function("() => !!document.querySelector('#cloze-cand-D-video video')")
        video = page.locator("#cloze-cand-D-video video").first
        video.scroll_into_view_if_needed()
        scroll_settled(page, "#cloze-answer")                                # the letters, after the last clip
        clip, bar = page.locator("#cloze-cand-D-video").bounding_box(), page.locator("#cloze-answer").bounding_box()
        assert clip["y"] + clip["height"] <= bar["y"] + 1, (clip, bar)       # the bar covers no clip
        page.mouse.move(clip["x"] + clip["width"] / 2, clip["y"] + clip["height"] / 2)   # controls show on hover
        settle(page, "#cloze-question .controls")
        _letters_usable(page, 390, 844)
        letters = [page.locator(s).bounding_box() for s in LETTERS]
        for control in page.locator("#cloze-question .controls").all():
            c = control.bounding_box()
            if c is None:
                continue
            for b in letters:
                apart = c["x"] + c["width"] <= b["x"] or b["x"] + b["width"] <= c["x"] or \
                    c["y"] + c["height"] <= b["y"] or b["y"] + b["height"] <= c["y"]
                assert apart, ("a media toolbar covers a letter", c, b)
        assert page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")[0] <= 390
        page.locator("#cloze-choice-B").click()
        page.wait_for_function("() => (document.querySelector('#cloze-feedback')?.innerText || '').includes('Question')")
        assert _message(page) == ""
    finally:
        page.close()


@pytest.mark.parametrize("width,height", [(1440, 900), (1920, 1080), (390, 844)])
def test_screenshots_of_a_question(browser, app_url, width, height):
    """test-artifacts/cloze-<w>x<h>.png; with UPDATE_DOCS_SCREENSHOTS=1 also docs/ (never by default)."""
    page = _new_page(browser, width, height)
    page.set_default_timeout(60_000)
    try:
        _goto(page, app_url.rstrip("/") + "/?tab=cloze&stem=bar_fill&q=P")
        _question_shown(page)
        page.wait_for_function("() => [...document.querySelectorAll('#cloze-question img')]"
                               ".filter(i => i.complete && i.naturalWidth > 0).length >= 6")
        page.evaluate("() => window.scrollTo(0, document.querySelector('#cloze-progress')"
                      ".getBoundingClientRect().top + window.scrollY - 8)")   # the question at the top
        settle(page, "#cloze-progress")
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / f"cloze-{width}x{height}.png"
        page.screenshot(path=str(path))
        assert path.stat().st_size > 10_000
        if os.environ.get("UPDATE_DOCS_SCREENSHOTS") == "1":
            shutil.copyfile(path, DOCS / path.name)
    finally:
        page.close()
