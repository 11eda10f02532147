"""The Impact table of every run (components/impact/runs.py) and `eval impact-temporal|spatial
--items` against the evals."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.runs import collect_impact_runs
from tests.helpers.runs import mean_score, read_item_rows
from components.impact.data import load_annotations
from components.impact.runs import ImpactRuns
from tests.runs.test_cloze_runs import run_cli
from tests.runs.test_grounding_runs import write_jsonl


@pytest.fixture
def data(tmp_path, impact_examples) -> Path:
    """<data>/impact/runs/{good,poor}/ (run impact's layout) and a loose spatial file."""
    ann = load_annotations(impact_examples / "annotations.json")
    gt = [json.loads(line) for line in (impact_examples / "temporal_gt.jsonl").read_text().splitlines() if line]
    runs = tmp_path / "data" / "impact" / "runs"
    write_jsonl(runs / "good" / "temporal_pred.jsonl",
                [{"qid": g["qid"], "pred_relevant_windows": [[*w, 1.0] for w in g["relevant_windows"]]} for g in gt])
    poor = []
    for i, g in enumerate(gt):
        if i == 0:
            poor.append({"qid": g["qid"], "pred_relevant_windows": [[0, 1, 1.0]], "status": "unparsed"})
        elif i == 1:
            continue
        else:
            s, e = g["relevant_windows"][0]
            poor.append({"qid": g["qid"], "pred_relevant_windows": [[s - 0.1, e + 0.4, 0.9], [0, 0.5, 0.2]]})
    write_jsonl(runs / "poor" / "temporal_pred.jsonl", poor)
    write_jsonl(runs / "good" / "temporal_gt.jsonl", gt)   # derived by run impact: no run
    good, poor_s = [], []
    for item in ann.items:
        for frame, fa in item.frames.items():
            good.append({"key": f"{item.qid}#{frame}", "qid": item.qid, "frame": frame, "regions": fa.regions})
            poor_s.append({"qid": item.qid, "frame": frame, "regions": ["left upper arm", *fa.regions[:1]]})
    poor_s[0] = {"qid": poor_s[0]["qid"], "frame": poor_s[0]["frame"], "regions": [], "error": "unparsed: no list"}
    write_jsonl(runs / "good" / "spatial_pred.jsonl", good)
    write_jsonl(runs / "poor" / "spatial_pred.jsonl", poor_s[:-1])
    write_jsonl(runs / "armsonly.jsonl", [{"qid": r["qid"], "frame": r["frame"], "regions": ["left upper arm"]}
                                          for r in good])
    return tmp_path / "data"


def test_clip_moments_and_region_counts(data, impact_examples):
    ann = load_annotations(impact_examples / "annotations.json")
    loaded = collect_impact_runs(data, cache=None)
    assert loaded.refusals == []
    assert sorted(loaded.runs) == ["armsonly", "good:spatial", "good:temporal", "poor:spatial", "poor:temporal"]
    table = ImpactRuns(loaded.runs, ann)
    assert table.names == ["armsonly", "good", "poor"]
    first = ann.items[0]
    clip = table.clip(first.qid)
    moments = {m.run: m for m in clip.moments}
    assert moments["poor"].status == "unparsed" and moments["poor"].windows == []
    assert [w[:2] for w in moments["good"].windows] == [tuple(w) for w in first.gt_record()["relevant_windows"]]
    assert {m.run: m.status for m in table.clip(ann.items[1].qid).moments}["poor"] == "missing"
    frame = min(first.frames)
    f = clip.frames[frame]
    assert f.truth == first.frames[frame].regions
    # poor's first frame is an unparsed answer: it names nothing
    assert {a.run: a.status for a in f.answers}["poor"].startswith("unparsed")
    assert f.counts()["left upper arm"] == 1 and f.counts()[f.truth[0]] == 1
    later = clip.frames[max(first.frames)]
    assert later.counts()["left upper arm"] == 2
    assert later.summary("left upper arm") == "2 of 3 runs say left upper arm"


def test_temporal_items_mean_is_the_eval_map(data, impact_examples, tmp_path, capsys):
    gt = impact_examples / "temporal_gt.jsonl"
    runs = data / "impact" / "runs"
    out = tmp_path / "t.csv"
    # poor misses a line: --partial leaves it out (no score in its row), as eval's mAP@0.3 does
    code, printed, _ = run_cli(["eval", "impact-temporal", "--gt", str(gt), "--pred", str(runs / "poor"),
                                "--json", "--partial", "--items", str(out), str(runs / "good")], capsys)
    assert code == 0
    rows = read_item_rows(out)
    assert {r["run"] for r in rows} == {"poor", "good"}
    for name in ("poor", "good"):
        _, one, _ = run_cli(["eval", "impact-temporal", "--gt", str(gt), "--pred", str(runs / name), "--json",
                             "--partial"], capsys)
        assert mean_score(rows, name) == pytest.approx(json.loads(one)["mAP@0.3"])
    assert mean_score(rows, "good") == pytest.approx(100.0)
    assert {r["source"] for r in rows if r["run"] == "poor"} >= {"unparsed", "missing", "ok"}
    assert all(r["score"] is None for r in rows if r["source"] in ("unparsed", "missing"))


def test_spatial_items_mean_is_the_eval_f1(data, impact_examples, tmp_path, capsys):
    ann = impact_examples / "annotations.json"
    runs = data / "impact" / "runs"
    out = tmp_path / "s.jsonl"
    code, _, err = run_cli(["eval", "impact-spatial", "--annotations", str(ann), "--pred",
                            str(runs / "poor" / "spatial_pred.jsonl"), "--json", "--items", str(out),
                            str(runs / "armsonly.jsonl"), str(runs / "good")], capsys)
    assert code == 0
    assert "temporal answers; left out" in err   # good/temporal_pred.jsonl is no spatial run
    rows = read_item_rows(out)
    for name, path in (("poor", runs / "poor" / "spatial_pred.jsonl"), ("armsonly", runs / "armsonly.jsonl"),
                       ("good", runs / "good" / "spatial_pred.jsonl")):
        _, one, _ = run_cli(["eval", "impact-spatial", "--annotations", str(ann), "--pred", str(path), "--json"],
                            capsys)
        assert mean_score(rows, name) == pytest.approx(json.loads(one)["F1"])
    assert {r["source"] for r in rows if r["run"] == "poor"} >= {"missing", "ok"}
