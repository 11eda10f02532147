"""A person plays three cloze questions in the practice playthrough, reloads the page, resumes
(the page keeps the id and Blind) and exports the session; with Blind on nothing names an answer."""
from __future__ import annotations

import json
import os
from pathlib import Path

from tests.browser.conftest import open_tab, snap


def _start(page, annotator: str) -> None:
    box = page.locator("#cloze-annotator textarea, #cloze-annotator input").first
    box.fill(annotator)
    page.locator("#cloze-start").click()
    # Start's own answer: the tab shows a question before it (the page opens on the first one)
    page.wait_for_function(
        "() => /practice (playthrough )?as /i.test(document.querySelector('#cloze-feedback')?.innerText || '')",
        timeout=60_000)


def _question_number(page) -> int:
    text = page.locator("#cloze-progress").inner_text()
    return int(text.split("Question", 1)[1].split("of")[0].strip())


def test_three_answers_are_saved_survive_a_reload_and_export(page):
    annotator = "browser-anon-1"
    open_tab(page, "Cloze")
    _start(page, annotator)
    first = _question_number(page)
    for n in range(3):
        page.locator("#cloze-choice-A").click()
        page.wait_for_function(
            f"() => document.querySelector('#cloze-feedback')?.innerText.includes('Question {first + n}')",
            timeout=60_000)
    snap(page, "cloze-after-three-answers")
    study = Path(os.environ["APP_PRACTICE_DIR"])
    files = list(study.glob(f"*{annotator}*.jsonl"))
    assert len(files) == 1, sorted(p.name for p in study.iterdir())
    records = [json.loads(line) for line in files[0].read_text().splitlines() if line.strip()]
    assert len(records) == 3
    for rec in records:
        assert rec["answer"] == "A" and rec["annotator"] == annotator
        assert {"stem", "dim", "expected", "correct", "option_map", "elapsed_sec",
                "answered_at_utc"} <= set(rec)
    # Reload: the page keeps the id; Start resumes at the next unanswered question.
    page.reload(wait_until="load")
    page.wait_for_selector("#app-tabs", timeout=60_000)
    open_tab(page, "Cloze")
    box = page.locator("#cloze-annotator textarea, #cloze-annotator input").first
    page.wait_for_function("(a) => [...document.querySelectorAll('#cloze-annotator input, #cloze-annotator "
                           "textarea')].some(e => e.value === a)", arg=annotator, timeout=30_000)
    page.locator("#cloze-start").click()
    page.wait_for_function("() => document.querySelector('#cloze-feedback')?.innerText.includes('Resumed')",
                           timeout=60_000)
    assert box.input_value() == annotator
    assert _question_number(page) == first + 3
    assert "Resumed" in page.locator("#cloze-feedback").inner_text()
    page.locator("#cloze-export-json").click()
    link = page.locator("#cloze-export-file a").first
    link.wait_for(timeout=60_000)
    snap(page, "cloze-resumed-and-exported")
    assert ".json" in (link.get_attribute("href") or "") + link.inner_text()


def test_blind_survives_a_reload_and_no_answer_is_ever_named(page):
    open_tab(page, "Cloze")
    page.locator("#cloze-blind input[type=checkbox]").check()
    _start(page, "")                                       # an empty id: one is made for the player
    made = page.locator("#cloze-annotator textarea, #cloze-annotator input").first.input_value()
    assert made.startswith("anon-")
    page.locator("#cloze-choice-D").click()
    page.wait_for_function("() => document.querySelector('#cloze-feedback')?.innerText.includes('answer saved')",
                           timeout=60_000)
    page.reload(wait_until="load")
    page.wait_for_selector("#app-tabs", timeout=60_000)
    open_tab(page, "Cloze")
    page.wait_for_function("() => document.querySelector('#cloze-blind input[type=checkbox]')?.checked",
                           timeout=30_000)
    _start(page, made)
    page.locator("#cloze-choice-B").click()
    page.wait_for_function("() => /Question \\d+: answer saved/.test(document.querySelector('#cloze-feedback')"
                           "?.innerText || '')", timeout=60_000)
    text = page.locator("#tab-cloze").inner_text()
    assert "true middle" not in text and "Correct" not in text and "Not quite" not in text
