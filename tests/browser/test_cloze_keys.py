"""Cloze in presentation mode is played with the keys alone (headless Chromium, the README's link
with `&present=1`, 1440x900 and 1920x1080): a letter key (a-d, 1-4) answers the question on
screen and the line under the letters says which key did what; no visible text names a control
the mode hides (Start / resume)."""
from __future__ import annotations

import pytest

from tests.browser.conftest import TAB_READY

LINK = "?tab=cloze&stem=bar_fill&q=P&present=1"
PROGRESS = "(document.querySelector('#cloze-progress')?.innerText || '')"
# the visible text of the page (innerText leaves out what is not drawn)
VISIBLE = "() => document.querySelector('.gradio-container').innerText"


def _answered(page) -> int:
    text = page.evaluate(f"() => {PROGRESS}")
    return int(text.split("answered ")[1].split("/")[0]) if "answered " in text else 0


@pytest.mark.parametrize("size", [(1440, 900), (1920, 1080)])
def test_letter_keys_answer_the_question_on_screen_and_the_page_says_so(sized_page, app_url, size):
    page = sized_page(f"{app_url}{LINK}", size, TAB_READY["cloze"], 60_000)
    page.wait_for_function(f"() => /Question \\d+ of/.test({PROGRESS})")
    assert page.evaluate("() => document.body.classList.contains('present')")
    page.locator("body").click(position={"x": size[0] // 2, "y": size[1] - 4})   # no box has the focus
    for key, letter in (("b", "B"), ("3", "C")):
        before = _answered(page)
        shown = page.evaluate(f"() => {PROGRESS}").split(" ·")[0]
        page.keyboard.press(key)
        page.wait_for_function(f"(n) => {PROGRESS}.includes('answered ' + (n + 1) + '/')", arg=before)
        note = page.locator("#cloze-key-note")
        assert note.inner_text() == f"Key {key.upper()}: answered {letter}.", note.inner_text()
        box = note.bounding_box()
        letters = page.locator("#cloze-answer").bounding_box()
        assert box and box["y"] >= letters["y"] + letters["height"] - 1 and box["y"] < size[1], (box, letters)
        assert float(note.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")) >= 20
        # the verdict names the letter the key gave, for the question that was on screen
        verdict = page.locator("#cloze-feedback").inner_text()
        assert f"you chose {letter}" in verdict or f"{letter} was the true middle" in verdict, verdict
        assert shown.replace("**", "").split(" of")[0].split()[-1] in verdict, (shown, verdict)
    page.locator("#cloze-next").click()                # a click of the visitor's own: the key's line goes
    page.wait_for_function("() => !(document.querySelector('#cloze-key-note')?.innerText || '').trim()")


def test_presentation_text_names_no_hidden_control(sized_page, app_url):
    page = sized_page(f"{app_url}{LINK}", (1920, 1080), TAB_READY["cloze"], 60_000)
    page.wait_for_function("() => (document.querySelector('#cloze-feedback')?.innerText || '').includes('link')")
    assert not page.evaluate("() => !!document.querySelector('#cloze-start')?.offsetParent")   # Start hidden
    text = page.evaluate(VISIBLE)
    assert "Start" not in text, [line for line in text.splitlines() if "Start" in line]
    assert "key" in page.locator("#cloze-feedback").inner_text()       # the keys are named instead
    # out of presentation the same line names Start, which shows there
    page.locator("#app-present input").evaluate("e => e.click()")
    page.wait_for_function("() => !document.body.classList.contains('present')")
    assert "Start / resume" in page.locator("#cloze-feedback").inner_text()
    assert "key" not in page.locator("#cloze-feedback").inner_text()
