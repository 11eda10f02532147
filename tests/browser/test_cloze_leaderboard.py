"""The Cloze leaderboard is the benchmark's home (issue 34), in headless Chromium at 1440x900: the
example data's 6 result files (cloze/results: 5 in the released format and Edge-1's) are its first rows, each with the acc `eval cloze`
gives the file, on screen beside the paper's rows; a click on a run's row opens the run (all its
questions, then its wrong answers only)."""
from __future__ import annotations

import json

from components.cloze.metrics import as_released, score_results
from tests.browser.conftest import TAB_READY, idle, snap

ROWS_JS = """() => [...document.querySelectorAll('#cloze-leaderboard .virtual-row')].map(tr => {
  const cells = [...tr.querySelectorAll('.body-cell')];
  const r = tr.getBoundingClientRect();
  return {cells: cells.map(td => td.innerText.trim()), top: r.top, bottom: r.bottom, left: r.left, right: r.right,
          acc: cells[2] ? cells[2].getBoundingClientRect().toJSON() : null};
})"""


def _expected(example_data_dir) -> dict[str, tuple[float, int, int]]:
    """run name -> (acc as eval gives it, questions listed when opened, wrong answers)."""
    out = {}
    for path in sorted((example_data_dir / "cloze" / "results").glob("*.json")):
        results = json.loads(path.read_text())
        expected_dims = {d for dims in results.values() for d in dims}
        questions = sum(len(set(dims) | expected_dims) for dims in results.values() if dims)
        wrong = sum(1 for dims in results.values() for e in dims.values()
                    if e.get("correct") is False and (e.get("answer") or "").strip(" <>").upper() in "ABCD"
                    and (e.get("answer") or "").strip())
        out[path.stem] = (as_released(score_results(results))["acc"], questions, wrong)
    return out


def test_the_leaderboard_lists_the_result_files_and_a_row_opens_its_run(browser, app_url, example_data_dir):
    expected = _expected(example_data_dir)
    assert len(expected) == 6
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        page.goto(f"{app_url}?tab=cloze", wait_until="load", timeout=120_000)
        page.wait_for_selector("#app-tabs", timeout=120_000)
        # the tab's first view drawn: a late one would put the page back in its first mode
        page.wait_for_function(TAB_READY["cloze"], timeout=120_000)
        idle(page)
        page.locator("#cloze-mode").get_by_text("Compare", exact=True).click()
        names = json.dumps(sorted(expected))
        page.wait_for_function(f"() => {names}.every(n => (document.querySelector('#cloze-leaderboard')?.innerText "
                               "|| '').includes(n))", timeout=120_000)
        page.locator("#cloze-leaderboard").evaluate("el => el.scrollIntoView({block: 'start'})")
        page.wait_for_function("() => document.querySelectorAll('#cloze-leaderboard .virtual-row').length >= 8")
        rows = [r for r in page.evaluate(ROWS_JS) if r["cells"]]
        snap(page, "leaderboard-runs-1440x900")
        by_name = {r["cells"][0]: r for r in rows}
        headers = page.locator("#cloze-leaderboard thead th").all_inner_texts()
        acc_col = [h.strip() for h in headers].index("acc")
        # the runs first, each with eval's acc, its interval and its row on screen; the paper's after
        firsts = [r["cells"][0] for r in rows[:len(expected)]]
        assert set(firsts) == set(expected)
        assert [round(expected[n][0], 2) for n in firsts] == sorted((round(a, 2) for a, _, _ in expected.values()),
                                                                     reverse=True)
        for name, (acc, _, _) in expected.items():
            row = by_name[name]
            assert float(row["cells"][acc_col]) == round(acc, 2), (name, row["cells"])
            assert row["cells"][acc_col + 1].startswith("["), row["cells"]        # its 95 % interval
            assert row["cells"][-1] == "run file"
            assert 0 <= row["left"] and row["acc"]["right"] <= 1440 and row["bottom"] <= 900 + 600
        paper = [r for r in rows if r["cells"][-1] == "paper"]
        assert paper and all(r["cells"][acc_col + 1] for r in paper)              # never an empty interval

        # a click on a run's row opens it: every question, then the wrong ones alone
        name = sorted(n for n in expected if n.startswith("example-model"))[1]
        page.locator("#cloze-leaderboard .virtual-row").filter(has_text=name).first.locator(".body-cell").nth(2).click()
        page.wait_for_function(f"() => document.querySelector('#cloze-run-view .runs-run')?.dataset.run === '{name}'",
                               timeout=60_000)
        view = page.locator("#cloze-run-view .runs-run")
        _, questions, wrong = expected[name]
        assert int(view.get_attribute("data-total")) == questions
        assert view.locator("tr.runs-row").count() == questions
        box = view.bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= 1440
        assert name in page.locator("#cloze-run-name input, #cloze-run-name textarea").first.input_value()
        page.locator("#cloze-run-wrong input").check()
        page.wait_for_function(f"() => document.querySelector('#cloze-run-view .runs-run')?.dataset.total === '{wrong}'",
                               timeout=60_000)
        marks = view.locator("tr.runs-row .runs-mark").all_inner_texts()
        assert len(marks) == wrong and set(marks) <= {"✗"}
        snap(page, "leaderboard-run-opened-1440x900")
    finally:
        context.close()


LISTED_JS = """() => [...document.querySelectorAll('#cloze-runs-list tr[data-stem]')].map(tr => [tr.dataset.stem, tr.dataset.dim])"""


def test_the_question_list_finds_stems_and_keeps_one_dimension(browser, app_url, example_data_dir):
    """A link's `find=` (an overview column's) opens the list of those stems, in the paper's order
    S, A, P; the find box, the dimension and the runs-right filters narrow it in the page."""
    stems = sorted(p.name for p in (example_data_dir / "cloze" / "choices").iterdir() if p.is_dir())
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.set_default_timeout(60_000)
    try:
        page.goto(f"{app_url}?tab=cloze&sort=stem&find={stems[0]}+{stems[1]}", wait_until="load", timeout=120_000)
        page.wait_for_function("() => document.querySelectorAll('#cloze-runs-list tr[data-stem]').length === 6",
                               timeout=120_000)
        assert page.evaluate(LISTED_JS) == [[s, d] for s in stems[:2] for d in ("S", "A", "P")]
        box = page.locator("#cloze-runs-find input, #cloze-runs-find textarea").first
        box.fill(stems[2])
        box.press("Enter")
        page.wait_for_function("(s) => { const rows = [...document.querySelectorAll('#cloze-runs-list tr[data-stem]')];"
                               " return rows.length === 3 && rows.every(tr => tr.dataset.stem === s); }", arg=stems[2])
        page.locator("#cloze-runs-find input, #cloze-runs-find textarea").first.fill("")
        page.locator("#cloze-runs-find input, #cloze-runs-find textarea").first.press("Enter")
        page.wait_for_function("() => document.querySelectorAll('#cloze-runs-list tr[data-stem]').length === 18")
        page.locator("#cloze-runs-dim input").first.click()
        page.get_by_role("option", name="A", exact=True).first.click()
        page.wait_for_function("() => { const rows = [...document.querySelectorAll('#cloze-runs-list tr[data-stem]')];"
                               " return rows.length === 6 && rows.every(tr => tr.dataset.dim === 'A'); }")
        # exactly k runs right: k typed, then Enter
        right = page.locator("#cloze-runs-right input, #cloze-runs-right textarea").first
        right.fill("0")
        right.press("Enter")
        page.wait_for_function("() => { const rows = [...document.querySelectorAll('#cloze-runs-list tr[data-stem]')];"
                               " return rows.every(tr => tr.cells[1].innerText.startsWith('0/')) && "
                               "document.querySelector('#cloze-runs-list .runs-list').dataset.total !== '6'; }")
        box = page.locator("#cloze-runs-list").bounding_box()
        assert box and box["x"] >= 0 and box["x"] + box["width"] <= 1440
    finally:
        context.close()
