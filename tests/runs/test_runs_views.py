"""The window-search and Impact run panels' HTML (components/{window_search,impact}/runs_view.py)
on the example data's own run files, checked against those files: each run's IoU and source,
"k of N runs reach IoU ≥ 0.5", the partner's moment, and "k of N runs say <region>" at a frame."""
from __future__ import annotations

import json
import re
from collections import Counter
from html import unescape

from tests.helpers.runs import collect_grounding_runs, collect_impact_runs
from components.common.intervals import iou
from components.impact import runs_view as impact_view
from components.impact.data import load_annotations as load_impact
from components.impact.runs import ImpactRuns
from components.window_search import runs_view as ws_view
from components.window_search.data import load_annotations as load_grounding
from components.window_search.runs import GroundingRuns


def _lines(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_the_example_data_has_runs_for_every_tab(grounding_examples, impact_examples, cloze_examples):
    assert len(list((grounding_examples / "runs").glob("*.jsonl"))) == 3
    assert len(list((impact_examples / "runs").glob("*/temporal_pred.jsonl"))) == 3
    assert len(list((cloze_examples / "results").glob("example-model*_results.json"))) == 5


def test_window_search_rows_match_the_run_files(grounding_examples):
    ann = load_grounding(grounding_examples / "annotations.json")
    loaded = collect_grounding_runs(grounding_examples.parent)
    assert loaded.refusals == []
    table = GroundingRuns(loaded.runs, ann)
    by_qid = {q.qid: q for q in ann.queries}
    files = {p.stem: {line["qid"]: line for line in _lines(p)} for p in (grounding_examples / "runs").glob("*.jsonl")}
    for q in ann.queries:
        html = ws_view.query_runs_html(table.query(q.qid), 0.0)
        reach = on_partner = 0
        for name, lines in files.items():
            line = lines[q.qid]
            scored = line.get("interval")   # a fallback's interval is shown, never scored
            want = iou(tuple(scored), q.interval) if scored else 0.0
            partner = iou(tuple(scored), by_qid[q.partner_qid].interval) if scored else 0.0
            reach += want >= 0.5
            on_partner += partner > want
            row = re.search(rf"<div class='ws-runs-row' data-run='{name}'([^>]*)>(.*?)</span></div>", html)
            assert row, (name, q.qid)
            assert f"data-iou='{want:.4f}'" in row.group(1)
            source = line["source"]
            assert f"IoU {want:.2f} · {source}" in unescape(row.group(2))
            assert ("(fallback: scored 0)" in row.group(2)) == source.startswith("fallback:")
        summary = f"{reach} of {len(files)} runs reach IoU ≥ 0.5; {on_partner} put it on its partner's moment"
        assert summary in unescape(html)


def test_impact_frame_counts_match_the_run_files(impact_examples):
    ann = load_impact(impact_examples / "annotations.json")
    loaded = collect_impact_runs(impact_examples.parent)
    assert loaded.refusals == []
    table = ImpactRuns(loaded.runs, ann)
    spatial = {p.parent.name: {(line["qid"], line["frame"]): line for line in _lines(p)}
               for p in (impact_examples / "runs").glob("*/spatial_pred.jsonl")}
    checked = 0
    for item in ann.items:
        for frame in sorted(item.frames)[:2]:
            html = impact_view.clip_runs_html(table.clip(item.qid), item.moments_seconds(),
                                              item.num_frames / item.fps, frame)
            counts = Counter(r for lines in spatial.values() for r in dict.fromkeys(lines[(item.qid, frame)]["regions"]))
            for region, n in counts.items():
                assert f"<li data-region='{region}' data-count='{n}'>{n} of {len(spatial)} runs say {region}" in html
            assert html.count("<li data-region=") == len(counts)
            for name in spatial:
                assert f"data-run='{name}'" in html
            checked += 1
    assert checked >= 2


def test_an_unannotated_frame_says_so(impact_examples):
    ann = load_impact(impact_examples / "annotations.json")
    item = ann.items[0]
    free = next(f for f in range(1, item.num_frames + 1) if f not in item.frames)
    table = ImpactRuns(collect_impact_runs(impact_examples.parent).runs, ann)
    html = impact_view.clip_runs_html(table.clip(item.qid), item.moments_seconds(), item.num_frames / item.fps, free)
    assert f"Frame {free} is not annotated" in html
