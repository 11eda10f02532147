"""The window-search and Impact "What the runs answered" panels in the browser (1440x900, the
example data's run files): a picked query shows a row per run with the IoU the file's interval
scores and "k of N runs reach IoU ≥ 0.5"; a linked Impact frame lists "k of N runs say <region>"
as the files say, and the runs panel's toggle paints those counts on the 3D body (legend "k of N
runs", the annotated regions striped green), measured on the canvas."""
from __future__ import annotations

import json
from collections import Counter

import numpy as np

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


def _red_and_green(page, selector: str) -> tuple[int, int]:
    """Pixels of the element's screenshot that are deep red (the heat of most runs: green under a
    third of red; the truth's amber is not) and that are green (the truth's stripes)."""
    from io import BytesIO

    from PIL import Image

    image = Image.open(BytesIO(page.locator(selector).first.screenshot())).convert("RGB")
    pixels = np.asarray(image, dtype=int)
    r, g, b = pixels[..., 0], pixels[..., 1], pixels[..., 2]
    red = (r > 60) & (g < 0.35 * r) & (b < 0.6 * r)
    green = (g > 60) & (g > 1.4 * r) & (g > 1.4 * b)
    return int(red.sum()), int(green.sum())


def test_the_runs_heat_paints_how_many_runs_named_each_region_on_the_body(browser, app_url, example_data_dir):
    impact = example_data_dir / "impact"
    item = load_impact(impact / "annotations.json").items[0]
    spatial = [{(line["qid"], line["frame"]): line for line in _lines(p)} for p in (impact / "runs").glob("*/spatial_pred.jsonl")]
    runs = len(spatial)

    def counts(frame: int) -> Counter:
        return Counter(r for lines in spatial for r in dict.fromkeys(lines[(item.qid, frame)]["regions"]))

    # a frame where some region is named by two runs or more (painted deep red)
    frame = next(f for f in sorted(item.frames) if max(counts(f).values(), default=0) >= 2)
    page = _new_page(browser, f"{app_url.rstrip('/')}/?tab=impact&clip={item.qid}&frame={frame}")
    canvas = "#impact-body3d canvas"
    drawn = ("() => { const c = document.querySelector('#impact-body3d canvas');"
             " return !!c && !!c.dataset.draws && !!c.dataset.key && c.dataset.key === c.dataset.want; }")
    try:
        page.wait_for_selector(f"#impact-runs-panel .impact-runs-frame[data-frame='{frame}']", timeout=90_000)
        page.wait_for_function(drawn, timeout=120_000)
        page.locator(canvas).scroll_into_view_if_needed()
        before_key = page.locator(canvas).get_attribute("data-key")
        red_before, green_before = _red_and_green(page, canvas)
        page.locator("#impact-runs-heat input[type='checkbox']").check()
        page.wait_for_function("(text) => (document.querySelector('#impact-legend')?.innerText || '').includes(text)",
                               arg=f"{runs} of {runs} runs", timeout=60_000)
        legend = page.locator("#impact-legend").inner_text()
        assert all(f"{k} of {runs} runs" in legend for k in range(1, runs + 1)) and "annotated (green stripes)" in legend
        regions = page.locator("#impact-regions").inner_text()
        for region, n in counts(frame).items():
            assert f"{n} of {runs} runs say {region}" in regions, regions
        page.wait_for_function(f"(old) => ({drawn})() && document.querySelector('{canvas}').dataset.key !== old",
                               arg=before_key, timeout=60_000)
        page.wait_for_timeout(300)   # the drawn frame reaches the screen
        red_after, green_after = _red_and_green(page, canvas)
        snap(page, "impact-runs-heat-1440x900")
        assert red_after > 200 and red_after > 5 * (red_before + 1), (red_before, red_after)
        assert green_after > 50 and green_after > 5 * (green_before + 1), (green_before, green_after)
    finally:
        page.close()
