"""A deep link is where the play starts (headless Chromium, 1440x900, the example data): Start on
`?tab=cloze&stem=bar_fill&q=P` plays that question (its header, its clips, the answer recorded),
Run this question in Model mode answers it, a plain page shows a question's clips at once, the
verdict and the Model buttons are on the first screen, and no verdict outlives a mode switch."""
from __future__ import annotations

import io
import json
import os
import uuid
from pathlib import Path

import pytest

from tests.browser.conftest import open_tab

LINK = "/?tab=cloze&stem=bar_fill&q=P"
SLOTS = ("beginning", "end", "cand-A", "cand-B", "cand-C", "cand-D")
W, H = 1440, 900
IMAGES_SHOWN = ("() => [...document.querySelectorAll('#cloze-question .cloze-clip img')]"
                ".filter(i => i.complete && i.naturalWidth > 0 && i.offsetParent !== null).length >= 6")


@pytest.fixture
def visit(browser, app_url):
    context = browser.new_context(viewport={"width": W, "height": H})
    page = context.new_page()
    page.set_default_timeout(90_000)

    def go(path: str):
        page.goto(app_url.rstrip("/") + path, wait_until="load", timeout=120_000)
        page.wait_for_selector("#app-tabs", timeout=120_000)
        return page

    yield go
    context.close()


def _questions(example_data_dir, human: bool):
    from components.cloze.ui.handlers import questions_for
    from components.cloze.ui.session import HUMAN, MODEL, ClozeSession

    session = ClozeSession(data_dir=str(example_data_dir), root=str(example_data_dir / "cloze"),
                           mode=HUMAN if human else MODEL)
    return questions_for(session)


def _number(example_data_dir, human: bool, stem: str, dim: str) -> int:
    _, qs = _questions(example_data_dir, human)
    return [(q.stem, q.dim) for q in qs.questions].index((stem, dim)) + 1


def _expected_grids(example_data_dir, human: bool, number: int) -> list:
    """The six frame grids question `number` shows (BEGINNING, END, A-D), as the server makes them."""
    from components.cloze.ui.handlers import clip_views

    ds, qs = _questions(example_data_dir, human)
    return clip_views(ds, qs.questions[number - 1], "frames")


def _shown_grids(page) -> list:
    from PIL import Image

    page.wait_for_function(IMAGES_SHOWN, timeout=120_000)
    grids = []
    for slot in SLOTS:
        src = page.locator(f"#cloze-{slot}-img img").first.get_attribute("src")
        grids.append(Image.open(io.BytesIO(page.request.get(src).body())).convert("RGB"))
    return grids


def _difference(a, b) -> float:
    """Mean absolute difference of two images, both made 96x72 grey (JPEG noise is a few levels)."""
    from PIL import ImageChops, ImageStat

    small = [im.convert("L").resize((96, 72)) for im in (a, b)]
    return ImageStat.Stat(ImageChops.difference(*small)).mean[0]


def _assert_media_of(page, example_data_dir, number: int, other: int) -> None:
    """Each of the six boxes shows question `number`'s clip: nearer it than question `other`'s."""
    shown = _shown_grids(page)
    want, not_want = (_expected_grids(example_data_dir, True, n) for n in (number, other))
    for slot, img, good, bad in zip(SLOTS, shown, want, not_want):
        near, far = _difference(img, good), _difference(img, bad)
        assert near < 8 and near < far, (slot, near, far)


def _progress(page, number: int) -> None:
    page.wait_for_function("(n) => (document.querySelector('#cloze-progress')?.innerText || '')"
                           ".includes('Question ' + n + ' of')", arg=number, timeout=120_000)


def _on_first_screen(page, selector: str) -> dict:
    box = page.locator(selector).first.bounding_box()
    assert box is not None, f"{selector} is not shown"
    assert 0 <= box["y"] and box["y"] + box["height"] <= H, (selector, box)
    assert 0 <= box["x"] and box["x"] + box["width"] <= W, (selector, box)
    return box


def _feedback(page) -> str:
    return page.evaluate("() => (document.querySelector('#cloze-feedback')?.innerText || '').trim()")


def _pick_mode(page, label: str, value: str) -> None:
    page.locator("#cloze-mode").get_by_text(label, exact=True).click()
    page.wait_for_function("(v) => document.querySelector(`#cloze-mode input[value='${v}']`)?.checked", arg=value)


def test_start_on_a_linked_question_plays_it_records_it_and_the_verdict_is_on_screen(visit, example_data_dir):
    page = visit(LINK)
    n = _number(example_data_dir, True, "bar_fill", "C")
    assert n != 1                                     # else Start's old "first question" would pass too
    _progress(page, n)
    _assert_media_of(page, example_data_dir, n, 1)
    annotator = f"deep-link-{uuid.uuid4().hex[:6]}"
    page.locator("#cloze-annotator input, #cloze-annotator textarea").first.fill(annotator)
    page.locator("#cloze-start").click()
    page.wait_for_function("() => (document.querySelector('#cloze-feedback')?.innerText || '')"
                           ".includes('Answer the question on screen')")
    _progress(page, n)
    _assert_media_of(page, example_data_dir, n, 1)
    page.locator("#cloze-choice-A").click()
    page.wait_for_function("(n) => (document.querySelector('#cloze-feedback')?.innerText || '')"
                           ".startsWith('Question ' + n + ':')", arg=n)
    records = [json.loads(line) for line in
               (Path(os.environ["APP_PRACTICE_DIR"]) / f"{annotator}.jsonl").read_text().splitlines() if line]
    assert [(r["stem"], r["dim"], r["answer"]) for r in records] == [("bar_fill", "C", "A")]
    _on_first_screen(page, "#cloze-feedback")         # the verdict, where the next question starts

    _pick_mode(page, "Model", "model")
    page.wait_for_function("() => !(document.querySelector('#cloze-feedback')?.innerText || '').trim()")
    for button in ("#cloze-run-one", "#cloze-run-set", "#cloze-stop"):
        _on_first_screen(page, button)
    _pick_mode(page, "Practice playthrough", "practice")
    page.wait_for_selector("#cloze-choice-A", state="visible")
    assert _feedback(page) == ""                      # nothing stale on the way back


def test_run_this_question_in_model_mode_answers_the_linked_question(visit, example_data_dir):
    page = visit(LINK)
    _progress(page, _number(example_data_dir, True, "bar_fill", "C"))
    _pick_mode(page, "Model", "model")
    m = _number(example_data_dir, False, "bar_fill", "C")
    _progress(page, m)                                # numbered in the evaluation order, the same question
    page.locator("#cloze-run-one").click()
    page.wait_for_function("() => /^[\\w-]+ · dimension (S|A|P|Mixed) · expected [ABCD] · picked /"
                           ".test((document.querySelector('#cloze-model-summary')?.innerText || '').trim())")
    summary = page.locator("#cloze-model-summary").inner_text().strip()
    assert summary.startswith("bar_fill · dimension P · expected "), summary
    _progress(page, m)


@pytest.mark.parametrize("path", ["/?tab=cloze", "/"])
def test_the_tab_opens_on_a_questions_clips_without_a_press(visit, example_data_dir, path):
    page = visit(path)
    if path == "/":
        open_tab(page, "Cloze")
    _progress(page, 1)
    _assert_media_of(page, example_data_dir, 1, _number(example_data_dir, True, "bar_fill", "C"))
    assert page.locator("#cloze-start").is_enabled()
    # the id box's placeholder is whole: its text is no wider than the box's content
    cut = page.evaluate("""() => { const el = document.querySelector('#cloze-annotator input, #cloze-annotator textarea');
        const s = getComputedStyle(el); const ctx = document.createElement('canvas').getContext('2d');
        ctx.font = `${s.fontWeight} ${s.fontSize} ${s.fontFamily}`;
        const room = el.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
        return [ctx.measureText(el.placeholder).width, room, el.placeholder]; }""")
    assert cut[0] <= cut[1], cut
