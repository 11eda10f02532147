"""Two models side by side in the browser ("compare with", issue 19): two scripted OpenAI-compatible
servers on 127.0.0.1 that answer differently, chosen in the Model panel (the second on its own
server), and every tab shows both on the same item with the disagreement marked: window search's
two checklists per window and both windows on the one timeline, Cloze's two choices and raw
replies, Impact's two moment rows and the body painted where the two differ. Both are traced:
the recorded pair, picked under Replay in a new page, sets both sides and replays offline."""
from __future__ import annotations

import json

from tests.browser.conftest import open_model_panel, open_tab, pick_query, settle, snap
from tests.browser.test_talks_record_replay import _apply_and_wait, _pick_replay, _set_record, _type_backend
from tests.helpers.openai_server import ScriptedOpenAIServer
from tests.window_search.test_pairs import Model, _inspect


def _fill(page, elem_id: str, text: str) -> None:
    page.locator(f"#{elem_id} textarea, #{elem_id} input").first.fill(text)


def close_model_panel(page) -> None:
    """The Model panel slid away before a tab is picked (open, it may narrow the tab bar)."""
    if not page.evaluate("() => document.querySelector('#app-sidebar')?.classList.contains('open')"):
        return
    page.locator("#app-sidebar .toggle-button").first.click()
    page.wait_for_function("() => !document.querySelector('#app-sidebar')?.classList.contains('open')")
    settle(page, "#app-tabs")   # the sidebar has slid away


def _choose_models(page, first_url: str, second_url: str, *, record: bool = False) -> None:
    """The Model panel: model-a on the first server, compared with model-b on the second."""
    open_model_panel(page)
    _type_backend(page, "openai:model-a")
    _fill(page, "settings-base-url", first_url)
    page.locator("#settings-compare-panel").get_by_text("Compare with another backend").first.click()
    box = page.locator("#settings-compare input").first
    box.wait_for(state="visible")
    box.fill("openai:model-b")
    box.press("Enter")
    _fill(page, "settings-compare-base-url", second_url)
    _set_record(page, record)
    _apply_and_wait(page, "compare with: openai:model-b")
    close_model_panel(page)


def _texts(body: dict) -> str:
    return " ".join(part.get("text", "") for m in body.get("messages", []) for part in
                    (m["content"] if isinstance(m["content"], list) else [{"text": m["content"]}])
                    if isinstance(part, dict))


# -- window search: two checklists per window, both windows on the one timeline, recorded, replayed --
def _run_search(page, qid: str) -> dict:
    open_tab(page, "Window search")
    pick_query(page, qid)
    page.locator("#ws-run").click()
    page.wait_for_function("() => /Compared/.test(document.querySelector('#ws-calls')?.innerText || '')"
                           " && /IoU/.test(document.querySelector('#ws-result')?.innerText || '')", timeout=240_000)
    return {"checklist": page.locator("#ws-checklist").inner_text(),
            "calls": page.locator("#ws-calls").inner_text(),
            "timeline": page.locator("#ws-timeline").inner_html()}


def _fresh_page(browser, app_url):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(60_000)
    page.goto(app_url, wait_until="load", timeout=120_000)
    page.wait_for_selector("#app-tabs", timeout=120_000)
    return page


def test_window_search_side_by_side_recorded_and_replayed_offline(page, browser, app_url, tmp_path, monkeypatch):
    folder = tmp_path / "traces"
    monkeypatch.setenv("APP_TRACE_DIR", str(folder))
    first = Model(["Harry walks", "in an office"], [_inspect("REJECT", "false"), _inspect("EMIT", "true")], "0 - 10")
    second = Model(["Harry crosses a room", "it is daytime"], [_inspect("EMIT", "true"), _inspect("REJECT", "false")],
                   "5 - 20", reasoning="the office shows in the first window")
    with ScriptedOpenAIServer(first) as a, ScriptedOpenAIServer(second) as b:
        _choose_models(page, a.url, b.url, record=True)
        live = _run_search(page, "p0006_t")
        asked = (len(a.requests), len(b.requests))
        assert asked[0] == asked[1] >= 4   # every request to both
        assert [x["messages"] for x in a.requests] == [x["messages"] for x in b.requests]
        # the accepted window: both verdicts per statement, the one they differ on marked
        checklist = page.locator("#ws-checklist")
        assert "①" in live["checklist"] and "②" in live["checklist"] and "≠ differ" in live["checklist"]
        assert checklist.locator("tr.ws-differs").count() >= 1
        # both models' windows and predictions on the one timeline; the window they differ on marked
        timeline = page.locator("#ws-timeline")
        assert timeline.locator(".ws-bar-window-2").count() == 1 and timeline.locator(".ws-bar-pred-2").count() == 1
        assert timeline.locator("[data-differs='1']").count() >= 1
        assert "REJECT vs EMIT" in live["calls"] and "accepted window" in live["calls"]
        # the second model's reasoning, collapsed until opened
        reasoning = checklist.locator("details.vb-reasoning").first
        assert not reasoning.locator("pre").is_visible()
        reasoning.locator("summary").click()
        assert "the office shows in the first window" in reasoning.locator("pre").inner_text()
        snap(page, "compare-window-search")
        trace = next(folder.glob("session-*.jsonl"))
        lines = [json.loads(x) for x in trace.read_text().splitlines()]
        assert {x["backend"] for x in lines} == {"openai:model-a", "openai:model-b"}
        assert len({x["pair"] for x in lines}) == asked[0]   # both calls of a request share its pair id

        # on stage, in a new page: the recorded pair picked under Replay sets both sides
        stage = _fresh_page(browser, app_url)
        try:
            open_model_panel(stage)
            _pick_replay(stage, trace.name)
            assert stage.locator("#settings-backend input").first.input_value() == f"replay:{trace.name}#openai:model-a"
            assert stage.locator("#settings-compare input").first.input_value() == f"replay:{trace.name}#openai:model-b"
            _apply_and_wait(stage, f"compare with: replay:{trace.name}#openai:model-b")
            close_model_panel(stage)
            replayed = _run_search(stage, "p0006_t")
            snap(stage, "compare-window-search-replayed")
        finally:
            stage.close()
        assert (len(a.requests), len(b.requests)) == asked   # answered from the trace alone
    for key in ("checklist", "calls"):
        assert replayed[key].replace("replay:" + trace.name + "#", "") == live[key], key


# -- Cloze and Impact: both answers of the same question, clip and frame -------------------------------
def _answers(letter: str, moments: str, regions: str, reasoning: str = ""):
    def answer(body: dict):
        text = _texts(body)
        if "BEGINNING" in text:
            content = json.dumps({"answer": letter, "reason": f"{letter} continues the motion"})
        elif "Select all body regions" in text:
            content = regions
        else:
            content = moments
        return {"content": content, "reasoning_content": reasoning} if reasoning else content
    return answer


def test_cloze_and_impact_side_by_side(page, example_data_dir):
    item = json.loads((example_data_dir / "impact" / "annotations.json").read_text())["items"][0]
    fps = json.loads((example_data_dir / "impact" / "annotations.json").read_text()).get("fps", 24)
    m0, m1 = item["moments"][0]
    truth = item["frames"][str(m0)]["regions"]
    at = f"The event happens in {(m0 - 1) / fps:.2f} - {m1 / fps:.2f} seconds."
    early = "The event happens in 0.00 - 0.50 seconds."
    other = "head" if "head" not in truth else "left foot"
    with ScriptedOpenAIServer(_answers("B", at, ", ".join(truth))) as a, \
            ScriptedOpenAIServer(_answers("D", early, other, reasoning="looks like the start")) as b:
        _choose_models(page, a.url, b.url)

        # Cloze: both choices and both raw replies, the disagreement marked
        open_tab(page, "Cloze")
        page.locator("#cloze-mode").get_by_text("Model", exact=True).click()
        page.locator("#cloze-run-one").click()
        page.wait_for_function("() => document.querySelectorAll('#cloze-pair .cloze-pair-side').length === 2",
                               timeout=120_000)
        pair = page.locator("#cloze-pair")
        sides = pair.locator(".cloze-pair-side")
        assert sides.nth(0).get_attribute("data-letter") == "B" and sides.nth(1).get_attribute("data-letter") == "D"
        assert "B continues the motion" in sides.nth(0).inner_text()
        assert "D continues the motion" in sides.nth(1).inner_text()
        assert "≠ differ" in pair.inner_text() and "openai:model-a: B" in pair.inner_text()
        assert page.locator("#cloze-parsed textarea, #cloze-parsed input").first.input_value() == "B"
        assert not sides.nth(1).locator("details pre").is_visible()   # reasoning collapsed
        pair.scroll_into_view_if_needed()
        snap(page, "compare-cloze")

        # Impact: both moment rows, the time only one predicts outlined; the body painted where they differ
        open_tab(page, "Impact")
        # the tab's page-load view (drawn as the tab first opens) has named the clip: a Run before
        # it would answer "Choose a clip first."
        page.wait_for_function("() => (document.querySelector('#impact-regions')?.innerText || '').includes('truth')",
                               timeout=120_000)
        page.locator("#impact-run-temporal").click()
        page.wait_for_function("() => !!document.querySelector('#impact-timeline [data-row=\"second\"] .impact-block')",
                               timeout=120_000)
        timeline = page.locator("#impact-timeline")
        assert timeline.locator("[data-row='first'] .impact-block").count() == 1
        assert timeline.locator(".impact-only").count() >= 2 and "≠ differ" in timeline.inner_text()
        page.locator("#impact-run-spatial").click()
        page.wait_for_function("() => (document.querySelector('#impact-status')?.innerText || '').includes('② ')",
                               timeout=120_000)
        paint = page.locator("#impact-paint")
        paint.wait_for(state="visible")
        number = page.locator("#impact-frame input[type='number']").first
        number.fill(str(m0))
        number.press("Enter")
        page.wait_for_function("() => (document.querySelector('#impact-regions')?.innerText || '').includes('only ②')",
                               timeout=90_000)
        assert "only ② openai:model-b" in page.locator("#impact-legend").inner_text()
        assert "≠ differ" in page.locator("#impact-beside").inner_text()
        snap(page, "compare-impact-difference")
        paint.get_by_text("② vs the truth").click()
        page.wait_for_function("() => (document.querySelector('#impact-legend')?.innerText || '').includes('hit')",
                               timeout=60_000)
        snap(page, "compare-impact-second-vs-truth")
