"""The window-search and Impact "What the runs answered" panels in the browser (1440x900, the
example data's run files): a picked query shows a row per run with the IoU the file's interval
scores and "k of N runs reach IoU ≥ 0.5"; a linked Impact frame lists "k of N runs say <region>"
as the files say."""
from __future__ import annotations

import json
from collections import Counter

from components.common.intervals import iou
from components.impact.data import load_annotations as load_impact
from components.window_search.data import load_annotations as load_grounding
from tests.browser.conftest import open_tab, pick_query, snap


def _lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _new_page(browser, url: str):
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    page.set_default_timeout(60_000)
    page.goto(url, wait_until="load", timeout=120_000)
    page.wait_for_selector("#app-tabs", timeout=120_000)
    return page


def test_a_picked_query_shows_every_runs_interval_and_iou(browser, app_url, example_data_dir):
    grounding = example_data_dir / "grounding"
    ann = load_grounding(grounding / "annotations.json")
    q = ann.queries[2]
    files = {p.stem: {line["qid"]: line for line in _lines(p)} for p in (grounding / "runs").glob("*.jsonl")}
    page = _new_page(browser, app_url)
    try:
        open_tab(page, "Window search")
        pick_query(page, q.qid)
        page.wait_for_selector(f"#ws-runs-panel .ws-runs[data-state='ready'][data-qid='{q.qid}']", timeout=120_000)
        reach = 0
        for name, lines in files.items():
            scored = lines[q.qid].get("interval")
            want = iou(tuple(scored), q.interval) if scored else 0.0
            reach += want >= 0.5
            row = page.locator(f"#ws-runs-panel .ws-runs-row[data-run='{name}']")
            assert f"IoU {want:.2f}" in row.inner_text()
            bar = row.locator(".ws-runs-bar").bounding_box()
            assert bar is not None and bar["width"] > 0 and bar["x"] + bar["width"] <= 1440
        text = page.locator("#ws-runs-panel .ws-runs-summary").inner_text()
        assert f"{reach} of {len(files)} runs reach IoU ≥ 0.5" in text
        snap(page, "ws-runs-panel-1440x900")
    finally:
        page.close()


def test_an_impact_frame_says_how_many_runs_name_each_region(browser, app_url, example_data_dir):
    impact = example_data_dir / "impact"
    item = load_impact(impact / "annotations.json").items[0]
    frame = sorted(item.frames)[0]
    spatial = [{(line["qid"], line["frame"]): line for line in _lines(p)} for p in (impact / "runs").glob("*/spatial_pred.jsonl")]
    counts = Counter(r for lines in spatial for r in dict.fromkeys(lines[(item.qid, frame)]["regions"]))
    page = _new_page(browser, f"{app_url.rstrip('/')}/?tab=impact&clip={item.qid}&frame={frame}")
    try:
        try:
            page.wait_for_selector(f"#impact-runs-panel .impact-runs-frame[data-frame='{frame}']", timeout=60_000)
        except Exception:
            snap(page, "impact-runs-debug")
            print("PANEL", page.locator("#impact-runs-panel").inner_html()[-1500:])
            raise
        shown = page.locator("#impact-runs-panel li[data-region]").all_inner_texts()
        assert len(shown) == len(counts)
        for region, n in counts.items():
            assert any(t.startswith(f"{n} of {len(spatial)} runs say {region}") for t in shown), shown
        assert page.locator("#impact-runs-panel .impact-runs-row[data-run]").count() == len(spatial)
        snap(page, "impact-runs-panel-1440x900")
    finally:
        page.close()
