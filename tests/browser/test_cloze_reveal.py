"""The Cloze tab's practice reveal and blind playthrough in the browser (1440x900, the example
data's run files in cloze/results/): an answer shows, on the first screen and without stepping
back, the verdict and what every run chose on that question, on the player's letters, and the
running score placed among the runs on the same questions; a blind playthrough keeps "Runs
across questions" shut (its counts and its links into Model mode would name the true middle).
The expected figures are read from the run files here, independently of the app's runs table."""
from __future__ import annotations

import json
import uuid
from collections import Counter

from components.cloze.data import clip_dim
from components.cloze.ui.handlers import questions_for
from components.cloze.ui.session import HUMAN, ClozeSession
from tests.browser.conftest import TAB_READY, idle, snap

WORDS = {"S": "Semantic", "A": "Alignment", "C": "Progression"}
FEEDBACK = "#cloze-feedback"


def _page(browser, app_url):
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.goto(app_url, wait_until="load", timeout=120_000)
    page.wait_for_selector("#app-tabs", timeout=120_000)
    page.get_by_role("tab", name="Cloze").click()
    page.wait_for_function(TAB_READY["cloze"], timeout=120_000)
    idle(page)   # the tab's first view has answered: nothing late resets the boxes filled next
    return context, page


def _start(page, player: str, *, blind: bool) -> None:
    page.locator("#cloze-annotator textarea, #cloze-annotator input").first.fill(player)
    if blind:
        page.locator("#cloze-blind input").check()
    page.locator("#cloze-start").click()
    page.wait_for_function("(p) => (document.querySelector('#cloze-feedback')?.innerText || '').includes(p)",
                           arg=player, timeout=120_000)


def _runs_on(example_data_dir, stem: str, dim: str) -> dict[str, str | None]:
    """run name -> the clip it picked on (stem, dim) (None: no valid answer), from the files."""
    out = {}
    for path in sorted((example_data_dir / "cloze" / "results").glob("*.json")):
        rec = json.loads(path.read_text()).get(stem, {}).get(dim)
        if rec is None:
            continue
        answer = (rec.get("answer") or "").strip(" <>").upper()
        out[path.stem] = rec["option_map"].get(answer) if answer in "ABCD" and answer else None
    return out


def test_a_practice_answer_shows_what_the_runs_chose_and_where_the_score_stands(browser, app_url, example_data_dir):
    first = questions_for(ClozeSession(data_dir=str(example_data_dir), root=str(example_data_dir / "cloze"),
                                       mode=HUMAN))[1].questions[0]
    picks = _runs_on(example_data_dir, first.stem, first.dim)
    assert len(picks) >= 5
    on_screen = {clip: letter for letter, clip in first.option_map.items()}
    chosen = Counter(on_screen[clip] for clip in picks.values() if clip)
    expected = first.expected
    context, page = _page(browser, app_url)
    try:
        _start(page, f"reveal-{uuid.uuid4().hex[:6]}", blind=False)
        page.locator("#cloze-choice-A").click()
        page.wait_for_function("() => /Question 1:[\\s\\S]*runs chose/.test("
                               "document.querySelector('#cloze-feedback')?.innerText || '')", timeout=60_000)
        text = " ".join(page.locator(FEEDBACK).inner_text().split())
        # the verdict and the runs' letters on the answered question (not the next one on screen)
        assert f"{expected} was the true middle" in text, text
        assert f"{chosen.get(expected, 0)} of {sum(chosen.values())} runs chose {expected}" in text, text
        for letter, n in chosen.items():
            if letter != expected:
                clip = first.option_map[letter]
                assert f"{n} chose {letter} ({WORDS[clip_dim(clip)]} · {clip})" in text, text
        # the running score among the runs on the same (one) question
        right = 1 if expected == "A" else 0
        runs_right = [1 if clip == "GT" else 0 for clip in picks.values()]
        above = sum(1 for n in runs_right if n < right)
        assert f"{right} of 1: above {above} of {len(picks)} runs on these questions" in text, text
        # on the first screen, without scrolling or stepping back with ◀
        box = page.locator(FEEDBACK).bounding_box()
        assert box and box["y"] >= 0 and box["y"] + box["height"] <= 900, box
        assert "Question 2 of" in page.locator("#cloze-progress").inner_text()
        letters = page.locator("#cloze-letters").bounding_box()   # the next answer is still on screen
        assert letters and letters["y"] + letters["height"] <= 900, letters
        snap(page, "cloze-practice-reveal-1440x900")
    finally:
        context.close()


def test_a_blind_playthrough_keeps_runs_across_questions_shut(browser, app_url):
    context, page = _page(browser, app_url)
    try:
        _start(page, f"blind-{uuid.uuid4().hex[:6]}", blind=True)
        idle(page)   # Start's events have answered (blind shuts the fold: it is opened after that)
        across = page.locator("#cloze-runs-across")
        # the fold opened by a visitor shows no list, no grid and no link into Model mode
        across.locator("button, .label-wrap").first.click()
        page.locator("#cloze-runs-overview input").check()
        page.wait_for_function("() => document.querySelector('#cloze-runs-list .runs-panel')?.dataset.state === 'shut'",
                               timeout=60_000)
        idle(page)   # a late list (the runs read meanwhile) would replace the note: it must not
        assert page.locator("#cloze-runs-list tr[data-stem]").count() == 0
        assert page.locator("#cloze-runs-grid a.runs-cell").count() == 0
        assert page.locator("#cloze-runs-across a[href*='mode=model']").count() == 0
        assert "Blind playthrough" in page.locator("#cloze-runs-list").inner_text()
        page.locator("#cloze-choice-B").click()
        page.wait_for_function("() => (document.querySelector('#cloze-feedback')?.innerText || '').includes('answer saved')")
        assert "runs chose" not in page.locator(FEEDBACK).inner_text()
        assert "runs on these questions" not in page.locator(FEEDBACK).inner_text()
    finally:
        context.close()
