"""Run this question's answer on the first screen (headless Chromium, 1440x900, Model mode): the
letter the model picked, its ✓ / ✗ and the start of its reason are within the first 900 px, where
the question's buttons are, without scrolling (they were at y≈1461-1700, below the runs panel)."""
from __future__ import annotations

from tests.browser.conftest import snap

HEADLINE = "#cloze-model-headline .cloze-model-answer"


def test_run_this_question_answers_within_the_first_screen(browser, app_url):
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.set_default_timeout(90_000)
    try:
        page.goto(app_url.rstrip("/") + "/?tab=cloze&stem=bar_fill&q=P&mode=model", wait_until="load",
                  timeout=120_000)
        page.wait_for_function("() => !!document.querySelector('#cloze-beginning-img img')", timeout=120_000)
        page.wait_for_function("() => (document.querySelector('#cloze-progress')?.innerText || '').includes('Question')")
        run = page.locator("#cloze-run-one")
        run_box = run.bounding_box()
        assert run_box and run_box["y"] + run_box["height"] <= 900, run_box   # the button is on the first screen
        run.click()
        page.wait_for_selector(HEADLINE, timeout=120_000)
        assert page.evaluate("() => window.scrollY") == 0
        head = page.locator(HEADLINE)
        box = head.bounding_box()
        assert box and box["y"] >= 0 and box["y"] + box["height"] <= 900, box
        assert box["width"] > 200
        letter = page.locator(f"{HEADLINE} .cloze-model-letter").inner_text().strip()
        assert letter in ("A", "B", "C", "D")
        assert letter == page.locator("#cloze-parsed textarea, #cloze-parsed input").first.input_value()
        assert page.locator(f"{HEADLINE} .cloze-model-mark").inner_text().strip() in ("✓", "✗")
        reason = page.locator(f"{HEADLINE} .cloze-model-reason")
        assert reason.inner_text().strip()
        for part in (f"{HEADLINE} .cloze-model-letter", f"{HEADLINE} .cloze-model-mark", f"{HEADLINE} .cloze-model-reason"):
            part_box = page.locator(part).bounding_box()
            assert part_box and part_box["y"] + part_box["height"] <= 900, (part, part_box)
        summary = page.locator("#cloze-model-summary").inner_text()
        assert f"picked {letter}" in summary and "dimension P" in summary
        snap(page, "cloze-model-answer-1440x900")
    finally:
        context.close()
