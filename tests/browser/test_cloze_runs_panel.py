"""The Cloze tab's "What the runs answered" panel in the browser (1440x900, the example data's
run files in cloze/results/): a deep-linked question in Model mode shows every run's letter, the
counts per letter and "k of N" as the files say; a practice playthrough keeps the panel shut until
the player has answered the question; a `sort=` link opens the question list hardest first and makes it
the navigator's order (Model mode)."""
from __future__ import annotations

import json

from components.cloze.ui.handlers import questions_for
from components.cloze.ui.session import HUMAN, MODEL, ClozeSession
from tests.browser.conftest import snap

PANEL = "#cloze-runs-panel"


def _question(example_data_dir, human: bool, stem: str, dim: str):
    session = ClozeSession(data_dir=str(example_data_dir), root=str(example_data_dir / "cloze"),
                           mode=HUMAN if human else MODEL)
    _, qs = questions_for(session)
    return next(q for q in qs.questions if (q.stem, q.dim) == (stem, dim))


def _expected(example_data_dir, stem: str, dim: str, option_map: dict) -> dict[str, tuple[str | None, str]]:
    """run name -> (letter on the shown question or None, reason), read from the run files."""
    on_screen = {clip: letter for letter, clip in option_map.items()}
    out = {}
    for path in sorted((example_data_dir / "cloze" / "results").glob("*.json")):
        rec = json.loads(path.read_text()).get(stem, {}).get(dim)
        if rec is None:
            continue
        answer = (rec.get("answer") or "").strip(" <>").upper()
        letter = on_screen[rec["option_map"][answer]] if answer in option_map else None
        out[path.stem] = (letter, rec.get("reason") or "")
    return out


def _panel_ready(page) -> None:
    page.wait_for_function(f"() => document.querySelector('{PANEL} .runs-panel')?.dataset.state === 'ready'",
                           timeout=120_000)


def _new_page(browser, url: str):
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    page.set_default_timeout(60_000)
    page.goto(url, wait_until="load", timeout=120_000)
    page.wait_for_selector("#app-tabs", timeout=120_000)
    return page


def test_a_linked_question_shows_every_runs_answer_as_the_files_say(browser, app_url, example_data_dir):
    page = _new_page(browser, app_url.rstrip("/") + "/?tab=cloze&stem=bar_fill&q=P&mode=model")
    try:
        _panel_ready(page)
        q = _question(example_data_dir, False, "bar_fill", "C")
        expected = _expected(example_data_dir, "bar_fill", "C", q.option_map)
        assert len(expected) >= 5
        counts = {x: 0 for x in "ABCD"}
        for letter, _ in expected.values():
            if letter:
                counts[letter] += 1
        for letter, n in counts.items():
            bar = page.locator(f"{PANEL} .runs-bar-row[data-letter='{letter}']")
            assert bar.locator(".runs-bar-count").inner_text().strip() == str(n)
        right = sum(1 for letter, _ in expected.values() if letter == q.expected)
        answered = sum(1 for letter, _ in expected.values() if letter)
        assert f"{right} of {answered} runs chose the true middle" in page.locator(f"{PANEL} .runs-summary").inner_text()
        for name, (letter, _reason) in expected.items():
            row = page.locator(f"{PANEL} tr.runs-row[data-run='{name}']")
            if letter:
                assert row.locator(".runs-letter").inner_text().split()[0] == letter
                assert row.locator(".runs-mark").inner_text().strip() == ("✓" if letter == q.expected else "✗")
        # a reason sits in a fold: shut, then read once opened
        name, (_, reason) = next((n, v) for n, v in expected.items() if v[0] and v[1])
        fold = page.locator(f"{PANEL} tr.runs-row[data-run='{name}'] details")
        assert not fold.locator(".runs-reason").is_visible()
        fold.locator("summary").click()
        assert fold.locator(".runs-reason").inner_text().strip() == reason
        box = page.locator(f"{PANEL} .runs-bars").bounding_box()
        assert box and box["width"] > 200 and box["x"] + box["width"] <= 1440
        snap(page, "cloze-runs-panel-1440x900")
    finally:
        page.close()


def test_practice_keeps_the_panel_shut_until_the_answer(browser, app_url):
    page = _new_page(browser, app_url)
    try:
        page.get_by_role("tab", name="Cloze").click()
        page.locator("#cloze-annotator textarea, #cloze-annotator input").first.fill("runs-panel-anon")
        page.locator("#cloze-start").click()
        page.wait_for_function("() => (document.querySelector('#cloze-progress')?.innerText || '').includes('Question 1 of')",
                               timeout=120_000)
        page.wait_for_function(f"() => document.querySelector('{PANEL} .runs-panel')?.dataset.state === 'shut'")
        assert "runs chose" not in page.locator("#cloze-runs").inner_text()
        page.locator("#cloze-choice-A").click()
        page.wait_for_function("() => (document.querySelector('#cloze-feedback')?.innerText || '').includes('Question 1')",
                               timeout=60_000)
        # the next question is not answered yet: still shut; back to the answered one: open
        page.wait_for_function(f"() => document.querySelector('{PANEL} .runs-panel')?.dataset.state === 'shut'")
        page.locator("#cloze-prev").click()
        page.wait_for_function("() => (document.querySelector('#cloze-progress')?.innerText || '').includes('Question 1 of')")
        _panel_ready(page)
        assert "runs chose the true middle" in page.locator(f"{PANEL} .runs-summary").inner_text()
    finally:
        page.close()


def test_a_sort_link_lists_the_hardest_questions_first(browser, app_url):
    page = _new_page(browser, app_url.rstrip("/") + "/?tab=cloze&sort=hardest&overview=1")
    try:
        page.wait_for_selector("#cloze-runs-list tr[data-stem]", timeout=120_000)
        shares = [int(a) / int(b) for a, b in
                  (t.split("/") for t in page.locator("#cloze-runs-list tr[data-stem] td:nth-child(2)").all_inner_texts()
                   if "/" in t)]
        assert shares and shares == sorted(shares)
        cells = page.locator("#cloze-runs-grid a.runs-cell")
        assert cells.count() > 0
        href = cells.first.get_attribute("href") or ""
        assert "stem=" in href and "tab=cloze" in href
        # a click on the hardest question opens it, with its runs panel
        first = page.locator("#cloze-runs-list tr[data-stem]").first
        stem, dim = first.get_attribute("data-stem"), first.get_attribute("data-dim")
        first.locator("a").click()
        page.wait_for_selector(f"#cloze-runs-panel .runs-panel[data-state='ready'][data-stem='{stem}'][data-dim='{dim}']",
                               timeout=120_000)
    finally:
        page.close()


def test_a_sort_link_makes_the_runs_order_the_navigators_own(browser, app_url):
    """`?tab=cloze&sort=hardest` opens Model mode stepping through the set hardest first: the
    question on screen is the list's first, ▶ goes to its second, the address keeps the sort;
    Compare mode shows no "Question i of n" line."""
    page = _new_page(browser, app_url.rstrip("/") + "/?tab=cloze&sort=hardest")
    try:
        page.wait_for_function("() => /Question 1 of \\d+.*hardest first/.test("
                               "document.querySelector('#cloze-progress')?.innerText || '')", timeout=120_000)
        page.wait_for_selector("#cloze-runs-list tr[data-stem]", timeout=120_000)
        rows = page.locator("#cloze-runs-list tr[data-stem]")
        listed = [(rows.nth(i).get_attribute("data-stem"), rows.nth(i).get_attribute("data-dim")) for i in range(2)]
        for number, (stem, dim) in enumerate(listed, start=1):
            if number > 1:
                page.locator("#cloze-next").click()
                page.wait_for_function(f"() => (document.querySelector('#cloze-progress')?.innerText || '')"
                                       f".includes('Question {number} of')")
            page.wait_for_selector(f"{PANEL} .runs-panel[data-state='ready'][data-stem='{stem}'][data-dim='{dim}']",
                                   timeout=120_000)
        page.wait_for_function("() => location.search.includes('sort=hardest')")
        assert "hardest first" in page.locator("#cloze-question-order").inner_text().lower() or \
            "hardest first" in (page.locator("#cloze-question-order input").first.input_value() or "").lower()
        assert page.locator("#cloze-progress").is_visible()
        page.locator("#cloze-mode").get_by_text("Compare", exact=True).click()
        page.wait_for_selector("#cloze-leaderboard", state="visible")
        page.wait_for_function("() => !document.querySelector('#cloze-progress')?.offsetParent")
        assert not page.locator("#cloze-progress").is_visible()
    finally:
        page.close()
