"""Window search in the browser: a scripted OpenAI-compatible model plays decompose, reject,
expand, emit; then the user scrubs the movie to two windows and reads their checklists."""
from __future__ import annotations

import json
import re

from tests.browser.conftest import open_model_panel, open_tab, pick_query, snap
from tests.helpers.openai_server import ScriptedOpenAIServer


def _inspect(decision: str, holds: list[str], side=None, secs=None) -> str:
    return json.dumps({"statements": [{"id": f"s{i}", "note": f"{h} in these frames", "holds": h}
                                      for i, h in enumerate(holds, 1)],
                       "cooccurrence": f"{decision.lower()} summary", "decision": decision,
                       "confidence": 0.8, "expand_direction": side, "expand_seconds": secs})


SCRIPT = [
    json.dumps({"statements": [{"id": "s1", "text": "Lloyd appears"},
                               {"id": "s2", "text": "Harry appears"},
                               {"id": "s3", "text": "they walk on a snowy street at night"}],
                "cast": []}),
    _inspect("REJECT", ["true", "true", "false"]),
    _inspect("EXPAND", ["true", "true", "cutoff"], side="right", secs=30),
    _inspect("EMIT", ["true", "true", "true"]),
    "The event happens in 190 - 220 seconds.",
]


def _use_backend(page, spec: str, base_url: str) -> None:
    open_model_panel(page)
    box = page.locator("#settings-backend input").first
    box.fill(spec)
    box.press("Enter")
    page.locator("#settings-base-url textarea, #settings-base-url input").first.fill(base_url)
    page.locator("#settings-apply").click()
    page.wait_for_function("(s) => document.querySelector('#backend-badge')?.innerText.includes(s)",
                           arg=spec, timeout=60_000)


def _scrub_to(page, seconds: float) -> None:
    """Click the scrub bar where `seconds` lies, as a person drags the playhead there."""
    bar = page.locator("#ws-scrub input[type='range']").first
    bar.scroll_into_view_if_needed()
    maximum = float(bar.get_attribute("max") or 1)
    box = bar.bounding_box()
    page.mouse.click(box["x"] + box["width"] * min(1.0, seconds / maximum), box["y"] + box["height"] / 2)


def _checklist_for(page, rank: int) -> str:
    page.wait_for_function(
        "(r) => document.querySelector('#ws-checklist')?.innerText.includes('Window rank #' + r)",
        arg=rank, timeout=60_000)
    return page.locator("#ws-checklist").inner_text()


def test_scrubbing_shows_each_windows_checklist(page, example_data_dir):
    pair = json.loads((example_data_dir / "grounding" / "annotations.json").read_text())["pairs"][0]
    qid = pair["target"]["qid"]
    with ScriptedOpenAIServer(SCRIPT) as server:
        _use_backend(page, "openai:scripted-vlm", server.url)
        open_tab(page, "Window search")
        pick_query(page, qid)
        page.locator("#ws-run").click()
        page.wait_for_function(
            "() => /IoU/.test(document.querySelector('#ws-result')?.innerText || '')", timeout=240_000)
        # decompose + 3 inspect calls (reject, expand, emit) + localize
        assert len(server.requests) == 5
    snap(page, "window-search-after-run")
    timeline = page.locator("#ws-timeline").inner_html()
    starts = {int(r): float(s) for s, r in
              re.findall(r"data-start=[\"']([\d.]+)[\"'][^>]*?data-rank=[\"'](\d+)[\"']", timeline)}
    assert {1, 2} <= set(starts), timeline[:400]
    first = (_scrub_to(page, starts[1] + 60), _checklist_for(page, 1))[1]
    snap(page, "window-search-checklist-1")
    assert "rejected" in first and "✗" in first
    second = (_scrub_to(page, starts[2] + 60), _checklist_for(page, 2))[1]
    snap(page, "window-search-checklist-2")
    assert "accepted" in second and "✓" in second
    assert "before expansion [" in second and "△ cutoff" in second   # the expanded window's earlier row
    assert "B1:" not in second and "expanded" in second
    box = page.locator("#ws-timeline .ws-expanded").first
    assert "dashed" in box.evaluate("e => getComputedStyle(e).borderTopStyle")   # the outline is drawn
